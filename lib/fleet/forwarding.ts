/**
 * Forwarding a retry to the replica that owns its parked call: the sealed state names the owner,
 * the directory gives its address (one Redis GET), and the request goes there signed as a hop of
 * this fleet; the owner's answer (JSON, or an event stream with progress and logs) is streamed
 * back as it comes, and a client that goes away cancels it on the owner. An owner gone (no record,
 * unreachable, no answer in time) ends in one defined error telling the client to start again.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '../core/errors.ts';
import { errorResponse, type JsonRpcRequest } from '../core/jsonrpc.ts';
import { HOP_HEADER, type Forwarding } from '../fronts/served.ts';
import { stateOwner } from '../state/requestState.ts';
import type { Fleet } from './fleet.ts';

/** How a fleet forwards. */
export interface ForwardingOptions {
  /** How long the owner may take to begin its answer before it counts as gone (default 5 s). */
  readonly ownerTimeoutMs?: number;
  /** How old a hop's signature may be when it arrives (default 30 s). */
  readonly hopMaxAgeMs?: number;
  /** Told of each forward: to whom, and how it went. */
  readonly onForward?: (event: { owner: string; outcome: 'answered' | 'gone' }) => void;
}

/** Headers not carried to the owner: the hop's own, and those of this connection. */
const NOT_CARRIED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'origin', HOP_HEADER]);

/** What a client is told when the call its state names cannot be reached. */
export function ownerGone(id: JsonRpcRequest['id'], owner: string, why: string): Response {
  const body = errorResponse(id, {
    code: ErrorCode.InvalidParams,
    message: `requestState refers to a call on a replica that is gone (${why}): send the original request again, without requestState`,
    data: { reason: 'owner-gone', owner, retryWithoutRequestState: true },
  });
  return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } });
}

function sign(secret: Buffer, replica: string, at: number, body: string): string {
  const digest = createHash('sha256').update(body).digest('base64url');
  return createHmac('sha256', secret).update(`${replica}.${at}.${digest}`).digest('base64url');
}

/** The forwarding of one replica of `fleet`. */
export function fleetForwarding(fleet: Fleet, options: ForwardingOptions = {}): Forwarding {
  const timeoutMs = options.ownerTimeoutMs ?? 5000;
  const maxAge = options.hopMaxAgeMs ?? 30_000;
  return {
    ownerOf(request) {
      const sealed = request.params?.['requestState'];
      if (typeof sealed !== 'string') return undefined;
      const owner = stateOwner(fleet.keyring, sealed);
      return owner !== undefined && owner !== fleet.id ? owner : undefined;
    },

    async forward(owner, request, body, id) {
      const record = await fleet.directory.lookup(owner).catch(() => undefined);
      if (!record) {
        options.onForward?.({ owner, outcome: 'gone' });
        return ownerGone(id, owner, 'it is not in the fleet');
      }
      const headers = new Headers();
      request.headers.forEach((value, name) => {
        if (!NOT_CARRIED.has(name)) headers.set(name, value);
      });
      const at = Date.now();
      headers.set(HOP_HEADER, `${fleet.id}.${at}.${sign(fleet.hopSecret, fleet.id, at, body)}`);
      const controller = new AbortController();
      const onGone = () => controller.abort();
      request.signal.addEventListener('abort', onGone, { once: true });
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      try {
        const answer = await fetch(`${record.advertise}${new URL(request.url).pathname}`, { method: 'POST', headers, body, signal: controller.signal });
        clearTimeout(timer);
        options.onForward?.({ owner, outcome: 'answered' });
        const carried = new Headers();
        answer.headers.forEach((value, name) => {
          if (name === 'content-type' || name === 'cache-control' || name === 'retry-after') carried.set(name, value);
        });
        return new Response(answer.body, { status: answer.status, headers: carried });
      } catch (e) {
        clearTimeout(timer);
        request.signal.removeEventListener('abort', onGone);
        options.onForward?.({ owner, outcome: 'gone' });
        return ownerGone(id, owner, controller.signal.aborted && !request.signal.aborted ? `no answer within ${timeoutMs} ms` : `unreachable: ${e instanceof Error ? e.message : String(e)}`);
      }
    },

    verifyHop(hop, body) {
      const [replica, atText, signature] = hop.split('.');
      const at = Number(atText);
      if (!replica || !signature || !Number.isFinite(at) || Math.abs(Date.now() - at) > maxAge) return false;
      const expected = Buffer.from(sign(fleet.hopSecret, replica, at, body));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
