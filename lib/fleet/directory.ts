/**
 * The fleet's directory of replicas, in Redis: each replica registers its id and the address the
 * others reach it at, and refreshes the record on a heartbeat; a record lives a few heartbeats
 * (its TTL), so a replica that crashed or lost Redis drops out by itself. Lookups are one GET. A
 * record is signed with the fleet's hop secret: one that does not verify (written by anyone else
 * who can write to the fleet's Redis) is not a replica, so no forward goes to an address it names.
 * Not here: forwarding to a replica, or what it owns.
 */
import * as v from 'valibot';
import type { FleetKeys } from './fleetKeys.ts';
import type { FleetRedis } from './fleetRedis.ts';
import type { HopSecrets } from './hopSecrets.ts';

/** What the directory says of a replica. */
export const ReplicaRecordSchema = v.object({
  id: v.string(),
  /** The address other replicas reach it at (`http://host:port`). */
  advertise: v.string(),
  /** When it registered (ms since the epoch). */
  startedAt: v.number(),
  /** False once it drains: it serves what it owns, the balancer should send it nothing new. */
  ready: v.boolean(),
});
/** A replica as the directory records it. */
export type ReplicaRecord = v.InferOutput<typeof ReplicaRecordSchema>;

/** A record as Redis holds it: the record and its signature. */
const SignedRecordSchema = v.object({ ...ReplicaRecordSchema.entries, signature: v.string() });

/** What a record's signature covers. */
const signed = (r: ReplicaRecord): string => `replica\n${r.id}\n${r.advertise}\n${r.startedAt}\n${r.ready}`;

/** How often a replica says it is alive, and how long its record outlives the last time. */
export interface HeartbeatOptions {
  /** Between two refreshes (default 1 s). */
  readonly heartbeatMs?: number;
  /** How long a record lives without a refresh (default 3 heartbeats): how soon a dead replica is known as dead. */
  readonly ttlMs?: number;
  /** Told when a refresh failed (Redis unreachable); the next one tries again. */
  readonly onError?: (error: unknown) => void;
}

/** Most replica records a listing reads. */
const MAX_LISTED = 1024;

/** The replicas of one fleet. */
export class FleetDirectory {
  readonly #redis: FleetRedis;
  readonly #keys: FleetKeys;
  readonly #secrets: HopSecrets;
  readonly #heartbeatMs: number;
  readonly #ttlMs: number;
  readonly #onError: ((error: unknown) => void) | undefined;
  #self: ReplicaRecord | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** `secrets` sign this replica's record and verify the others'. */
  constructor(redis: FleetRedis, keys: FleetKeys, secrets: HopSecrets, options: HeartbeatOptions = {}) {
    this.#redis = redis;
    this.#keys = keys;
    this.#secrets = secrets;
    this.#heartbeatMs = Math.max(50, options.heartbeatMs ?? 1000);
    this.#ttlMs = Math.max(this.#heartbeatMs * 2, options.ttlMs ?? this.#heartbeatMs * 3);
    this.#onError = options.onError;
  }

  /** How long a replica's record outlives its last heartbeat. */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** Registers this replica and keeps its record alive until `leave()`. */
  async join(self: { id: string; advertise: string }): Promise<ReplicaRecord> {
    this.#self = { id: self.id, advertise: self.advertise, startedAt: Date.now(), ready: true };
    await this.#write();
    clearInterval(this.#timer);
    this.#timer = setInterval(() => void this.#write().catch((e) => this.#onError?.(e)), this.#heartbeatMs);
    this.#timer.unref();
    return this.#self;
  }

  /** Says whether this replica takes new calls (false while it drains). */
  async setReady(ready: boolean): Promise<void> {
    if (!this.#self || this.#self.ready === ready) return;
    this.#self = { ...this.#self, ready };
    await this.#write();
  }

  /** The record of replica `id`, if it is alive (and signed by the fleet). */
  async lookup(id: string): Promise<ReplicaRecord | undefined> {
    const record = await this.#verified(await this.#redis.get(this.#keys.replica(id)));
    return record?.id === id ? record : undefined;
  }

  /** Every live replica (at most 1,024), in no particular order. */
  async replicas(): Promise<ReplicaRecord[]> {
    const keys: string[] = [];
    for await (const batch of this.#redis.scanIterator({ MATCH: this.#keys.replicas, COUNT: 100 })) {
      keys.push(...batch);
      if (keys.length >= MAX_LISTED) break;
    }
    if (keys.length === 0) return [];
    const values = await this.#redis.mGet(keys.slice(0, MAX_LISTED));
    const records = await Promise.all(values.map((text) => this.#verified(text)));
    return records.filter((r): r is ReplicaRecord => r !== undefined);
  }

  /** Stops the heartbeat and removes this replica's record. Idempotent. */
  async leave(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const self = this.#self;
    this.#self = undefined;
    if (self && this.#redis.isOpen) await this.#redis.del(this.#keys.replica(self.id)).catch(() => {});
  }

  /**
   * Writes this replica's record, signed with the secret Redis holds now (written again first
   * where a Redis restarted without persistence lost it).
   */
  async #write(): Promise<void> {
    if (!this.#self) return;
    await this.#secrets.refresh();
    const self = this.#self;
    if (!self) return;
    await this.#redis.set(this.#keys.replica(self.id), JSON.stringify({ ...self, signature: this.#secrets.sign(signed(self)) }), {
      PX: this.#ttlMs,
    });
  }

  /** The record `text` holds, when it is one and its signature verifies. */
  async #verified(text: string | null | undefined): Promise<ReplicaRecord | undefined> {
    if (!text) return undefined;
    let parsed;
    try {
      parsed = v.safeParse(SignedRecordSchema, JSON.parse(text));
    } catch {
      return undefined;
    }
    if (!parsed.success) return undefined;
    const { signature, ...record } = parsed.output;
    return (await this.#secrets.verify(signed(record), signature)) ? record : undefined;
  }
}
