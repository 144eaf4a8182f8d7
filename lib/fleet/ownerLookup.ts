/**
 * Where the owners are, as one replica's forwarding reads the fleet's directory: an owner's record
 * (kept a moment, looked at again a moment later when a first look finds none), whether a replica
 * is a member now, the ready replicas a draining replica hands new work to (in turn), and the watch
 * that tells a forward under way its owner is gone. Not here: what a request's owner is (its
 * requestState or session id says), or the forwarding itself (forwarding.ts).
 */
import type { FleetDirectory, ReplicaRecord } from './directory.ts';

/** How long after a first look finds no owner the directory is looked at again. */
const LOOK_AGAIN_MS = 250;

/** How long the list of ready replicas a draining replica hands work to is kept. */
const PEERS_FRESH_MS = 1000;

/** How long a replica's record read from the directory is used before it is read again. */
const RECORD_FRESH_MS = 1000;

/** Most replicas' records remembered at once. */
const MAX_RECORDS = 1024;

/** One replica's lookups of the others in its fleet's directory. */
export class OwnerLookup {
  readonly #id: string;
  readonly #directory: Pick<FleetDirectory, 'lookup' | 'replicas'>;
  readonly #checkMs: number;
  #peers: { at: number; ids: Promise<string[]> } | undefined;
  #turn = 0;
  /** The records `record` read lately, by replica. */
  readonly #records = new Map<string, { record: ReplicaRecord; at: number }>();
  /** The owners watched for forwards under way: whom to tell when each is gone. */
  readonly #watches = new Map<string, Set<() => void>>();

  /** The lookups of replica `id` in `directory`, watching an owner every `checkMs`. */
  constructor(id: string, directory: Pick<FleetDirectory, 'lookup' | 'replicas'>, checkMs: number) {
    this.#id = id;
    this.#directory = directory;
    this.#checkMs = checkMs;
  }

  /**
   * Asks the directory, every `checkMs` while the forward lasts, whether `owner` is alive; `lost`
   * once it is not. The forwards to one owner share one check, whose timer stops at the first tick
   * that finds none under way (so forwards one after another do not each start one).
   */
  watch(owner: string, lost: () => void): () => void {
    const watching = this.#watches.get(owner) ?? this.#check(owner);
    // Each forward is told once.
    const tell = (): void => {
      watching.delete(tell);
      lost();
    };
    watching.add(tell);
    return () => void watching.delete(tell);
  }

  /** Starts the check of `owner` every `checkMs`: the forwards it tells when it is gone, until a tick finds none. */
  #check(owner: string): Set<() => void> {
    const watching = new Set<() => void>();
    this.#watches.set(owner, watching);
    let checking = false;
    const timer = setInterval(() => {
      if (watching.size === 0) {
        clearInterval(timer);
        this.#watches.delete(owner);
        return;
      }
      if (checking) return;
      checking = true;
      this.#directory.lookup(owner).then(
        (record) => {
          checking = false;
          if (!record) for (const tell of [...watching]) tell();
        },
        () => (checking = false),
      );
    }, this.#checkMs);
    timer.unref();
    return watching;
  }

  /** A ready replica other than this one, in turn, from a list at most `PEERS_FRESH_MS` old. */
  async readyPeer(): Promise<string | undefined> {
    if (!this.#peers || Date.now() - this.#peers.at > PEERS_FRESH_MS) {
      const ids = this.#directory.replicas().then(
        (all) => all.filter((r) => r.ready && r.id !== this.#id).map((r) => r.id),
        () => [],
      );
      this.#peers = { at: Date.now(), ids };
    }
    const ids = await this.#peers.ids;
    return ids.length === 0 ? undefined : ids[this.#turn++ % ids.length];
  }

  /** The record of another ready replica than the one at `advertise`, from a fresh list (the one picked has just gone). */
  async freshPeer(advertise: string | undefined): Promise<ReplicaRecord | undefined> {
    this.#peers = undefined;
    const next = await this.readyPeer();
    const record = next === undefined ? undefined : await this.#directory.lookup(next).catch(() => undefined);
    return record && record.advertise !== advertise ? record : undefined;
  }

  /** The record of `owner` read within the last moment, if one was. */
  freshRecord(owner: string): ReplicaRecord | undefined {
    const known = this.#records.get(owner);
    return known !== undefined && Date.now() - known.at < RECORD_FRESH_MS ? known.record : undefined;
  }

  /**
   * The directory's record of `owner`, looked at twice a moment apart (a replica that has just
   * started may not have registered yet); `undefined` when it is not in the fleet, or
   * `unreachable` when the directory (the fleet's Redis) cannot be asked: the owner may well be
   * alive, and the caller is told to try again, not that its call is gone.
   */
  async record(owner: string): Promise<ReplicaRecord | undefined | 'unreachable'> {
    // A record read within the last moment is taken as it is: retries of one client's calls come
    // in bursts, and a replica's address does not change while it lives (a gone one is found out
    // by the forward itself, as one that died since the lookup would be).
    const known = this.freshRecord(owner);
    if (known !== undefined) return known;
    let failed = false;
    const look = () =>
      this.#directory.lookup(owner).catch(() => {
        failed = true;
        return undefined;
      });
    const record = (await look()) ?? (failed ? undefined : await new Promise((r) => setTimeout(r, LOOK_AGAIN_MS)).then(look));
    if (record) {
      if (this.#records.size >= MAX_RECORDS) this.#records.clear();
      this.#records.set(owner, { record, at: Date.now() });
      return record;
    }
    this.#records.delete(owner);
    return failed ? 'unreachable' : undefined;
  }

  /** Whether `replica` is in the fleet's directory now (its record read within a second counts). */
  async isMember(replica: string): Promise<boolean> {
    const record = await this.record(replica);
    return record !== undefined && record !== 'unreachable';
  }
}
