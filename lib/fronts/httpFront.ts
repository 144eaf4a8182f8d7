/**
 * The wrap's Streamable HTTP front: one routing of POSTed messages (legacy session or modern
 * request, header and envelope checks, JSON or SSE answer), served two ways. `fetch` is the Web
 * handler for any runtime. `node` answers POSTed JSON on Node's own request and response objects,
 * without building a Web `Request` and `Response` per call (which costs more than everything else
 * the wrap does for a call); whatever else arrives there (GET, DELETE, a legacy session's requests)
 * goes through `fetch`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { claimedEra } from '../core/era.ts';
import type { ModernVersion } from '../core/era.ts';
import { ErrorCode } from '../core/errors.ts';
import { errorResponse, type Classified, type JsonRpcRequest } from '../core/jsonrpc.ts';
import { isRemovedInModern } from '../core/legacy/methods.ts';
import { readEnvelope, type Envelope } from '../core/translate/envelope.ts';
import { verifyHeaders } from '../core/translate/headers.ts';
import { Cancellation } from '../util/signals.ts';
import {
  bodyFailureMessage,
  bodyHeaderFailure,
  jsonError,
  jsonResponse,
  maxBodyBytes,
  originRefusal,
  probeRefusal,
  parseBody,
  principalFromHeaders,
  lazyEventStream,
  readBody,
  tooLarge,
  type EdgeLimits,
  type HeaderGetter,
  type OriginPolicy,
} from '../transport/httpEdge.ts';
import { nodeSse, viaFetch, webRequest, writeEmpty, writeJson, writeWebResponse } from '../transport/nodeHttp.ts';
import { exactJson } from '../transport/exactIds.ts';
import type { LegacyHttpSessions } from './legacyHttpSessions.ts';
import type { ProtectedResource } from './protectedResource.ts';
import { errorAnswer, HOP_HEADER, type Forwarding, type HopRequest, type Served } from './served.ts';
import { DEFAULTS } from '../util/defaults.ts';
import type { JsonObject } from '../core/primitives.ts';
import { RequestSpan } from '../observe/requestSpan.ts';
import { traceCarrier } from '../observe/traceContext.ts';

/** The span of a retry forwarded to the replica its call is parked on (nothing without an OpenTelemetry SDK). */
function forwardedSpan(rpc: JsonRpcRequest, header: HeaderGetter, owner: string): { end(): void } {
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

/** What a POSTed message gets. */
type Route =
  | { readonly kind: 'reply'; readonly status: number; readonly body?: unknown }
  | { readonly kind: 'legacy-open' | 'legacy-handle'; readonly parsed: unknown }
  | { readonly kind: 'serve'; readonly rpc: JsonRpcRequest; readonly envelope: Envelope; readonly streams: boolean };

/**
 * What the front does with a POSTed message, decided once for the Web and the Node adapters alike:
 * a route of its own (answer, serve, a legacy session's), or a step of the fleet before it: pass it
 * to the replica that owns its call or session, check a hop's signature first, or hand new work to
 * a ready replica while this one drains (`then` when none is ready).
 */
type Decision =
  | Route
  | {
      readonly kind: 'forward';
      readonly owner: string;
      readonly call?: JsonRpcRequest;
      readonly session?: string;
      readonly parsed: unknown;
    }
  | { readonly kind: 'verify-hop'; readonly hop: string; readonly then: Exclude<Route, { kind: 'reply' }> }
  | { readonly kind: 'hand-over'; readonly then: Exclude<Route, { kind: 'reply' }> };

/**
 * How long a streamed answer's head waits for its first message: a request refused at once (a
 * limit, with `Retry-After`) is then answered as JSON with its own status, not inside a stream.
 */
const HEAD_DELAY_MS = 100;

const NO_SESSION = 'Bad Request: No valid session ID provided';

const NO_SESSION_BATCH = 'Invalid Request: expected a JSON-RPC request (batches and responses belong to a legacy session)';

function noop(): void {}

/**
 * A body a framework already read (Express's `express.json()` leaves it on `req.body` with the
 * stream spent), as text, so the request is served as if it had been read here.
 */
function consumedBody(req: IncomingMessage): string | undefined {
  const body = (req as IncomingMessage & { body?: unknown }).body;
  if (body === undefined || !req.readableEnded) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return JSON.stringify(body);
}

/** Header names looked up, lower-cased once (Node's `req.headers` keys are lower case). */
const lowered = new Map<string, string>();
function lowerCase(name: string): string {
  let lower = lowered.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowered.size < 256) lowered.set(name, lower);
  }
  return lower;
}

/** The path of a request target or absolute URL, without building a URL object. */
function pathOf(url: string): string {
  const scheme = url.indexOf('//');
  const start = url.startsWith('/') ? 0 : url.indexOf('/', scheme === -1 ? 0 : scheme + 2);
  if (start === -1) return '/';
  let end = url.length;
  for (const c of ['?', '#']) {
    const i = url.indexOf(c, start);
    if (i !== -1 && i < end) end = i;
  }
  return url.slice(start, end);
}

const BAD_HOST = 'Invalid Request: the Host header names no valid host';

/**
 * The Web `Request` for a Node request; `undefined` when its Host header makes no URL (`localhost:x`
 * passes the loopback check). With `res`, its signal aborts when the client leaves before the
 * answer is written whole, as the Web listener's requests do.
 */
function asWebRequest(req: IncomingMessage, body?: string, res?: ServerResponse): Request | undefined {
  let signal: AbortSignal | undefined;
  if (res) {
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    signal = controller.signal;
  }
  try {
    return webRequest(req, body, signal);
  } catch {
    return undefined;
  }
}

/** The answer to a request that says it was forwarded by a replica of the fleet, and was not (or was, once before). */
const FORBIDDEN_HOP = errorBody(
  ErrorCode.InvalidRequest,
  'Forbidden: a forwarded request that no replica of this fleet sent to this one, or one taken already',
);

function forbiddenHop(): Response {
  return jsonResponse(FORBIDDEN_HOP, 403);
}

/** `request` as a hop's signature covers it, with `body` as the message it carries. */
function hopRequest(request: Request, sessionId: string | null, body: string): HopRequest {
  const url = new URL(request.url);
  return { method: request.method, path: `${url.pathname}${url.search}`, sessionId, body, header: (name) => request.headers.get(name) };
}

function errorBody(code: number, message: string): unknown {
  return { jsonrpc: '2.0', error: { code, message } };
}

/** Builds the front of a wrap. */
export function createHttpFront(config: HttpFrontConfig): HttpFront {
  const http = config.http;
  const serve = config.serve;
  const forwarding = config.forwarding;
  const path = http.path === undefined ? '/mcp' : http.path;
  const envelopeOptions = config.supportedVersions ? { supportedVersions: config.supportedVersions } : {};
  const keepAliveMs = http.keepAliveMs ?? DEFAULTS.keepAliveMs;
  const protectedResource = config.protectedResource;
  /** The upstream's challenges as a client of `requestUrl` is shown them (none unprotected). */
  const challengeFor = (requestUrl: () => string): ((upstream: string) => string) | undefined =>
    protectedResource ? (upstream) => protectedResource.challenge(upstream, requestUrl()) : undefined;

  // A listen says first whether it is served (its acknowledgement, or a refusal after waiting for a
  // session): its head waits for that, or for the first keep-alive.
  const headDelay = (rpc: JsonRpcRequest): number => (rpc.method === 'subscriptions/listen' ? keepAliveMs : HEAD_DELAY_MS);

  const route = (message: Classified, header: HeaderGetter, sessionId: string | null): Route => {
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
    const envelope = readEnvelope(rpc, envelopeOptions);
    if (!envelope.ok) return { kind: 'reply', status: envelope.error.status, body: errorAnswer(rpc.id, envelope.error).message };
    // A method refused whatever the server can do gets its 404 as JSON, even when it asked for a stream.
    const streams =
      (rpc.method === 'subscriptions/listen' || envelope.value.progressToken !== undefined || envelope.value.logLevel !== undefined) &&
      !isRemovedInModern(rpc.method) &&
      rpc.method !== 'tasks/update';
    return { kind: 'serve', rpc, envelope: envelope.value, streams };
  };

  const draining = (): boolean => config.health !== undefined && !config.health.ready();
  /** What a draining replica hands to another: new calls and new legacy sessions (a listen is refused: its client listens again). */
  const handedOver = (r: Route): boolean =>
    r.kind === 'legacy-open' ||
    (r.kind === 'serve' && r.rpc.method !== 'subscriptions/listen' && r.rpc.params?.['requestState'] === undefined);

  /**
   * The one decision on a POSTed message (see `Decision`). A retry of a call another replica owns
   * goes there as it came, before anything else is read of it: the owner reads it (its headers, its
   * envelope, its caller) as it would have from the client. A plain call touches none of the fleet's
   * checks.
   */
  const decide = (message: Classified, header: HeaderGetter, sessionId: string | null, hop: string | null): Decision => {
    if (forwarding && hop === null && sessionId === null && message.kind === 'request') {
      const owner = forwarding.ownerOf(message.message);
      if (owner !== undefined) return { kind: 'forward', owner, call: message.message, parsed: message.message };
    }
    const r = route(message, header, sessionId);
    if (!forwarding || r.kind === 'reply') return r;
    if (hop !== null) return { kind: 'verify-hop', hop, then: r };
    if (r.kind === 'legacy-handle' && sessionId) {
      const owner = forwarding.sessionOwner(sessionId);
      if (owner !== undefined) return { kind: 'forward', owner, session: sessionId, parsed: r.parsed };
    } else if (r.kind === 'serve' && sessionId !== null) {
      const owner = forwarding.ownerOf(r.rpc);
      if (owner !== undefined) return { kind: 'forward', owner, call: r.rpc, parsed: r.rpc };
    }
    // New work reaching a replica that drains goes to one that does not (the balancer sends some
    // until it notices), so no client sees this replica go.
    if (draining() && handedOver(r)) return { kind: 'hand-over', then: r };
    return r;
  };

  /** Whether `pathname` is one of the health or metrics endpoints this front serves. */
  const isProbe = (pathname: string): boolean =>
    (config.health !== undefined && (pathname === '/healthz' || pathname === '/readyz')) ||
    (config.metrics !== undefined && pathname === '/metrics');

  const fetch = async (request: Request): Promise<Response> => {
    const header: HeaderGetter = (name) => request.headers.get(name);
    if (request.method === 'GET' && isProbe(pathOf(request.url))) {
      // Health and metrics tell who asks what this replica is and does: no page a browser was led to may read them.
      const refused = probeRefusal(header, http);
      if (refused) return jsonError(refused.status, refused.code, refused.message);
    }
    if (config.health && request.method === 'GET') {
      const pathname = pathOf(request.url);
      if (pathname === '/healthz') return jsonResponse({ status: 'ok', ...config.health.info?.() }, 200);
      if (pathname === '/readyz')
        return config.health.ready() ? jsonResponse({ status: 'ready' }, 200) : jsonResponse({ status: 'draining' }, 503);
    }
    if (config.metrics && request.method === 'GET' && pathOf(request.url) === '/metrics') {
      const { body, contentType } = await config.metrics.text();
      return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
    }
    if (protectedResource && request.method === 'GET' && protectedResource.isMetadataPath(pathOf(request.url), path)) {
      const refused = originRefusal(header, http);
      if (refused) return jsonError(refused.status, refused.code, refused.message);
      return protectedResource.metadata(`${new URL(request.url).origin}${path ?? '/'}`);
    }
    if (path !== null) {
      const pathname = pathOf(request.url);
      if (pathname !== path) return jsonError(404, ErrorCode.MethodNotFound, `Not found: ${pathname}`);
    }
    // A hop between replicas is checked by its signature (below), not by Host and Origin.
    const hop = forwarding ? header(HOP_HEADER) : null;
    const refused = hop === null ? originRefusal(header, http) : undefined;
    if (refused) return jsonError(refused.status, refused.code, refused.message);
    const sessionId = header('mcp-session-id');
    if (request.method === 'GET' || request.method === 'DELETE') {
      if (sessionId && forwarding) {
        if (hop !== null) {
          if (!(await forwarding.verifyHop(hop, hopRequest(request, sessionId, '')))) return forbiddenHop();
        } else {
          const owner = forwarding.sessionOwner(sessionId);
          if (owner !== undefined) return forwarding.forward(owner, request, undefined, { session: sessionId });
        }
      }
      if (sessionId) return config.legacy.handle(request);
      return new Response(null, { status: 405, headers: { allow: 'POST' } });
    }
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
    const body = await readBody(request, http);
    if (!body.ok) return jsonResponse(bodyFailureMessage(body.error), body.error.status);
    return carryOut(decide(body.value, header, sessionId, hop), request, header, sessionId);
  };

  /** Carries a decision out on a Web `Request`. */
  const carryOut = async (d: Decision, request: Request, header: HeaderGetter, sessionId: string | null): Promise<Response> => {
    switch (d.kind) {
      case 'forward':
        if (d.call) {
          const span = forwardedSpan(d.call, header, d.owner);
          return forwarding!.forward(d.owner, request, exactJson(d.parsed), { call: d.call.id }).finally(() => span.end());
        }
        return forwarding!.forward(d.owner, request, exactJson(d.parsed), { session: d.session! });
      case 'verify-hop': {
        // A hop is served here only when a replica of the fleet signed it.
        const r = d.then;
        const signed = hopRequest(request, r.kind === 'serve' ? null : sessionId, exactJson(r.kind === 'serve' ? r.rpc : r.parsed));
        return (await forwarding!.verifyHop(d.hop, signed)) ? carryOut(r, request, header, sessionId) : forbiddenHop();
      }
      case 'hand-over': {
        const r = d.then;
        const peer = await forwarding!.readyPeer();
        if (peer === undefined) return carryOut(r, request, header, sessionId);
        return forwarding!.forward(peer, request, exactJson(r.kind === 'serve' ? r.rpc : r.parsed), {
          handedOver: r.kind === 'serve' ? r.rpc.id : null,
        });
      }
      case 'reply':
        return d.body === undefined ? new Response(null, { status: d.status }) : jsonResponse(d.body, d.status);
      case 'legacy-handle':
        return config.legacy.handle(request, d.parsed);
      case 'legacy-open':
        return config.legacy.open(request, d.parsed);
      case 'serve':
        break;
    }
    const principal = http.principal ? http.principal(request) : principalFromHeaders(header);
    const { rpc, envelope } = d;
    const challenge = challengeFor(() => request.url);
    if (!d.streams) {
      const answer = await serve!(rpc, { principal, signal: request.signal, envelope, notify: noop, headers: header, challenge });
      return answer
        ? jsonResponse(answer.message, answer.status, answer.headers ? { ...answer.headers } : {})
        : new Response(null, { status: 204 });
    }
    const gone = new Cancellation();
    request.signal.addEventListener('abort', () => gone.abort(), { once: true });
    return lazyEventStream(
      (writer) => serve!(rpc, { principal, signal: gone, envelope, notify: (n) => writer.send(n), headers: header, challenge }),
      { onCancel: () => gone.abort(), keepAliveMs, headDelayMs: headDelay(rpc) },
    );
  };

  let throughFetch: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  /** Serves a Node request through the Web handler; `body`, when given, is the body already read (the Web listener reads it from `rawBody`). */
  const throughWeb = (req: IncomingMessage, res: ServerResponse, body?: string): void => {
    if (body !== undefined) (req as IncomingMessage & { rawBody?: Buffer }).rawBody = Buffer.from(body);
    (throughFetch ??= viaFetch(fetch))(req, res);
  };
  const maxBytes = maxBodyBytes(http);

  const answerNode = (req: IncomingMessage, res: ServerResponse, header: HeaderGetter, text: string, hop: string | undefined): void => {
    const body = parseBody(text, http);
    if (!body.ok) return writeJson(res, body.error.status, bodyFailureMessage(body.error));
    const d = decide(body.value, header, null, hop ?? null);
    switch (d.kind) {
      case 'forward': {
        // A retry another replica owns goes there as it came (a session's requests never come this way).
        const span = forwardedSpan(d.call!, header, d.owner);
        res.once('close', () => span.end());
        return forwarding!.forwardCall(d.owner, req, res, text, d.call!.id);
      }
      case 'verify-hop': {
        // A hop of the fleet: a call (a retry its sender found this replica owns) is checked and
        // served here, on Node's objects, from the body as read; the rest through the Web handler.
        const r = d.then;
        if (r.kind !== 'serve') return throughWeb(req, res, text);
        const signed: HopRequest = { method: 'POST', path: req.url ?? '/', sessionId: null, body: text, header };
        void forwarding!.verifyHop(d.hop, signed).then(
          (ok) => (ok ? serveRpc(req, res, header, r) : writeJson(res, 403, FORBIDDEN_HOP)),
          () => writeJson(res, 500, errorResponse(r.rpc.id, { code: ErrorCode.InternalError, message: 'Internal error' })),
        );
        return;
      }
      case 'hand-over':
        // Handed to a ready replica through the Web handler, which streams its answer and carries a close.
        return throughWeb(req, res, text);
      case 'reply':
        return d.body === undefined ? writeEmpty(res, d.status) : writeJson(res, d.status, d.body);
      case 'legacy-handle':
      case 'legacy-open': {
        const request = asWebRequest(req, text, res);
        if (!request) return writeJson(res, 400, errorBody(ErrorCode.InvalidRequest, BAD_HOST));
        const answer = d.kind === 'legacy-open' ? config.legacy.open(request, d.parsed) : config.legacy.handle(request, d.parsed);
        void answer.then((response) => writeWebResponse(res, response)).catch(() => res.destroy());
        return;
      }
      case 'serve':
        return serveRpc(req, res, header, d);
    }
  };

  /** Serves a modern request on Node's objects. */
  const serveRpc = (req: IncomingMessage, res: ServerResponse, header: HeaderGetter, r: Extract<Route, { kind: 'serve' }>): void => {
    const { rpc, envelope } = r;
    let principal: string;
    if (http.principal) {
      const request = asWebRequest(req);
      if (!request) return writeJson(res, 400, errorBody(ErrorCode.InvalidRequest, BAD_HOST));
      principal = http.principal(request);
    } else principal = principalFromHeaders(header);
    const gone = new Cancellation();
    const challenge = challengeFor(() => `http://${header('host') ?? 'localhost'}${req.url ?? '/'}`);
    if (!r.streams) {
      const onClose = () => {
        if (!res.writableEnded) gone.abort();
      };
      res.on('close', onClose);
      serve!(rpc, { principal, signal: gone, envelope, notify: noop, headers: header, challenge }).then(
        (answer) => {
          res.removeListener('close', onClose);
          if (res.destroyed) return;
          if (answer) writeJson(res, answer.status, answer.message, answer.headers);
          else writeEmpty(res, 204);
        },
        () => {
          res.removeListener('close', onClose);
          if (!res.destroyed) writeJson(res, 500, errorResponse(rpc.id, { code: ErrorCode.InternalError, message: 'Internal error' }));
        },
      );
      return;
    }
    const writer = nodeSse(res, { onCancel: () => gone.abort(), keepAliveMs, headDelayMs: headDelay(rpc) });
    serve!(rpc, { principal, signal: gone, envelope, notify: (n) => writer.send(n), headers: header, challenge }).then(
      (answer) => {
        // An answer before anything was streamed, with a status of its own (a refusal), goes out as JSON.
        if (answer && answer.status !== 200 && !writer.started && !writer.closed) {
          writer.release();
          return writeJson(res, answer.status, answer.message, answer.headers);
        }
        if (answer) writer.send(answer.message);
        writer.close();
      },
      () => writer.close(),
    );
  };

  /** GET streams open on Node's objects, ended by `endStreams`. */
  const streams = new Set<ServerResponse>();
  let streamsEnded = false;
  const node = (req: IncomingMessage, res: ServerResponse): void => {
    const headers = req.headers;
    if (req.method === 'GET' && headers['mcp-session-id'] !== undefined) {
      // After `endStreams`, a stream opened again on a connection kept from before is cut before
      // its answer begins: a balancer sends a GET so cut to another server.
      if (streamsEnded) return void req.socket.destroy();
      streams.add(res);
      res.once('close', () => streams.delete(res));
    }
    // A replica that drains keeps no connection open: the balancer's next request connects anew
    // and, once this replica has stopped listening, is refused before it is sent (and goes elsewhere).
    if (forwarding && draining()) res.shouldKeepAlive = false;
    const consumed = consumedBody(req);
    if (req.method !== 'POST' || headers['mcp-session-id'] !== undefined) {
      return throughWeb(req, res, consumed);
    }
    const header: HeaderGetter = (name) => {
      const value = headers[lowerCase(name)];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    };
    if (path !== null) {
      const pathname = pathOf(req.url ?? '/');
      if (pathname !== path) return writeJson(res, 404, errorBody(ErrorCode.MethodNotFound, `Not found: ${pathname}`));
    }
    // A hop between replicas is checked by its signature (once read), not by Host and Origin.
    const hopHeader = forwarding ? headers[HOP_HEADER] : undefined;
    const hop = Array.isArray(hopHeader) ? hopHeader.join(', ') : hopHeader;
    const refused = hop === undefined ? originRefusal(header, http) : undefined;
    if (refused) return writeJson(res, refused.status, errorBody(refused.code, refused.message));
    const early = bodyHeaderFailure(header, http);
    if (early) {
      res.setHeader('connection', 'close');
      return writeJson(res, early.status, bodyFailureMessage(early));
    }
    if (consumed !== undefined) {
      if (Buffer.byteLength(consumed) <= maxBytes) return answerNode(req, res, header, consumed, hop);
      const failure = tooLarge(maxBytes);
      return writeJson(res, failure.status, bodyFailureMessage(failure));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      over = true;
      chunks.length = 0;
      const failure = tooLarge(maxBytes);
      res.setHeader('connection', 'close');
      writeJson(res, failure.status, bodyFailureMessage(failure));
    });
    req.on('end', () => {
      if (over) return;
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      // A byte order mark is skipped, as the Web handler's UTF-8 decoding does.
      answerNode(req, res, header, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, hop);
    });
    req.on('error', noop);
  };

  const endStreams = (): void => {
    streamsEnded = true;
    for (const res of streams) res.destroy();
    streams.clear();
  };

  return { fetch, node, endStreams };
}
