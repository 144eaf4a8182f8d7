/**
 * `wrapModernServer(backend)`: a modern-only server served to legacy clients, over stdio and
 * sessionful Streamable HTTP. Each legacy session is a `LegacyClientBridge` (the translation of
 * `wrapLegacyClient`, placed in front of the server); all sessions share one upstream, since a
 * modern server keeps no per-connection state. A modern client's requests are the server's own
 * business: they pass through to it as they are, and its answers come back as they are. Served
 * through the same fronts as every wrap (the HTTP front's legacy sessions and modern requests, the
 * stdio line server). Node-only (spawning a stdio server).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpFront } from '../../fronts/httpFront.ts';
import { LegacyHttpSessions } from '../../fronts/legacyHttpSessions.ts';
import type { LegacySessionLimits } from '../../fronts/legacySessionTable.ts';
import { errorAnswer, type Answer, type ModernContext, type Served, type SessionSource } from '../../fronts/served.ts';
import { httpStatusForError } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import { closedReason, upstreamUnavailable } from '../../util/upstreamFailure.ts';
import { RelayTelemetry } from '../../observe/relayTelemetry.ts';
import type { Fleet } from '../../fleet/fleet.ts';
import { serveStdio, type RunningStdioFront, type StdioFrontOptions } from '../../fronts/stdioFront.ts';
import { requestPrincipal, type EdgeLimits, type OriginPolicy } from '../../transport/httpEdge.ts';
import type { ModernUpstream } from '../../transport/modernUpstream.ts';
import { StdioChildTransport, type StdioChildOptions } from '../../transport/stdioChild.ts';
import { DiscoverCache, LegacyClientBridge, type LegacyClientBridgeOptions } from '../legacyClient/legacyClientBridge.ts';
import { modernUpstream, type ModernServerTarget } from '../legacyClient/wrapLegacyClient.ts';

/** Where the modern server is: anything `wrapLegacyClient` takes, or a command to spawn. */
export type ModernBackend = ModernServerTarget | (StdioChildOptions & { readonly command: string });

/** Options of {@link wrapModernServer}: the bridge's options and how the legacy sessions are served. */
export interface WrapModernServerOptions extends LegacyClientBridgeOptions {
  /** HTTP: the endpoint path (default `/mcp`; `null` serves any path). */
  readonly path?: string | null;
  /** HTTP: accepted Origin and Host values (default loopback only). */
  readonly origins?: OriginPolicy;
  /** HTTP: the largest accepted body (413 beyond, default 4 MiB) and the deepest JSON nesting (default 64). */
  readonly limits?: EdgeLimits;
  /**
   * HTTP: the legacy sessions, in all (default 32) and per principal (default 16), and the idle
   * time after which one is closed (default 15 minutes; its client gets 404 and initializes again).
   */
  readonly sessions?: LegacySessionLimits;
  /** HTTP: who is asking (a session answers only the principal that opened it); default: the `Authorization` header. */
  readonly principal?: (request: Request) => string;
  /**
   * A replica of a fleet (`await joinFleet({ redis })`): each legacy session's id names this
   * replica, and a session's requests that land on another replica are forwarded here; the HTTP
   * front answers `GET /healthz` and `GET /readyz`. Register the replica (`fleet.register(url)`) once it listens.
   */
  readonly fleet?: Fleet;
}

/** A modern server served to legacy clients; on stdio by `serveStdio(wrap)` as well. */
export interface ModernServerWrap extends Served {
  /** The shared upstream. */
  readonly upstream: ModernUpstream;
  /** Sessionful Streamable HTTP for legacy clients, as a Web `fetch` handler. */
  fetch(request: Request): Promise<Response>;
  /** The same endpoint as a Node `http` request listener (`serveNodeHttp(wrap)` uses it). */
  node(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Serves one legacy session on a pair of streams (default our own stdin/stdout) until the input
   * ends; then the wrap closes too unless `closeOnEnd` is false. The same as `serveStdio(wrap, options)`.
   */
  serveStdio(options?: StdioFrontOptions): RunningStdioFront;
  /** Opens one legacy session as a `Transport` (what the HTTP and stdio fronts each do per session). */
  session(): LegacyClientBridge;
  /** Legacy HTTP sessions open now. */
  readonly sessions: number;
  /** Ends every session and the upstream. Idempotent. */
  close(): Promise<void>;
}

function isCommand(backend: ModernBackend): backend is StdioChildOptions & { command: string } {
  return typeof backend === 'object' && !(backend instanceof URL) && 'command' in backend && typeof backend.command === 'string';
}

/** Serves a modern-only server to legacy clients. */
export function wrapModernServer(backend: ModernBackend, options: WrapModernServerOptions = {}): ModernServerWrap {
  const upstream = isCommand(backend) ? modernUpstream(new StdioChildTransport(backend)) : modernUpstream(backend as ModernServerTarget);
  const cache = options.discoverCache ?? new DiscoverCache();
  const bridgeOptions: LegacyClientBridgeOptions & { ownsUpstream: boolean } = { ...options, discoverCache: cache, ownsUpstream: false };
  const open = new Set<LegacyClientBridge>();

  // Every bridge is tracked until it closes, however it closes (its own close, or a front's):
  // `onclose` is left to whoever serves it.
  const session = (): LegacyClientBridge => {
    const bridge = new LegacyClientBridge(upstream, bridgeOptions);
    open.add(bridge);
    const close = bridge.close.bind(bridge);
    bridge.close = async () => {
      open.delete(bridge);
      await close();
    };
    return bridge;
  };
  const source: SessionSource = {
    connect: async () => session(),
    observe: (transport) => RelayTelemetry.of({ transport, clientEra: 'legacy', serverEra: 'modern' }),
  };
  const serveModern = (request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined> => passThrough(upstream, request, ctx);
  const fleet = options.fleet;
  const legacy = new LegacyHttpSessions(source, {
    ...(options.sessions ?? {}),
    principal: requestPrincipal(options.principal),
    ...(fleet ? { sessionId: fleet.forwarding.ownedId } : {}),
  });
  const front = createHttpFront({
    http: {
      path: options.path === undefined ? '/mcp' : options.path,
      ...(options.limits ?? {}),
      ...(options.origins ?? {}),
      ...(options.principal ? { principal: options.principal } : {}),
    },
    legacy,
    serve: serveModern,
    ...(fleet ? { forwarding: fleet.forwarding, health: { ready: () => !closing, info: () => ({ ...fleet.info() }) } } : {}),
  });

  let closing: Promise<void> | undefined;
  const wrap: ModernServerWrap = {
    upstream,
    legacy: source,
    serveModern,
    get sessions() {
      return legacy.size;
    },
    session,
    fetch: front.fetch,
    node: front.node,
    serveStdio: (streams = {}) => serveStdio(wrap, streams),
    close() {
      closing ??= (async () => {
        await legacy.close();
        await Promise.all([...open].map((b) => b.close()));
        await upstream.close();
      })();
      return closing;
    },
  };
  return wrap;
}

/**
 * A modern client's request, sent to the modern server as it is: its answer as the server gave it
 * (an error answer with the HTTP status its code calls for), its notifications on the request's
 * own stream; the client gone cancels it upstream (no answer then); the server unreachable is said
 * as such.
 */
async function passThrough(upstream: ModernUpstream, request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined> {
  const controller = new AbortController();
  const cancel = () => controller.abort();
  if (ctx.signal.aborted) return undefined;
  ctx.signal.addEventListener('abort', cancel, { once: true });
  try {
    const message = await upstream.request(request, { signal: controller.signal, onNotification: ctx.notify });
    return { message, status: 'error' in message && message.error ? httpStatusForError(message.error) : 200 };
  } catch (e) {
    if (ctx.signal.aborted) return undefined;
    const gone = upstream.gone;
    const error =
      gone !== undefined
        ? upstreamUnavailable(`it ${closedReason(gone.failure, 'before it answered')}`, gone.failure)
        : upstreamUnavailable(e instanceof Error ? e.message : String(e));
    return errorAnswer(request.id, { ...error, status: 502 });
  } finally {
    ctx.signal.removeEventListener('abort', cancel);
  }
}
