/**
 * Forwarding to the replica that owns what a request continues: a parked call (its signed
 * requestState names the owner) or a legacy session (its `Mcp-Session-Id` does). The directory
 * gives the owner's address (one Redis GET), and the request goes there signed as a hop of this
 * fleet; the owner's answer (JSON, or an event stream with progress and logs) is streamed back as
 * it comes, and a client that goes away cancels it on the owner. An owner gone (no record,
 * unreachable, or its heartbeat stopped while it answered) ends in one defined answer: the error
 * that tells a client to send its call again without requestState, or a legacy session's 404.
 * Where the owners are is ownerLookup.ts's; signing and taking hops, replicaHops.ts's.
 */
import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { RequestId } from '../core/jsonrpc.ts';
import { HOP_HEADER, type ForwardedCall, type ForwardedFor, type Forwarding, type HopRequest } from '../fronts/served.ts';
import { stateOwner } from '../state/requestState.ts';
import type { Keyring } from '../state/keyring.ts';
import type { FleetDirectory, ReplicaRecord } from './directory.ts';
import type { HopSecrets } from './hopSecrets.ts';
import { CARRIED_BACK, NOT_CARRIED } from './hops.ts';
import { OwnerLookup } from './ownerLookup.ts';
import { ReplicaHops } from './replicaHops.ts';
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
const ID_SEPARATOR = '.';

/** Connections to the other replicas, kept a moment between hops (shorter than a replica keeps them). */
const httpAgent = new HttpAgent({ keepAlive: true, timeout: 4000 });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: 4000 });

/** The forwarding of one replica of `fleet`. */
export function fleetForwarding(fleet: ForwardingFleet, options: ForwardingOptions = {}): FleetForwarding {
  return new FleetForwarder(fleet, options);
}

/** One replica's forwarding (of Web requests, and of calls on Node's http objects), with its counts. */
class FleetForwarder implements FleetForwarding {
  readonly #fleet: ForwardingFleet;
  readonly #owners: OwnerLookup;
  readonly #hops: ReplicaHops;
  #forwarded = 0;
  #ownerGone = 0;
  #listedOrLate: Promise<void> | undefined;
  /** Whether this replica is known to be listed (or has waited for it as long as a hop does). */
  #listedNow: boolean;

  constructor(fleet: ForwardingFleet, options: ForwardingOptions) {
    this.#fleet = fleet;
    this.#owners = new OwnerLookup(fleet.id, fleet.directory, Math.max(50, options.ownerCheckMs ?? 1000));
    this.#hops = new ReplicaHops(fleet.id, fleet.secrets, options.hopMaxAgeMs ?? 30_000);
    this.#listedNow = fleet.listed === undefined;
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

  /** Sends the call `body` (`what.call` its id) to its owner at `record`, signed, and passes its answer back on `res`. */
  #sendCall(record: ReplicaRecord, owner: string, req: IncomingMessage, res: ServerResponse, body: string, what: ForwardedCall): void {
    const id = what.call;
    // The headers go as Node's raw list (name, value, …): Node writes them as they are, without
    // taking each one through `setHeader`; they were checked when this replica read them.
    const headers: string[] = [];
    const carried = new Map<string, string>();
    for (const name in req.headers) {
      const value = req.headers[name];
      if (value === undefined || NOT_CARRIED.has(name)) continue;
      const text = Array.isArray(value) ? value.join(', ') : value;
      carried.set(name, text);
      headers.push(name, text);
    }
    const { url: target, path, options: to } = this.#hops.target(record.advertise, req.url);
    const hop = this.#hops.value(record.id, { method: 'POST', path, sessionId: null, body }, carried);
    headers.push('host', target.host, HOP_HEADER, hop, 'content-length', String(Buffer.byteLength(body)));
    let lostOwner = false;
    let settled = false;
    const unanswered = new Set<RequestId>([id as RequestId]);
    let watch: ((chunk: Uint8Array) => void) | undefined;
    let streamed = false;
    let sized = false;
    const finish = (why?: string): void => {
      if (settled) return;
      settled = true;
      stopWatching();
      res.removeListener('close', onClientGone);
      if (why === undefined || res.destroyed) return void (res.writableEnded || res.destroyed ? undefined : res.end());
      this.#ownerGone++;
      if (!res.headersSent) return writeReply(res, goneReply(what, owner, why));
      // An answer of known length cut short cannot be ended: its client sees the connection go.
      if (sized) return void res.destroy();
      // A stream that broke off ends with the call's answer, unless it carried it already.
      res.end(streamed && unanswered.size > 0 ? brokenEvents(what, [...unanswered], owner, why) : undefined);
    };
    const upstream = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
      { ...to, method: 'POST', headers, agent: target.protocol === 'https:' ? httpsAgent : httpAgent },
      (answer) => {
        this.#forwarded++;
        streamed = (answer.headers['content-type'] ?? '').startsWith('text/event-stream');
        if (streamed) watch = answerWatch(unanswered);
        const carried: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers))
          if (value !== undefined && CARRIED_BACK.has(name)) carried[name] = value;
        // An answer of known length is passed on with it (not in chunks): its bytes go as they came.
        sized = !streamed && answer.headers['content-length'] !== undefined;
        if (sized) carried['content-length'] = answer.headers['content-length']!;
        res.writeHead(answer.statusCode ?? 502, carried);
        answer.on('data', (chunk: Buffer) => {
          watch?.(chunk);
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
    const stopWatching = this.#owners.watch(owner, () => {
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

  /** A new id naming this replica as its owner (a bound function: fronts and wraps take it as it is). */
  readonly ownedId = (): string => `${this.#fleet.id}${ID_SEPARATOR}${randomUUID()}`;

  idOwner(id: string): string | undefined {
    const at = id.indexOf(ID_SEPARATOR);
    if (at <= 0) return undefined;
    const owner = id.slice(0, at);
    return owner !== this.#fleet.id ? owner : undefined;
  }

  readyPeer(): Promise<string | undefined> {
    return this.#owners.readyPeer();
  }

  async forward(owner: string, request: Request, body: string | undefined, what: ForwardedFor): Promise<Response> {
    await this.#whenListed();
    // New work handed over goes to another ready replica if the one picked from a list a
    // second old has just gone.
    const found = this.#located(
      'handedOver' in what
        ? ((await this.#fleet.directory.lookup(owner).catch(() => undefined)) ?? (await this.#owners.freshPeer(undefined)))
        : await this.#owners.record(owner),
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
    const stopWatching = this.#owners.watch(owner, () => {
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
        const target = this.#hops.target(record.advertise, request.url);
        headers.set(HOP_HEADER, this.#hops.value(record.id, { ...signed, path: target.path }, carried));
        answer = await fetch(target.url, {
          method: request.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: controller.signal,
        });
        break;
      } catch (e) {
        const again =
          'handedOver' in what && attempt === 0 && !controller.signal.aborted ? await this.#owners.freshPeer(record.advertise) : undefined;
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

  forwardCall(owner: string, req: IncomingMessage, res: ServerResponse, body: string, what: ForwardedCall): void {
    // Once this replica is listed, a retry of a caller whose owner was looked up a moment ago
    // goes on at once (the lookups below are made for the first ones).
    const known = this.#listedNow ? this.#owners.freshRecord(owner) : undefined;
    if (known !== undefined) return this.#sendCall(known, owner, req, res, body, what);
    void (async () => {
      await this.#whenListed();
      const found = this.#located(await this.#owners.record(owner), what, owner);
      if ('status' in found) return writeReply(res, found);
      this.#sendCall(found, owner, req, res, body, what);
    })().catch(() => {
      if (!res.headersSent) writeReply(res, goneReply(what, owner, 'it could not be reached'));
      else res.destroy();
    });
  }

  async verifyHop(hop: string, request: HopRequest): Promise<boolean> {
    const from = await this.#hops.take(hop, request);
    return from !== undefined && (await this.#owners.isMember(from));
  }

  counts(): ForwardCounts {
    return { forwarded: this.#forwarded, ownerGone: this.#ownerGone };
  }
}
