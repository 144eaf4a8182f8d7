/**
 * Forwarding to the replica that owns what a request continues: a parked call (its sealed
 * requestState names the owner) or a legacy session (its `Mcp-Session-Id` does). The directory
 * gives the owner's address (one Redis GET), and the request goes there signed as a hop of this
 * fleet; the owner's answer (JSON, or an event stream with progress and logs) is streamed back as
 * it comes, and a client that goes away cancels it on the owner. An owner gone (no record,
 * unreachable, or its heartbeat stopped while it answered) ends in one defined answer: the error
 * that tells a client to send its call again without requestState, or a legacy session's 404.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { urlToHttpOptions } from 'node:url';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { JsonRpcRequest, RequestId } from '../core/jsonrpc.ts';
import { HOP_HEADER, type ForwardedFor, type Forwarding, type HopRequest } from '../fronts/served.ts';
import { stateOwner } from '../state/requestState.ts';
import type { Keyring } from '../state/keyring.ts';
import type { FleetDirectory, ReplicaRecord } from './directory.ts';
import type { HopSecrets } from './hopSecrets.ts';
import { CARRIED_BACK, hopMessage, hopTarget, NOT_CARRIED, pathOf, UNSIGNED, type HopTarget } from './hops.ts';
import {
  answerWatch,
  asResponse,
  brokenEvents,
  goneReply,
  passedOn,
  requestIds,
  unreachableReply,
  writeReply,
  type Reply,
} from './forwardReplies.ts';

/** How a fleet forwards. */
export interface ForwardingOptions {
  /**
   * How often the directory is asked whether the owner of a forward still under way is alive
   * (default 1 s): an owner whose record expired (its heartbeat stopped) is gone, and the forward
   * ends with the defined answer, within this plus the directory's TTL.
   */
  readonly ownerCheckMs?: number;
  /**
   * How far a hop's time may be from the receiving replica's clock (default 30 s, for clocks that
   * differ a little): a hop is taken once, within this.
   */
  readonly hopMaxAgeMs?: number;
}

/** What forwarding needs of its replica's fleet. */
export interface ForwardingFleet {
  readonly id: string;
  readonly keyring: Keyring;
  /** What hops are signed and verified with. */
  readonly secrets: Pick<HopSecrets, 'sign' | 'verify'>;
  readonly directory: Pick<FleetDirectory, 'lookup' | 'replicas'>;
  /**
   * Settles once the directory lists this replica: the others take its hops only then, so a hop
   * waits for it (a replica that has just started may take requests before it has registered).
   */
  readonly listed?: Promise<void>;
}

/** How long a hop waits for its replica to be listed before it goes anyway (and is refused). */
const LISTED_WAIT_MS = 5000;

/** What a fleet's forwarding has done so far. */
export interface ForwardCounts {
  /** Requests forwarded to their owner and answered by it. */
  readonly forwarded: number;
  /** Requests whose owner was gone. */
  readonly ownerGone: number;
}

/** A fleet's forwarding, with its counts. */
export interface FleetForwarding extends Forwarding {
  counts(): ForwardCounts;
}

/** The separator between a legacy session id's owner and its own part (replica ids never hold it). */
const SESSION_SEPARATOR = '.';

/** How long after a first look finds no owner the directory is looked at again. */
const LOOK_AGAIN_MS = 250;

/** How long the list of ready replicas a draining replica hands work to is kept. */
const PEERS_FRESH_MS = 1000;

/** Most hops remembered as taken (each for its window); past it, hops are refused until some expire. */
const MAX_TAKEN = 100_000;

/** How long a replica's record read from the directory is used before it is read again. */
const RECORD_FRESH_MS = 1000;

/** Most replicas' records remembered at once. */
const MAX_RECORDS = 1024;

/** Connections to the other replicas, kept a moment between hops (shorter than a replica keeps them). */
const httpAgent = new HttpAgent({ keepAlive: true, timeout: 4000 });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: 4000 });

/** The forwarding of one replica of `fleet`. */
export function fleetForwarding(fleet: ForwardingFleet, options: ForwardingOptions = {}): FleetForwarding {
  return new FleetForwarder(fleet, options);
}

/** One replica's forwarding: where owners are, the hops it signs and takes, and its counts. */
class FleetForwarder implements FleetForwarding {
  readonly #fleet: ForwardingFleet;
  readonly #checkMs: number;
  readonly #maxAge: number;
  #peers: { at: number; ids: Promise<string[]> } | undefined;
  #turn = 0;
  #forwarded = 0;
  #ownerGone = 0;
  /** The records `ownerRecord` read lately, by replica. */
  readonly #records = new Map<string, { record: ReplicaRecord; at: number }>();
  // A hop's nonce makes its signature one of a kind: this process's random part and a count
  // (drawing random bytes for each hop cost more than signing it).
  readonly #noncePrefix = randomBytes(9).toString('base64url');
  #nonces = 0;
  /** Where hops to `advertise` for the request target `requestTarget` go, and the path they sign: worked out once for each pair. */
  readonly #targets = new Map<string, HopTarget>();
  #listedOrLate: Promise<void> | undefined;
  /** Whether this replica is known to be listed (or has waited for it as long as a hop does). */
  #listedNow: boolean;
  /** Hops taken, by signature, each with when its window ends (oldest first). */
  readonly #taken = new Map<string, number>();

  constructor(fleet: ForwardingFleet, options: ForwardingOptions) {
    this.#fleet = fleet;
    this.#checkMs = Math.max(50, options.ownerCheckMs ?? 1000);
    this.#maxAge = options.hopMaxAgeMs ?? 30_000;
    this.#listedNow = fleet.listed === undefined;
  }

  /** Asks the directory, every `checkMs` while the forward lasts, whether `owner` is alive; `lost` once it is not. */
  #watchOwner(owner: string, lost: () => void): () => void {
    let checking = false;
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      this.#fleet.directory.lookup(owner).then(
        (record) => {
          checking = false;
          if (!record) lost();
        },
        () => (checking = false),
      );
    }, this.#checkMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** A ready replica other than this one, in turn, from a list at most `PEERS_FRESH_MS` old. */
  async #readyPeer(): Promise<string | undefined> {
    if (!this.#peers || Date.now() - this.#peers.at > PEERS_FRESH_MS) {
      const ids = this.#fleet.directory.replicas().then(
        (all) => all.filter((r) => r.ready && r.id !== this.#fleet.id).map((r) => r.id),
        () => [],
      );
      this.#peers = { at: Date.now(), ids };
    }
    const ids = await this.#peers.ids;
    return ids.length === 0 ? undefined : ids[this.#turn++ % ids.length];
  }

  /** The record of another ready replica than the one at `advertise`, from a fresh list (the one picked has just gone). */
  async #freshPeer(advertise: string | undefined) {
    this.#peers = undefined;
    const next = await this.#readyPeer();
    const record = next === undefined ? undefined : await this.#fleet.directory.lookup(next).catch(() => undefined);
    return record && record.advertise !== advertise ? record : undefined;
  }

  /** The record of `owner` read within the last moment, if one was. */
  #freshRecord(owner: string): ReplicaRecord | undefined {
    const known = this.#records.get(owner);
    return known !== undefined && Date.now() - known.at < RECORD_FRESH_MS ? known.record : undefined;
  }

  /**
   * The directory's record of `owner`, looked at twice a moment apart (a replica that has just
   * started may not have registered yet); `undefined` when it is not in the fleet, or
   * `unreachable` when the directory (the fleet's Redis) cannot be asked: the owner may well be
   * alive, and the caller is told to try again, not that its call is gone.
   */
  async #ownerRecord(owner: string): Promise<ReplicaRecord | undefined | 'unreachable'> {
    // A record read within the last moment is taken as it is: retries of one client's calls come
    // in bursts, and a replica's address does not change while it lives (a gone one is found out
    // by the forward itself, as one that died since the lookup would be).
    const known = this.#freshRecord(owner);
    if (known !== undefined) return known;
    let failed = false;
    const look = () =>
      this.#fleet.directory.lookup(owner).catch(() => {
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

  #targetOf(advertise: string, requestTarget: string | undefined): HopTarget {
    const key = `${advertise} ${requestTarget ?? ''}`;
    let known = this.#targets.get(key);
    if (known === undefined) {
      const url = hopTarget(advertise, requestTarget);
      known = { url, path: pathOf(url), options: urlToHttpOptions(url) };
      if (this.#targets.size >= MAX_RECORDS) this.#targets.clear();
      this.#targets.set(key, known);
    }
    return known;
  }

  /**
   * The hop header's value for `request` sent from this replica to replica `to`, with the headers
   * `carried` (names in lower case): `from.to.at.nonce.signature.names`, the names it signs last.
   */
  #hopValue(to: string, request: Omit<HopRequest, 'header'>, carried: ReadonlyMap<string, string>): string {
    const at = Date.now();
    const nonce = `${this.#noncePrefix}${(this.#nonces++).toString(36)}`;
    const names = [...carried.keys()].filter((n) => !UNSIGNED.test(n)).sort();
    const signature = this.#fleet.secrets.sign(
      hopMessage(this.#fleet.id, to, at, nonce, names, { ...request, header: (n) => carried.get(n) ?? null }),
    );
    return `${this.#fleet.id}.${to}.${at}.${nonce}.${signature}.${names.join(',')}`;
  }

  /** Settles once this replica is listed, or `LISTED_WAIT_MS` after the first hop waited for it. */
  #whenListed(): Promise<void> {
    if (!this.#fleet.listed) return Promise.resolve();
    return (this.#listedOrLate ??= Promise.race([this.#fleet.listed, new Promise<void>((r) => setTimeout(r, LISTED_WAIT_MS).unref())]).then(
      () => {
        this.#listedNow = true;
      },
    ));
  }

  /** Takes the hop `signature` once: false when it was taken already, or when too many are held. */
  #takeOnce(signature: string, until: number): boolean {
    const now = Date.now();
    for (const [s, end] of this.#taken) {
      if (end > now) break;
      this.#taken.delete(s);
    }
    if (this.#taken.has(signature) || this.#taken.size >= MAX_TAKEN) return false;
    this.#taken.set(signature, until);
    return true;
  }

  /**
   * Where a forward for `what` goes, from what the directory said of `owner`: its record, or the
   * defined answer when it is not in the fleet (counted) or the directory cannot be asked.
   */
  #located(found: ReplicaRecord | undefined | 'unreachable', what: ForwardedFor, owner: string): ReplicaRecord | Reply {
    if (found === 'unreachable') return unreachableReply(what, owner);
    if (found) return found;
    this.#ownerGone++;
    return goneReply(what, owner, 'it is not in the fleet');
  }

  /** Whether `replica` is in the fleet's directory now (its record read within a second counts). */
  async #isMember(replica: string): Promise<boolean> {
    const record = await this.#ownerRecord(replica);
    return record !== undefined && record !== 'unreachable';
  }

  /** Sends the call `body` (request `id`) to its owner at `record`, signed, and passes its answer back on `res`. */
  #sendCall(record: ReplicaRecord, owner: string, req: IncomingMessage, res: ServerResponse, body: string, id: JsonRpcRequest['id']): void {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !NOT_CARRIED.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    const { url: target, path, options: to } = this.#targetOf(record.advertise, req.url);
    headers[HOP_HEADER] = this.#hopValue(record.id, { method: 'POST', path, sessionId: null, body }, new Map(Object.entries(headers)));
    headers['content-length'] = String(Buffer.byteLength(body));
    let lostOwner = false;
    let settled = false;
    const unanswered = new Set<RequestId>([id as RequestId]);
    const watch = answerWatch(unanswered);
    let streamed = false;
    const finish = (why?: string): void => {
      if (settled) return;
      settled = true;
      stopWatching();
      res.removeListener('close', onClientGone);
      if (why === undefined || res.destroyed) return void (res.writableEnded || res.destroyed ? undefined : res.end());
      this.#ownerGone++;
      if (!res.headersSent) return writeReply(res, goneReply({ call: id }, owner, why));
      // A stream that broke off ends with the call's answer, unless it carried it already.
      res.end(streamed && unanswered.size > 0 ? brokenEvents({ call: id }, [...unanswered], owner, why) : undefined);
    };
    const upstream = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
      { ...to, method: 'POST', headers, agent: target.protocol === 'https:' ? httpsAgent : httpAgent },
      (answer) => {
        this.#forwarded++;
        streamed = (answer.headers['content-type'] ?? '').startsWith('text/event-stream');
        const carried: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (value !== undefined && CARRIED_BACK.has(name)) carried[name] = value;
        res.writeHead(answer.statusCode ?? 502, carried);
        answer.on('data', (chunk: Buffer) => {
          if (streamed) watch(chunk);
          if (!res.write(chunk)) {
            answer.pause();
            res.once('drain', () => answer.resume());
          }
        });
        answer.on('end', () => finish());
        answer.on('aborted', () => finish(lostOwner ? 'its heartbeat stopped' : 'its answer broke off'));
        answer.on('error', () => finish(lostOwner ? 'its heartbeat stopped' : 'its answer broke off'));
      },
    );
    const stopWatching = this.#watchOwner(owner, () => {
      lostOwner = true;
      upstream.destroy(new Error('its heartbeat stopped'));
    });
    const onClientGone = (): void => {
      if (!settled) upstream.destroy();
    };
    res.once('close', onClientGone);
    upstream.on('error', (e) => finish(lostOwner ? 'its heartbeat stopped' : `unreachable: ${e.message}`));
    upstream.end(body);
  }

  stateOwner(requestState: string): string | undefined {
    const owner = stateOwner(this.#fleet.keyring, requestState);
    return owner !== undefined && owner !== this.#fleet.id ? owner : undefined;
  }

  /** A new legacy session's id, naming this replica as its owner (a bound function: fronts take it as it is). */
  readonly sessionId = (): string => `${this.#fleet.id}${SESSION_SEPARATOR}${randomUUID()}`;

  sessionOwner(sessionId: string): string | undefined {
    const at = sessionId.indexOf(SESSION_SEPARATOR);
    if (at <= 0) return undefined;
    const owner = sessionId.slice(0, at);
    return owner !== this.#fleet.id ? owner : undefined;
  }

  readyPeer(): Promise<string | undefined> {
    return this.#readyPeer();
  }

  async forward(owner: string, request: Request, body: string | undefined, what: ForwardedFor): Promise<Response> {
    await this.#whenListed();
    // New work handed over goes to another ready replica if the one picked from a list a
    // second old has just gone.
    const found = this.#located(
      'handedOver' in what
        ? ((await this.#fleet.directory.lookup(owner).catch(() => undefined)) ?? (await this.#freshPeer(undefined)))
        : await this.#ownerRecord(owner),
      what,
      owner,
    );
    if ('status' in found) return asResponse(found);
    let record: ReplicaRecord = found;
    const headers = new Headers();
    request.headers.forEach((value, name) => {
      if (!NOT_CARRIED.has(name)) headers.set(name, value);
    });
    const carried = new Map<string, string>();
    headers.forEach((value, name) => carried.set(name, value));
    const signed = { method: request.method, sessionId: 'session' in what ? what.session : null, body: body ?? '' };
    const controller = new AbortController();
    let lostOwner = false;
    const stopWatching = this.#watchOwner(owner, () => {
      lostOwner = true;
      controller.abort();
    });
    const onClientGone = () => controller.abort();
    request.signal.addEventListener('abort', onClientGone, { once: true });
    const done = () => {
      stopWatching();
      request.signal.removeEventListener('abort', onClientGone);
    };
    const why = (e: unknown) =>
      lostOwner
        ? 'its heartbeat stopped'
        : e === undefined
          ? 'its answer broke off'
          : `unreachable: ${e instanceof Error ? e.message : String(e)}`;
    let answer: Response;
    for (let attempt = 0; ; attempt++) {
      try {
        const target = this.#targetOf(record.advertise, request.url);
        headers.set(HOP_HEADER, this.#hopValue(record.id, { ...signed, path: target.path }, carried));
        answer = await fetch(target.url, {
          method: request.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: controller.signal,
        });
        break;
      } catch (e) {
        const again =
          'handedOver' in what && attempt === 0 && !controller.signal.aborted ? await this.#freshPeer(record.advertise) : undefined;
        if (again) {
          record = again;
          continue;
        }
        done();
        this.#ownerGone++;
        return asResponse(goneReply(what, owner, why(e)));
      }
    }
    this.#forwarded++;
    const back = new Headers();
    answer.headers.forEach((value, name) => {
      if (CARRIED_BACK.has(name)) back.set(name, value);
    });
    if (!answer.body) {
      done();
      return new Response(null, { status: answer.status, headers: back });
    }
    const streamed = (answer.headers.get('content-type') ?? '').startsWith('text/event-stream');
    const unanswered = streamed ? new Set<RequestId>(requestIds(body)) : undefined;
    const broken = (ids: readonly RequestId[]): Uint8Array | undefined => {
      if (request.signal.aborted) return undefined;
      this.#ownerGone++;
      return new TextEncoder().encode(brokenEvents(what, ids, owner, why(undefined)));
    };
    return new Response(passedOn(answer.body, done, unanswered, broken), { status: answer.status, headers: back });
  }

  forwardCall(owner: string, req: IncomingMessage, res: ServerResponse, body: string, id: JsonRpcRequest['id']): void {
    // Once this replica is listed, a retry of a caller whose owner was looked up a moment ago
    // goes on at once (the lookups below are made for the first ones).
    const known = this.#listedNow ? this.#freshRecord(owner) : undefined;
    if (known !== undefined) return this.#sendCall(known, owner, req, res, body, id);
    void (async () => {
      await this.#whenListed();
      const found = this.#located(await this.#ownerRecord(owner), { call: id }, owner);
      if ('status' in found) return writeReply(res, found);
      this.#sendCall(found, owner, req, res, body, id);
    })().catch(() => {
      if (!res.headersSent) writeReply(res, goneReply({ call: id }, owner, 'it could not be reached'));
      else res.destroy();
    });
  }

  async verifyHop(hop: string, request: HopRequest): Promise<boolean> {
    // from.to.at.nonce.signature.names: ids, a number and base64url hold no '.', names may.
    const parts = hop.split('.');
    if (parts.length < 6) return false;
    const [from = '', to, atText, nonce = '', signature = ''] = parts;
    const at = Number(atText);
    if (
      from === '' ||
      from === this.#fleet.id ||
      to !== this.#fleet.id ||
      !Number.isSafeInteger(at) ||
      Math.abs(Date.now() - at) > this.#maxAge ||
      nonce === '' ||
      signature === ''
    )
      return false;
    const namesText = parts.slice(5).join('.');
    const names = namesText === '' ? [] : namesText.split(',');
    if (!(await this.#fleet.secrets.verify(hopMessage(from, to, at, nonce, names, request), signature))) return false;
    return this.#takeOnce(signature, at + this.#maxAge) && (await this.#isMember(from));
  }

  counts(): ForwardCounts {
    return { forwarded: this.#forwarded, ownerGone: this.#ownerGone };
  }
}
