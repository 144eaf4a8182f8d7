/**
 * How the HTTP front decides what a POSTed message gets, once for its Web and its Node adapter
 * alike: the route (answer at once, serve a modern request, open or continue a legacy session),
 * and before it the fleet's steps (pass it to the replica that owns its call or session, check a
 * hop's signature, hand new work to a ready replica while this one drains). Pure but for what the
 * fleet's forwarding knows: the adapters carry a decision out.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { claimedEra, type ModernVersion } from '../core/era.ts';
import { ErrorCode } from '../core/errors.ts';
import type { Classified, JsonRpcRequest } from '../core/jsonrpc.ts';
import { isTaskMethod } from '../core/modern/methods.ts';
import { isRemovedInModern } from '../core/legacy/methods.ts';
import type { JsonObject } from '../core/primitives.ts';
import { readEnvelope, type Envelope } from '../core/translate/envelope.ts';
import { verifyHeaders } from '../core/translate/headers.ts';
import { RequestSpan } from '../observe/requestSpan.ts';
import { traceCarrier } from '../observe/traceContext.ts';
import type { EdgeLimits, HeaderGetter, OriginPolicy } from '../transport/httpEdge.ts';
import { DEFAULTS } from '../util/defaults.ts';
import type { LegacyHttpSessions } from './legacyHttpSessions.ts';
import type { ProtectedResource } from './protectedResource.ts';
import { errorAnswer, type ForwardedCall, type Forwarding, type Served } from './served.ts';

/** The HTTP edge options of a wrap. */
export type HttpFrontOptions = EdgeLimits &
  OriginPolicy & {
    /** The endpoint's path (default `/mcp`); `null` serves any path. */
    readonly path?: string | null;
    /** Who is asking (sessions are never shared between principals); default: the `Authorization` header. */
    readonly principal?: (request: Request) => string;
    /** SSE keep-alive comment interval (default 15 s). */
    readonly keepAliveMs?: number;
    /**
     * The URL clients reach the endpoint at (behind a proxy, its public address). In front of a
     * protected upstream that gets each caller's `Authorization`, it is the protected resource
     * tokens are issued for. Default: the URL each request came to.
     */
    readonly publicUrl?: string | URL;
  };

export interface HttpFrontConfig {
  readonly http: HttpFrontOptions;
  readonly supportedVersions?: readonly ModernVersion[];
  readonly legacy: LegacyHttpSessions;
  /** Serves one modern request; `undefined` when the client left a listen. Absent, only legacy sessions are served. */
  readonly serve?: Served['serveModern'];
  /** In a fleet: where requests that belong to another replica go. */
  readonly forwarding?: Forwarding;
  /**
   * Health for balancers and orchestrators: `GET /healthz` answers 200 while the process serves,
   * `GET /readyz` 200 while `ready()` holds and 503 once it does not (a replica draining).
   */
  readonly health?: { readonly ready: () => boolean; readonly info?: () => Readonly<Record<string, unknown>> };
  /**
   * In front of an OAuth-protected upstream that gets each caller's `Authorization`: the front
   * answers the protected-resource metadata and shows the upstream's challenges pointing at it.
   */
  readonly protectedResource?: ProtectedResource;
  /** Prometheus metrics: `GET /metrics` answers their text exposition. */
  readonly metrics?: { text(): Promise<{ readonly body: string; readonly contentType: string }> };
}

export interface HttpFront {
  fetch(request: Request): Promise<Response>;
  node(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Ends the GET streams open on Node's objects (a legacy session's standalone stream, here or
   * passing through to another replica), now and from now on: their clients open them again,
   * elsewhere once this front no longer takes connections (the end of a drain).
   */
  endStreams(): void;
}

/** What both adapters of a front read of its configuration, worked out once. */
export interface FrontCore {
  readonly config: HttpFrontConfig;
  readonly http: HttpFrontOptions;
  readonly serve: Served['serveModern'] | undefined;
  readonly forwarding: Forwarding | undefined;
  /** The endpoint's path; `null` serves any. */
  readonly path: string | null;
  readonly keepAliveMs: number;
  readonly envelopeOptions: { readonly supportedVersions?: readonly ModernVersion[] };
}

/** The core of the front `config` describes. */
export function frontCore(config: HttpFrontConfig): FrontCore {
  const http = config.http;
  return {
    config,
    http,
    serve: config.serve,
    forwarding: config.forwarding,
    path: http.path === undefined ? '/mcp' : http.path,
    keepAliveMs: http.keepAliveMs ?? DEFAULTS.keepAliveMs,
    envelopeOptions: config.supportedVersions ? { supportedVersions: config.supportedVersions } : {},
  };
}

/** What a POSTed message gets. */
export type Route =
  | { readonly kind: 'reply'; readonly status: number; readonly body?: unknown }
  | { readonly kind: 'legacy-open' | 'legacy-handle'; readonly parsed: unknown }
  | { readonly kind: 'serve'; readonly rpc: JsonRpcRequest; readonly envelope: Envelope; readonly streams: boolean };

/**
 * What the front does with a POSTed message, decided once for the Web and the Node adapters alike:
 * a route of its own (answer, serve, a legacy session's), or a step of the fleet before it: pass it
 * to the replica that owns its call or session, check a hop's signature first, or hand new work to
 * a ready replica while this one drains (`then` when none is ready).
 */
export type Decision =
  | Route
  | { readonly kind: 'forward-call'; readonly owner: string; readonly call: JsonRpcRequest; readonly task?: string }
  | { readonly kind: 'forward-session'; readonly owner: string; readonly session: string; readonly parsed: unknown }
  | { readonly kind: 'verify-hop'; readonly hop: string; readonly then: Exclude<Route, { kind: 'reply' }> }
  | { readonly kind: 'hand-over'; readonly then: Exclude<Route, { kind: 'reply' }> };

/**
 * How long a streamed answer's head waits for its first message: a request refused at once (a
 * limit, with `Retry-After`) is then answered as JSON with its own status, not inside a stream.
 */
const HEAD_DELAY_MS = 100;

const NO_SESSION = 'Bad Request: No valid session ID provided';

const NO_SESSION_BATCH = 'Invalid Request: expected a JSON-RPC request (batches and responses belong to a legacy session)';

/** Who a forwarded call is answered for when its owner is gone: the call, and the task it names. */
export function forwardedCall(d: Extract<Decision, { kind: 'forward-call' }>): ForwardedCall {
  return d.task === undefined ? { call: d.call.id } : { call: d.call.id, task: d.task };
}

/** The message a route carries on: the request it serves, or what a legacy session is sent. */
export function messageOf(r: Exclude<Route, { kind: 'reply' }>): unknown {
  return r.kind === 'serve' ? r.rpc : r.parsed;
}

/** A JSON-RPC error with no id, as a body. */
export function errorBody(code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message } };
}

/** The answer to a request that says it was forwarded by a replica of the fleet, and was not (or was, once before). */
export const FORBIDDEN_HOP = errorBody(
  ErrorCode.InvalidRequest,
  'Forbidden: a forwarded request that no replica of this fleet sent to this one, or one taken already',
);

/** Whether the replica drains (its readiness withdrawn): new work goes to another. */
export function draining(core: FrontCore): boolean {
  return core.config.health !== undefined && !core.config.health.ready();
}

/**
 * How long a streamed answer's head waits: a listen says first whether it is served (its
 * acknowledgement, or a refusal after waiting for a session), so its head waits for that, or for
 * the first keep-alive.
 */
export function headDelay(core: FrontCore, rpc: JsonRpcRequest): number {
  return rpc.method === 'subscriptions/listen' ? core.keepAliveMs : HEAD_DELAY_MS;
}

/** The upstream's challenges as a client of `requestUrl` is shown them (none unprotected). */
export function challengeFor(core: FrontCore, requestUrl: () => string): ((upstream: string) => string) | undefined {
  const protectedResource = core.config.protectedResource;
  return protectedResource ? (upstream) => protectedResource.challenge(upstream, requestUrl()) : undefined;
}

/** The span of a retry forwarded to the replica its call is parked on (nothing without an OpenTelemetry SDK). */
export function forwardedSpan(rpc: JsonRpcRequest, header: HeaderGetter, owner: string): { end(): void } {
  const params = rpc.params as JsonObject | undefined;
  const facts = {
    method: rpc.method,
    params,
    id: rpc.id,
    transport: 'tcp' as const,
    clientEra: 'modern' as const,
    serverEra: 'legacy' as const,
  };
  return RequestSpan.forwarded(facts, traceCarrier(params?.['_meta'], header), owner);
}

export function route(core: FrontCore, message: Classified, header: HeaderGetter, sessionId: string | null): Route {
  const { serve } = core;
  const parsed = message.kind === 'batch' ? message.items : message.message;
  if (sessionId && (message.kind !== 'request' || claimedEra(message.message) !== 'modern')) return { kind: 'legacy-handle', parsed };
  if (message.kind === 'request' && message.message.method === 'initialize' && claimedEra(message.message) === 'legacy')
    return { kind: 'legacy-open', parsed };
  if (!serve) return { kind: 'reply', status: 400, body: errorBody(ErrorCode.ConnectionClosed, NO_SESSION) };
  if (message.kind === 'notification') return { kind: 'reply', status: 202 };
  if (message.kind !== 'request') return { kind: 'reply', status: 400, body: errorBody(ErrorCode.InvalidRequest, NO_SESSION_BATCH) };
  const rpc = message.message;
  if (claimedEra(rpc) === 'modern') {
    const headers = verifyHeaders(rpc, header);
    if (!headers.ok) return { kind: 'reply', status: 400, body: errorAnswer(rpc.id, headers.error).message };
  }
  const envelope = readEnvelope(rpc, core.envelopeOptions);
  if (!envelope.ok) return { kind: 'reply', status: envelope.error.status, body: errorAnswer(rpc.id, envelope.error).message };
  // A method refused whatever the server can do gets its 404 as JSON, even when it asked for a stream.
  const streams =
    (rpc.method === 'subscriptions/listen' || envelope.value.progressToken !== undefined || envelope.value.logLevel !== undefined) &&
    !isRemovedInModern(rpc.method) &&
    rpc.method !== 'tasks/update';
  return { kind: 'serve', rpc, envelope: envelope.value, streams };
}

/**
 * What a draining replica hands to another: new calls and new legacy sessions (a listen is
 * refused: its client listens again). The requests about its own tasks it serves.
 */
export function handedOver(r: Route): boolean {
  return (
    r.kind === 'legacy-open' ||
    (r.kind === 'serve' &&
      r.rpc.method !== 'subscriptions/listen' &&
      !isTaskMethod(r.rpc.method) &&
      r.envelope.retry?.requestState === undefined)
  );
}

/**
 * The one decision on a POSTed message (see `Decision`). A retry of a call another replica owns
 * goes there as it came (its `requestState`, read with the envelope, names the owner): the owner
 * reads it (its headers, its caller) as it would have from the client. A plain call touches none
 * of the fleet's checks.
 */
export function decide(core: FrontCore, message: Classified, header: HeaderGetter, sessionId: string | null, hop: string | null): Decision {
  const r = route(core, message, header, sessionId);
  const { forwarding } = core;
  if (!forwarding || r.kind === 'reply') return r;
  if (hop !== null) return { kind: 'verify-hop', hop, then: r };
  if (r.kind === 'legacy-handle' && sessionId) {
    const owner = forwarding.idOwner(sessionId);
    if (owner !== undefined) return { kind: 'forward-session', owner, session: sessionId, parsed: r.parsed };
  } else if (r.kind === 'serve' && r.envelope.retry?.requestState !== undefined) {
    const owner = forwarding.stateOwner(r.envelope.retry.requestState);
    if (owner !== undefined) return { kind: 'forward-call', owner, call: r.rpc };
  } else if (r.kind === 'serve' && isTaskMethod(r.rpc.method)) {
    // A task's requests go to the replica its id names: the one whose upstream runs it.
    const task = r.rpc.params?.['taskId'];
    const owner = typeof task === 'string' ? forwarding.idOwner(task) : undefined;
    if (owner !== undefined) return { kind: 'forward-call', owner, call: r.rpc, task: task as string };
  }
  // New work reaching a replica that drains goes to one that does not (the balancer sends some
  // until it notices), so no client sees this replica go.
  if (draining(core) && handedOver(r)) return { kind: 'hand-over', then: r };
  return r;
}
