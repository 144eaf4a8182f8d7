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
  const checkMs = Math.max(50, options.ownerCheckMs ?? 1000);
  let peers: { at: number; ids: Promise<string[]> } | undefined;
  let turn = 0;
  const maxAge = options.hopMaxAgeMs ?? 30_000;
  let forwarded = 0;
  let ownerGone = 0;

  /** Asks the directory, every `checkMs` while the forward lasts, whether `owner` is alive; `lost` once it is not. */
  const watchOwner = (owner: string, lost: () => void): (() => void) => {
    let checking = false;
    const timer = setInterval(() => {
      if (checking) return;
      checking = true;
      fleet.directory.lookup(owner).then(
        (record) => {
          checking = false;
          if (!record) lost();
        },
        () => (checking = false),
      );
    }, checkMs);
    timer.unref();
    return () => clearInterval(timer);
  };

  /** A ready replica other than this one, in turn, from a list at most `PEERS_FRESH_MS` old. */
  const readyPeer = async (): Promise<string | undefined> => {
    if (!peers || Date.now() - peers.at > PEERS_FRESH_MS) {
      const ids = fleet.directory.replicas().then(
        (all) => all.filter((r) => r.ready && r.id !== fleet.id).map((r) => r.id),
        () => [],
      );
      peers = { at: Date.now(), ids };
    }
    const ids = await peers.ids;
    return ids.length === 0 ? undefined : ids[turn++ % ids.length];
  };

  /** The record of another ready replica than the one at `advertise`, from a fresh list (the one picked has just gone). */
  const freshPeer = async (advertise: string | undefined) => {
    peers = undefined;
    const next = await readyPeer();
    const record = next === undefined ? undefined : await fleet.directory.lookup(next).catch(() => undefined);
    return record && record.advertise !== advertise ? record : undefined;
  };

  /** The records `ownerRecord` read lately, by replica. */
  const records = new Map<string, { record: ReplicaRecord; at: number }>();

  /** The record of `owner` read within the last moment, if one was. */
  const freshRecord = (owner: string): ReplicaRecord | undefined => {
    const known = records.get(owner);
    return known !== undefined && Date.now() - known.at < RECORD_FRESH_MS ? known.record : undefined;
  };

  /**
   * The directory's record of `owner`, looked at twice a moment apart (a replica that has just
   * started may not have registered yet); `undefined` when it is not in the fleet, or
   * `unreachable` when the directory (the fleet's Redis) cannot be asked: the owner may well be
   * alive, and the caller is told to try again, not that its call is gone.
   */
  const ownerRecord = async (owner: string): Promise<ReplicaRecord | undefined | 'unreachable'> => {
    // A record read within the last moment is taken as it is: retries of one client's calls come
    // in bursts, and a replica's address does not change while it lives (a gone one is found out
    // by the forward itself, as one that died since the lookup would be).
    const known = freshRecord(owner);
    if (known !== undefined) return known;
    let failed = false;
    const look = () =>
      fleet.directory.lookup(owner).catch(() => {
        failed = true;
        return undefined;
      });
    const record = (await look()) ?? (failed ? undefined : await new Promise((r) => setTimeout(r, LOOK_AGAIN_MS)).then(look));
    if (record) {
      if (records.size >= MAX_RECORDS) records.clear();
      records.set(owner, { record, at: Date.now() });
      return record;
    }
    records.delete(owner);
    return failed ? 'unreachable' : undefined;
  };

  // A hop's nonce makes its signature one of a kind: this process's random part and a count
  // (drawing random bytes for each hop cost more than signing it).
  const noncePrefix = randomBytes(9).toString('base64url');
  let nonces = 0;

  /** Where hops to `advertise` for the request target `requestTarget` go, and the path they sign: worked out once for each pair. */
  const targets = new Map<string, HopTarget>();
  const targetOf = (advertise: string, requestTarget: string | undefined): HopTarget => {
    const key = `${advertise} ${requestTarget ?? ''}`;
    let known = targets.get(key);
    if (known === undefined) {
      const url = hopTarget(advertise, requestTarget);
      known = { url, path: pathOf(url), options: urlToHttpOptions(url) };
      if (targets.size >= MAX_RECORDS) targets.clear();
      targets.set(key, known);
    }
    return known;
  };

  /**
   * The hop header's value for `request` sent from this replica to replica `to`, with the headers
   * `carried` (names in lower case): `from.to.at.nonce.signature.names`, the names it signs last.
   */
  const hopValue = (to: string, request: Omit<HopRequest, 'header'>, carried: ReadonlyMap<string, string>): string => {
    const at = Date.now();
    const nonce = `${noncePrefix}${(nonces++).toString(36)}`;
    const names = [...carried.keys()].filter((n) => !UNSIGNED.test(n)).sort();
    const signature = fleet.secrets.sign(hopMessage(fleet.id, to, at, nonce, names, { ...request, header: (n) => carried.get(n) ?? null }));
    return `${fleet.id}.${to}.${at}.${nonce}.${signature}.${names.join(',')}`;
  };

  let listedOrLate: Promise<void> | undefined;
  /** Whether this replica is known to be listed (or has waited for it as long as a hop does). */
  let listedNow = fleet.listed === undefined;
  /** Settles once this replica is listed, or `LISTED_WAIT_MS` after the first hop waited for it. */
  const whenListed = (): Promise<void> => {
    if (!fleet.listed) return Promise.resolve();
    return (listedOrLate ??= Promise.race([fleet.listed, new Promise<void>((r) => setTimeout(r, LISTED_WAIT_MS).unref())]).then(() => {
      listedNow = true;
    }));
  };

  /** Hops taken, by signature, each with when its window ends (oldest first). */
  const taken = new Map<string, number>();
  /** Takes the hop `signature` once: false when it was taken already, or when too many are held. */
  const takeOnce = (signature: string, until: number): boolean => {
    const now = Date.now();
    for (const [s, end] of taken) {
      if (end > now) break;
      taken.delete(s);
    }
    if (taken.has(signature) || taken.size >= MAX_TAKEN) return false;
    taken.set(signature, until);
    return true;
  };

  /**
   * Where a forward for `what` goes, from what the directory said of `owner`: its record, or the
   * defined answer when it is not in the fleet (counted) or the directory cannot be asked.
   */
  const located = (found: ReplicaRecord | undefined | 'unreachable', what: ForwardedFor, owner: string): ReplicaRecord | Reply => {
    if (found === 'unreachable') return unreachableReply(what, owner);
    if (found) return found;
    ownerGone++;
    return goneReply(what, owner, 'it is not in the fleet');
  };

  /** Whether `replica` is in the fleet's directory now (its record read within a second counts). */
  const isMember = async (replica: string): Promise<boolean> => {
    const record = await ownerRecord(replica);
    return record !== undefined && record !== 'unreachable';
  };

  /** Sends the call `body` (request `id`) to its owner at `record`, signed, and passes its answer back on `res`. */
  const sendCall = (
    record: ReplicaRecord,
    owner: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    id: JsonRpcRequest['id'],
  ): void => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !NOT_CARRIED.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    const { url: target, path, options: to } = targetOf(record.advertise, req.url);
    headers[HOP_HEADER] = hopValue(record.id, { method: 'POST', path, sessionId: null, body }, new Map(Object.entries(headers)));
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
      ownerGone++;
      if (!res.headersSent) return writeReply(res, goneReply({ call: id }, owner, why));
      // A stream that broke off ends with the call's answer, unless it carried it already.
      res.end(streamed && unanswered.size > 0 ? brokenEvents({ call: id }, [...unanswered], owner, why) : undefined);
    };
    const upstream = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
      { ...to, method: 'POST', headers, agent: target.protocol === 'https:' ? httpsAgent : httpAgent },
      (answer) => {
        forwarded++;
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
    const stopWatching = watchOwner(owner, () => {
      lostOwner = true;
      upstream.destroy(new Error('its heartbeat stopped'));
    });
    const onClientGone = (): void => {
      if (!settled) upstream.destroy();
    };
    res.once('close', onClientGone);
    upstream.on('error', (e) => finish(lostOwner ? 'its heartbeat stopped' : `unreachable: ${e.message}`));
    upstream.end(body);
  };

  return {
    ownerOf(request) {
      const sealed = request.params?.['requestState'];
      if (typeof sealed !== 'string') return undefined;
      const owner = stateOwner(fleet.keyring, sealed);
      return owner !== undefined && owner !== fleet.id ? owner : undefined;
    },

    sessionId: () => `${fleet.id}${SESSION_SEPARATOR}${randomUUID()}`,

    sessionOwner(sessionId) {
      const at = sessionId.indexOf(SESSION_SEPARATOR);
      if (at <= 0) return undefined;
      const owner = sessionId.slice(0, at);
      return owner !== fleet.id ? owner : undefined;
    },

    readyPeer,

    async forward(owner, request, body, what) {
      await whenListed();
      // New work handed over goes to another ready replica if the one picked from a list a
      // second old has just gone.
      const found = located(
        'handedOver' in what
          ? ((await fleet.directory.lookup(owner).catch(() => undefined)) ?? (await freshPeer(undefined)))
          : await ownerRecord(owner),
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
      const stopWatching = watchOwner(owner, () => {
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
          const target = targetOf(record.advertise, request.url);
          headers.set(HOP_HEADER, hopValue(record.id, { ...signed, path: target.path }, carried));
          answer = await fetch(target.url, {
            method: request.method,
            headers,
            ...(body === undefined ? {} : { body }),
            signal: controller.signal,
          });
          break;
        } catch (e) {
          const again = 'handedOver' in what && attempt === 0 && !controller.signal.aborted ? await freshPeer(record.advertise) : undefined;
          if (again) {
            record = again;
            continue;
          }
          done();
          ownerGone++;
          return asResponse(goneReply(what, owner, why(e)));
        }
      }
      forwarded++;
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
        ownerGone++;
        return new TextEncoder().encode(brokenEvents(what, ids, owner, why(undefined)));
      };
      return new Response(passedOn(answer.body, done, unanswered, broken), { status: answer.status, headers: back });
    },

    forwardCall(owner, req, res, body, id) {
      // Once this replica is listed, a retry of a caller whose owner was looked up a moment ago
      // goes on at once (the lookups below are made for the first ones).
      const known = listedNow ? freshRecord(owner) : undefined;
      if (known !== undefined) return sendCall(known, owner, req, res, body, id);
      void (async () => {
        await whenListed();
        const found = located(await ownerRecord(owner), { call: id }, owner);
        if ('status' in found) return writeReply(res, found);
        sendCall(found, owner, req, res, body, id);
      })().catch(() => {
        if (!res.headersSent) writeReply(res, goneReply({ call: id }, owner, 'it could not be reached'));
        else res.destroy();
      });
    },

    async verifyHop(hop, request) {
      // from.to.at.nonce.signature.names: ids, a number and base64url hold no '.', names may.
      const parts = hop.split('.');
      if (parts.length < 6) return false;
      const [from = '', to, atText, nonce = '', signature = ''] = parts;
      const at = Number(atText);
      if (
        from === '' ||
        from === fleet.id ||
        to !== fleet.id ||
        !Number.isSafeInteger(at) ||
        Math.abs(Date.now() - at) > maxAge ||
        nonce === '' ||
        signature === ''
      )
        return false;
      const namesText = parts.slice(5).join('.');
      const names = namesText === '' ? [] : namesText.split(',');
      if (!(await fleet.secrets.verify(hopMessage(from, to, at, nonce, names, request), signature))) return false;
      return takeOnce(signature, at + maxAge) && (await isMember(from));
    },

    counts: () => ({ forwarded, ownerGone }),
  };
}
