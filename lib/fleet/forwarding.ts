/**
 * Forwarding to the replica that owns what a request continues: a parked call (its sealed
 * requestState names the owner) or a legacy session (its `Mcp-Session-Id` does). The directory
 * gives the owner's address (one Redis GET), and the request goes there signed as a hop of this
 * fleet; the owner's answer (JSON, or an event stream with progress and logs) is streamed back as
 * it comes, and a client that goes away cancels it on the owner. An owner gone (no record,
 * unreachable, or its heartbeat stopped while it answered) ends in one defined answer: the error
 * that tells a client to send its call again without requestState, or a legacy session's 404.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ErrorCode } from '../core/errors.ts';
import { errorResponse, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import { HOP_HEADER, type ForwardedFor, type Forwarding } from '../fronts/served.ts';
import { stateOwner } from '../state/requestState.ts';
import type { Keyring } from '../state/keyring.ts';
import type { FleetDirectory } from './directory.ts';

/** How a fleet forwards. */
export interface ForwardingOptions {
  /**
   * How often the directory is asked whether the owner of a forward still under way is alive
   * (default 1 s): an owner whose record expired (its heartbeat stopped) is gone, and the forward
   * ends with the defined answer, within this plus the directory's TTL.
   */
  readonly ownerCheckMs?: number;
  /** How old a hop's signature may be when it arrives (default 30 s). */
  readonly hopMaxAgeMs?: number;
  /** Told of each forward: to whom, and how it went. */
  readonly onForward?: (event: { owner: string; outcome: 'answered' | 'gone' }) => void;
}

/** What forwarding needs of its replica's fleet. */
export interface ForwardingFleet {
  readonly id: string;
  readonly keyring: Keyring;
  readonly hopSecret: Buffer;
  readonly directory: Pick<FleetDirectory, 'lookup' | 'replicas'>;
}

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

/** Headers not carried to the owner: the hop's own, and those of this connection. */
const NOT_CARRIED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'origin', HOP_HEADER]);

/** Headers of the owner's answer carried back to the client. */
const CARRIED_BACK = new Set(['content-type', 'cache-control', 'retry-after', 'mcp-session-id', 'allow', 'www-authenticate']);

/** The separator between a legacy session id's owner and its own part (replica ids never hold it). */
const SESSION_SEPARATOR = '.';

/** The error a call's client is told when the call its state names cannot be reached. */
function ownerGoneError(id: JsonRpcRequest['id'], owner: string, why: string) {
  return errorResponse(id, {
    code: ErrorCode.InvalidParams,
    message: `requestState refers to a call on a replica that is gone (${why}): send the original request again, without requestState`,
    data: { reason: 'owner-gone', owner, retryWithoutRequestState: true },
  });
}

/**
 * The answer when the owner is gone: the call's defined error, a legacy session's 404 (its client
 * initializes again), or for new work handed over by a draining replica, 503 (send it again).
 */
function goneAnswer(what: ForwardedFor, owner: string, why: string): Response {
  const json = { 'content-type': 'application/json' };
  if ('call' in what) return new Response(JSON.stringify(ownerGoneError(what.call, owner, why)), { status: 400, headers: json });
  if ('session' in what) return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.SessionNotFound, message: `Session not found: the replica that held it is gone (${why})` } }), { status: 404, headers: json });
  const body = errorResponse(what.handedOver, { code: ErrorCode.InternalError, message: `Internal error: this replica is draining and the one it handed the request to is gone (${why}); send the request again` });
  return new Response(JSON.stringify(body), { status: 503, headers: { ...json, 'retry-after': '0' } });
}

/** How long after a first look finds no owner the directory is looked at again. */
const LOOK_AGAIN_MS = 250;

/** How long the list of ready replicas a draining replica hands work to is kept. */
const PEERS_FRESH_MS = 1000;

function sign(secret: Buffer, replica: string, at: number, method: string, sessionId: string | null, body: string): string {
  const digest = createHash('sha256').update(body).digest('base64url');
  return createHmac('sha256', secret).update(`${replica}.${at}.${method}.${sessionId ?? ''}.${digest}`).digest('base64url');
}

/**
 * The owner's answer body, passed on as it comes; `ended` is called once it is over (read to the
 * end, broken, or left by the client). An event stream is read for the answers it carries: if it
 * breaks before it is done, `broken` gives a last chunk for the requests still unanswered (the
 * defined error for each), so every request gets one answer, not a cut stream.
 */
function passedOn(body: ReadableStream<Uint8Array>, ended: () => void, unanswered: Set<RequestId> | undefined, broken: (ids: readonly RequestId[]) => Uint8Array | undefined): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let line = '';
  const watch = (chunk: Uint8Array): void => {
    if (!unanswered || unanswered.size === 0) return;
    const lines = (line + decoder.decode(chunk, { stream: true })).split('\n');
    line = lines.pop() ?? '';
    for (const l of lines) {
      if (!l.startsWith('data:')) continue;
      try {
        const message = JSON.parse(l.slice(5)) as { id?: RequestId; method?: string };
        if (message.id !== undefined && message.method === undefined) unanswered.delete(message.id);
      } catch {
        // not a message to follow
      }
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) {
          watch(value);
          return controller.enqueue(value);
        }
        ended();
        controller.close();
      } catch {
        ended();
        const last = unanswered && unanswered.size > 0 ? broken([...unanswered]) : undefined;
        if (last) controller.enqueue(last);
        controller.close();
      }
    },
    cancel(reason) {
      ended();
      return reader.cancel(reason);
    },
  });
}

/** Connections to the other replicas, kept a moment between hops (shorter than a replica keeps them). */
const httpAgent = new HttpAgent({ keepAlive: true, timeout: 4000 });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: 4000 });

/** Writes a gone answer (a Web `Response` with a JSON body) on Node's response. */
function writeGone(res: ServerResponse, gone: Response): void {
  void gone.text().then((text) => {
    if (res.headersSent || res.destroyed) return;
    const headers: Record<string, string> = {};
    gone.headers.forEach((value, name) => (headers[name] = value));
    res.writeHead(gone.status, headers).end(text);
  });
}

/** The id of the answer an event's data carries, if it is one. */
function answered(data: string): RequestId | undefined {
  try {
    const message = JSON.parse(data) as { id?: RequestId; method?: string };
    return message.method === undefined ? message.id : undefined;
  } catch {
    return undefined;
  }
}

/** The ids of the requests in a forwarded body (a message or a batch). */
function requestIds(body: string | undefined): RequestId[] {
  if (body === undefined) return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((m) => (isRecord(m) && typeof m['method'] === 'string' && (typeof m['id'] === 'string' || typeof m['id'] === 'number') ? [m['id']] : []));
  } catch {
    return [];
  }
}

/** The forwarding of one replica of `fleet`. */
export function fleetForwarding(fleet: ForwardingFleet, options: ForwardingOptions = {}): FleetForwarding {
  const checkMs = Math.max(50, options.ownerCheckMs ?? 1000);
  let peers: { at: number; ids: Promise<string[]> } | undefined;
  let turn = 0;
  const maxAge = options.hopMaxAgeMs ?? 30_000;
  let forwarded = 0;
  let ownerGone = 0;
  const outcome = (owner: string, result: 'answered' | 'gone'): void => {
    if (result === 'answered') forwarded++;
    else ownerGone++;
    options.onForward?.({ owner, outcome: result });
  };

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

  /** The directory's record of `owner`, looked at twice a moment apart (a replica that has just started may not have registered yet). */
  const ownerRecord = async (owner: string) => {
    const record = await fleet.directory.lookup(owner).catch(() => undefined);
    if (record) return record;
    await new Promise((r) => setTimeout(r, LOOK_AGAIN_MS));
    return fleet.directory.lookup(owner).catch(() => undefined);
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

    async readyPeer() {
      if (!peers || Date.now() - peers.at > PEERS_FRESH_MS) {
        const ids = fleet.directory.replicas().then(
          (all) => all.filter((r) => r.ready && r.id !== fleet.id).map((r) => r.id),
          () => [],
        );
        peers = { at: Date.now(), ids };
      }
      const ids = await peers.ids;
      return ids.length === 0 ? undefined : ids[turn++ % ids.length];
    },

    async forward(owner, request, body, what) {
      let record = 'handedOver' in what ? await fleet.directory.lookup(owner).catch(() => undefined) : await ownerRecord(owner);
      if (!record && 'handedOver' in what) {
        // The ready replica picked from a list a second old has just gone: pick from a fresh one.
        peers = undefined;
        const next = await this.readyPeer();
        if (next !== undefined && next !== owner) record = await fleet.directory.lookup(next).catch(() => undefined);
      }
      if (!record) {
        outcome(owner, 'gone');
        return goneAnswer(what, owner, 'it is not in the fleet');
      }
      const headers = new Headers();
      request.headers.forEach((value, name) => {
        if (!NOT_CARRIED.has(name)) headers.set(name, value);
      });
      const at = Date.now();
      const sessionId = 'session' in what ? what.session : null;
      headers.set(HOP_HEADER, `${fleet.id}.${at}.${sign(fleet.hopSecret, fleet.id, at, request.method, sessionId, body ?? '')}`);
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
      const why = (e: unknown) => (lostOwner ? 'its heartbeat stopped' : e === undefined ? 'its answer broke off' : `unreachable: ${e instanceof Error ? e.message : String(e)}`);
      const path = new URL(request.url).pathname;
      let answer: Response;
      for (let attempt = 0; ; attempt++) {
        try {
          answer = await fetch(`${record.advertise}${path}`, { method: request.method, headers, ...(body === undefined ? {} : { body }), signal: controller.signal });
          break;
        } catch (e) {
          // New work handed over goes to another ready replica if the one picked has just gone.
          if ('handedOver' in what && attempt === 0 && !controller.signal.aborted) {
            peers = undefined;
            const next = await this.readyPeer();
            const again = next === undefined ? undefined : await fleet.directory.lookup(next).catch(() => undefined);
            if (again && again.advertise !== record.advertise) {
              record = again;
              continue;
            }
          }
          done();
          outcome(owner, 'gone');
          return goneAnswer(what, owner, why(e));
        }
      }
      outcome(owner, 'answered');
      const carried = new Headers();
      answer.headers.forEach((value, name) => {
        if (CARRIED_BACK.has(name)) carried.set(name, value);
      });
      if (!answer.body) {
        done();
        return new Response(null, { status: answer.status, headers: carried });
      }
      const streamed = (answer.headers.get('content-type') ?? '').startsWith('text/event-stream');
      const unanswered = streamed ? new Set<RequestId>(requestIds(body)) : undefined;
      const broken = (ids: readonly RequestId[]): Uint8Array | undefined => {
        if (request.signal.aborted) return undefined;
        ownerGone++;
        const gone = ids.map((id) =>
          'call' in what
            ? ownerGoneError(id, owner, why(undefined))
            : errorResponse(id, { code: ErrorCode.InternalError, message: `Internal error: the replica serving this request is gone (${why(undefined)}); send it again${'session' in what ? ' in a new session' : ''}` }),
        );
        return new TextEncoder().encode(gone.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join(''));
      };
      return new Response(passedOn(answer.body, done, unanswered, broken), { status: answer.status, headers: carried });
    },

    forwardCall(owner, req, res, body, id) {
      void (async () => {
        const record = await ownerRecord(owner);
        if (!record) {
          outcome(owner, 'gone');
          return writeGone(res, goneAnswer({ call: id }, owner, 'it is not in the fleet'));
        }
        const at = Date.now();
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !NOT_CARRIED.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        headers[HOP_HEADER] = `${fleet.id}.${at}.${sign(fleet.hopSecret, fleet.id, at, 'POST', null, body)}`;
        headers['content-length'] = String(Buffer.byteLength(body));
        const target = new URL(req.url ?? '/', record.advertise);
        let lostOwner = false;
        let settled = false;
        const unanswered = new Set<RequestId>([id as RequestId]);
        const decoder = new TextDecoder();
        let line = '';
        let streamed = false;
        const finish = (why?: string): void => {
          if (settled) return;
          settled = true;
          stopWatching();
          res.removeListener('close', onClientGone);
          if (why === undefined || res.destroyed) return void (res.writableEnded || res.destroyed ? undefined : res.end());
          ownerGone++;
          if (!res.headersSent) return writeGone(res, goneAnswer({ call: id }, owner, why));
          // A stream that broke off ends with the call's answer, unless it carried it already.
          if (streamed && unanswered.size > 0) res.end(`event: message\ndata: ${JSON.stringify(ownerGoneError(id, owner, why))}\n\n`);
          else res.end();
        };
        const upstream = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, { method: 'POST', headers, agent: target.protocol === 'https:' ? httpsAgent : httpAgent }, (answer) => {
          outcome(owner, 'answered');
          streamed = (answer.headers['content-type'] ?? '').startsWith('text/event-stream');
          const carried: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && CARRIED_BACK.has(name)) carried[name] = value;
          res.writeHead(answer.statusCode ?? 502, carried);
          answer.on('data', (chunk: Buffer) => {
            if (streamed && unanswered.size > 0) {
              const lines = (line + decoder.decode(chunk, { stream: true })).split('\n');
              line = lines.pop() ?? '';
              for (const l of lines) if (l.startsWith('data:') && answered(l.slice(5)) === id) unanswered.delete(id as RequestId);
            }
            if (!res.write(chunk)) {
              answer.pause();
              res.once('drain', () => answer.resume());
            }
          });
          answer.on('end', () => finish());
          answer.on('aborted', () => finish(lostOwner ? 'its heartbeat stopped' : 'its answer broke off'));
          answer.on('error', () => finish(lostOwner ? 'its heartbeat stopped' : 'its answer broke off'));
        });
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
      })().catch(() => {
        if (!res.headersSent) writeGone(res, goneAnswer({ call: id }, owner, 'it could not be reached'));
        else res.destroy();
      });
    },

    verifyHop(hop, method, sessionId, body) {
      const [replica, atText, signature] = hop.split('.');
      const at = Number(atText);
      if (!replica || !signature || !Number.isFinite(at) || Math.abs(Date.now() - at) > maxAge) return false;
      const expected = Buffer.from(sign(fleet.hopSecret, replica, at, method, sessionId, body));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },

    counts: () => ({ forwarded, ownerGone }),
  };
}
