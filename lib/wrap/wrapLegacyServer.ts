/**
 * `wrapLegacyServer`: one dual-era endpoint in front of an unmodified legacy server. Modern
 * requests (their `_meta` names a modern version) are served statelessly through pooled upstream
 * sessions; an `initialize` opens a legacy session relayed untouched. Serves Streamable HTTP as a
 * Web `fetch` handler; the stdio front and the Node listener build on the same object.
 */
import { createEmitter, type Emitter } from '../events.ts';
import { scope, type Scope } from '../signals.ts';
import { claimedEra } from '../core/era.ts';
import { ErrorCode } from '../core/errors.ts';
import type { ModernVersion } from '../core/era.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import type { Implementation } from '../core/primitives.ts';
import type { CacheDefaults } from '../core/translate/context.ts';
import { readEnvelope } from '../core/translate/envelope.ts';
import { verifyHeaders } from '../core/translate/headers.ts';
import { inProcessBackend, type Backend, type ConnectableServer } from '../session/backend.ts';
import { SessionPool, type SessionKey } from '../session/pool.ts';
import type { RpcOutcome } from '../session/upstreamSession.ts';
import { checkOrigin, jsonError, jsonResponse, readBody, sseResponse, type EdgeLimits, type OriginPolicy } from '../transport/httpEdge.ts';
import { LegacyHttpSessions } from './legacyHttpSessions.ts';
import { ListenHub } from './listen.ts';
import { ToolIndex } from './toolIndex.ts';
import { errorAnswer, serveModern, type Answer, type InputBroker, type ModernContext, type ModernDispatchOptions } from './modernDispatch.ts';
import { MrtrBroker, type MrtrOptions } from './mrtr.ts';

export interface WrapLegacyServerOptions {
  /** The legacy server: a backend (`stdioBackend`, `httpBackend`, `inProcessBackend`), or an SDK server or factory. */
  readonly upstream: Backend | ConnectableServer | (() => ConnectableServer | Promise<ConnectableServer>);
  /** Server info on modern results; default: the upstream's own. */
  readonly serverInfo?: Implementation;
  /** Caching hints on cacheable results; default none (`ttlMs: 0`, `private`). */
  readonly cache?: CacheDefaults;
  readonly supportedVersions?: readonly ModernVersion[];
  /** Roots answered to a `roots/list` the server sends outside any call. */
  readonly roots?: ReadonlyArray<{ uri: string; name?: string }>;
  /**
   * Upstream session pool bounds: sessions in all (default 64), per principal and capability set
   * (default 16: calls that push each get a session of their own, so their pushes are never
   * ambiguous), and the idle time before one is closed.
   */
  readonly sessions?: { readonly max?: number; readonly perKey?: number; readonly idleMs?: number };
  /** Deadline for one upstream call (default 5 minutes). */
  readonly requestTimeoutMs?: number;
  /** HTTP edge: path (default `/mcp`; `null` serves any path), limits, Origin/Host policy, principal. */
  readonly http?: EdgeLimits &
    OriginPolicy & {
      readonly path?: string | null;
      readonly principal?: (request: Request) => string;
      readonly keepAliveMs?: number;
    };
  /** MRTR for the server's own pushes: the suspend-mode options, or a broker of your own. */
  readonly mrtr?: MrtrOptions | InputBroker;
}

export type WrapEvents = {
  'upstream-closed': { key: SessionKey; reason: string };
  'unrelated-push': { method: string };
};

/** A running wrap. */
export interface LegacyServerWrap {
  /** The Streamable HTTP endpoint as a Web `fetch` handler. */
  fetch(request: Request): Promise<Response>;
  /** Serves one modern request (any transport); `undefined` when the client left a listen. */
  serveModern(request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined>;
  readonly events: Emitter<WrapEvents>;
  readonly pool: SessionPool;
  readonly backend: Backend;
  /** Answers or cancels everything in flight, ends listens, closes every upstream session. Idempotent. */
  close(): Promise<void>;
}

function toBackend(upstream: WrapLegacyServerOptions['upstream']): Backend {
  if (typeof upstream === 'object' && upstream !== null && 'kind' in upstream && 'connect' in upstream && typeof (upstream as Backend).describe === 'string') return upstream as Backend;
  return inProcessBackend(upstream as ConnectableServer);
}

/** The path of an absolute URL, without building a URL object for every request. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start === -1) return '/';
  let end = url.length;
  for (const c of ['?', '#']) {
    const i = url.indexOf(c, start);
    if (i !== -1 && i < end) end = i;
  }
  return url.slice(start, end);
}

function defaultPrincipal(request: Request): string {
  const auth = request.headers.get('authorization');
  return auth ? `auth:${auth}` : 'anonymous';
}

/** Wraps a legacy server so modern and legacy clients can both use it. */
export function wrapLegacyServer(options: WrapLegacyServerOptions): LegacyServerWrap {
  const events = createEmitter<WrapEvents>();
  const backend = toBackend(options.upstream);
  const hub = new ListenHub();
  const tools = new ToolIndex();
  const shutdown = new AbortController();
  /** Every request being served: aborted together on shutdown. */
  const active = new Set<Scope>();
  const unrelated = async (_key: SessionKey, push: JsonRpcRequest): Promise<RpcOutcome> => {
    events.emit('unrelated-push', { method: push.method });
    switch (push.method) {
      case 'roots/list':
        return { result: { roots: (options.roots ?? []).map((r) => ({ ...r })) } };
      case 'elicitation/create':
        return { result: { action: 'decline' } };
      default:
        return { error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method} cannot reach a client outside a request` } };
    }
  };
  const pool = new SessionPool(backend, {
    ...(options.sessions?.max !== undefined ? { maxSessions: options.sessions.max } : {}),
    ...(options.sessions?.idleMs !== undefined ? { idleMs: options.sessions.idleMs } : {}),
    ...(options.sessions?.perKey !== undefined ? { maxPerKey: options.sessions.perKey } : {}),
    onUnrelatedPush: unrelated,
    onNotification: (_key, session, method, params) => {
      if (method === 'notifications/tools/list_changed') tools.invalidate(session);
      hub.dispatch(session, method, params);
    },
    onSessionClosed: (key, reason) => events.emit('upstream-closed', { key, reason }),
  });
  const legacy = new LegacyHttpSessions(backend);
  const inputs: InputBroker = options.mrtr && 'run' in options.mrtr ? options.mrtr : new MrtrBroker(options.mrtr ?? {});
  const dispatch: ModernDispatchOptions = {
    pool,
    ...(options.serverInfo ? { serverInfo: options.serverInfo } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
    ...(options.supportedVersions ? { supportedVersions: options.supportedVersions } : {}),
    ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    inputs,
    tools,
  };
  const http = options.http ?? {};
  const path = http.path === undefined ? '/mcp' : http.path;

  const serve = async (request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined> => {
    if (shutdown.signal.aborted) return errorAnswer(request.id, { code: ErrorCode.InternalError, message: 'Internal error: the server is shutting down' });
    const own = scope([ctx.signal]);
    active.add(own);
    try {
      const linked: ModernContext = { ...ctx, signal: own.signal };
      if (request.method === 'subscriptions/listen') return await hub.serve(request, linked, dispatch);
      return await serveModern(request, linked, dispatch);
    } finally {
      active.delete(own);
      own.dispose();
    }
  };

  const fetchHandler = async (request: Request): Promise<Response> => {
    if (path !== null) {
      const pathname = pathOf(request.url);
      if (pathname !== path) return jsonError(404, ErrorCode.MethodNotFound, `Not found: ${pathname}`);
    }
    const forbidden = checkOrigin(request, http);
    if (forbidden) return forbidden;
    const sessionId = request.headers.get('mcp-session-id');
    if (request.method === 'GET' || request.method === 'DELETE') {
      if (sessionId && legacy.size > 0) return legacy.handle(request);
      return new Response(null, { status: 405, headers: { allow: 'POST' } });
    }
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
    const body = await readBody(request, http);
    if (!body.ok) return jsonResponse({ jsonrpc: '2.0', ...(body.error.id === null ? {} : { id: body.error.id }), error: { code: body.error.code, message: body.error.message } }, body.error.status);
    const message = body.value;
    const parsed = message.kind === 'batch' ? message.items : message.message;
    if (sessionId && (message.kind !== 'request' || claimedEra(message.message) !== 'modern')) return legacy.handle(request, parsed);
    if (message.kind === 'request' && message.message.method === 'initialize' && claimedEra(message.message) === 'legacy') return legacy.open(request, parsed);
    if (message.kind === 'notification') return new Response(null, { status: 202 });
    if (message.kind !== 'request') return jsonError(400, ErrorCode.InvalidRequest, 'Invalid Request: expected a JSON-RPC request (batches and responses belong to a legacy session)');
    const rpc = message.message;
    if (claimedEra(rpc) === 'modern') {
      const headers = verifyHeaders(rpc, (name) => request.headers.get(name));
      if (!headers.ok) return jsonResponse(errorAnswer(rpc.id, headers.error).message, 400);
    }
    const envelope = readEnvelope(rpc, options.supportedVersions ? { supportedVersions: options.supportedVersions } : {});
    if (!envelope.ok) return jsonResponse(errorAnswer(rpc.id, envelope.error).message, envelope.error.status);
    const principal = (http.principal ?? defaultPrincipal)(request);
    const streams = rpc.method === 'subscriptions/listen' || envelope.value.progressToken !== undefined || envelope.value.logLevel !== undefined;
    if (!streams) {
      const answer = await serve(rpc, { principal, signal: request.signal, notify: () => {}, headers: (name) => request.headers.get(name) });
      return answer ? jsonResponse(answer.message, answer.status) : new Response(null, { status: 204 });
    }
    const gone = scope([request.signal]);
    return sseResponse(
      (writer) => {
        const ctx: ModernContext = { principal, signal: gone.signal, notify: (n) => writer.send(n), headers: (name) => request.headers.get(name) };
        serve(rpc, ctx).finally(() => gone.dispose()).then(
          (answer) => {
            if (answer) writer.send(answer.message);
            writer.close();
          },
          () => writer.close(),
        );
      },
      { onCancel: () => gone.abort(), ...(http.keepAliveMs !== undefined ? { keepAliveMs: http.keepAliveMs } : { keepAliveMs: 15_000 }) },
    );
  };

  let closing: Promise<void> | undefined;
  return {
    fetch: fetchHandler,
    serveModern: serve,
    events,
    pool,
    backend,
    close() {
      closing ??= (async () => {
        hub.closeAll();
        if (inputs instanceof MrtrBroker) inputs.close();
        await new Promise((r) => setTimeout(r, 0));
        shutdown.abort();
        for (const s of active) s.abort();
        await Promise.all([pool.close(), legacy.close()]);
      })();
      return closing;
    },
  };
}

