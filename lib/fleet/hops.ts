/**
 * A hop between replicas of a fleet: where it goes (only the owner's advertised origin, whatever
 * the request line named), which headers it carries and signs, and what its signature covers.
 * Pure: the signing key is the fleet's (hopSecrets.ts), signing and taking one replica's hops is
 * replicaHops.ts's, the sending forwarding.ts's.
 */
import { hash } from 'node:crypto';
import { urlToHttpOptions } from 'node:url';
import { HOP_HEADER, type HopRequest } from '../fronts/served.ts';

/**
 * Where a hop goes: the owner's advertised origin, with only the path and query of the request
 * target. A request line in absolute form (`POST http://elsewhere:4299/mcp HTTP/1.1`, which HTTP/1.1
 * servers accept) names a host of the caller's choosing: it never chooses where the caller's
 * request, its headers and a hop signature are sent.
 */
export function hopTarget(advertise: string, requestTarget: string | undefined): URL {
  const asked = new URL(requestTarget ?? '/', 'http://request-target.invalid');
  const target = new URL(advertise);
  target.pathname = asked.pathname;
  target.search = asked.search;
  return target;
}

/** Headers not carried to the owner: the hop's own, and those of this connection. */
export const NOT_CARRIED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'origin', HOP_HEADER]);

/** Headers of the owner's answer carried back to the client. */
export const CARRIED_BACK = new Set(['content-type', 'cache-control', 'retry-after', 'mcp-session-id', 'allow', 'www-authenticate']);

/**
 * Headers a hop carries but does not sign: those a proxy or service mesh between replicas may add
 * to or rewrite (forwarding and tracing headers). Every other header the caller sent is signed.
 */
export const UNSIGNED = /^(?:x-forwarded-.*|forwarded|via|x-real-ip|x-request-id|x-envoy-.*|traceparent|tracestate|baggage)$/;

/** What a hop's signature covers: who sent it to whom, when, and the request as it was sent. */
export function hopMessage(from: string, to: string, at: number, nonce: string, names: readonly string[], request: HopRequest): string {
  const headers = names.map((n) => `${n}:${request.header(n) ?? ''}`).join('\n');
  const digest = hash('sha256', request.body, 'base64url');
  return `hop\n${from}\n${to}\n${at}\n${nonce}\n${request.method}\n${request.path}\n${request.sessionId ?? ''}\n${headers}\n${digest}`;
}

/** Where a hop goes: its URL, the path its signature covers, and the URL as Node's request options. */
export interface HopTarget {
  readonly url: URL;
  readonly path: string;
  readonly options: ReturnType<typeof urlToHttpOptions>;
}

/** The path and query a hop's target carries (`/mcp?x=1`), as its signature covers them. */
export function pathOf(target: URL): string {
  return `${target.pathname}${target.search}`;
}
