/**
 * `wrapModernServer(backend)`: a modern-only server served to legacy clients, over stdio and
 * sessionful Streamable HTTP. Each legacy session is a `LegacyClientBridge` (the translation of
 * `wrapLegacyClient`, placed in front of the server); all sessions share one upstream, since a
 * modern server keeps no per-connection state. The HTTP front is the v1 SDK's own Streamable HTTP
 * server transport, one per session, so sessions, the GET stream and pushes on the right stream
 * behave as legacy clients expect. Node-only (spawning a stdio server, our own stdio).
 */
import type { Readable, Writable } from 'node:stream';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { errorResponse, type JsonRpcMessage } from '../../core/jsonrpc.ts';
import { isRecord } from '../../core/primitives.ts';
import { bodyFailureMessage, checkOrigin, jsonError, jsonResponse, readBody, refusalResponse, requestPrincipal, type EdgeLimits, type OriginPolicy } from '../../transport/httpEdge.ts';
import { LegacySessionTable, type LegacySessionLimits } from '../../fronts/legacySessionTable.ts';
import { frame, LineFramer } from '../../transport/lineFramer.ts';
import type { ModernUpstream } from '../../transport/modernUpstream.ts';
import { StdioChildTransport, type StdioChildOptions } from '../../transport/stdioChild.ts';
import type { MessageExtra } from '../../transport/transport.ts';
import { DiscoverCache, LegacyClientBridge, type LegacyClientBridgeOptions } from '../legacyClient/legacyClientBridge.ts';
import { modernUpstream, type ModernServerTarget } from '../legacyClient/wrapLegacyClient.ts';

/** Where the modern server is: anything `wrapLegacyClient` takes, or a command to spawn. */
export type ModernBackend = ModernServerTarget | (StdioChildOptions & { readonly command: string });

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
}

/** A modern server served to legacy clients. */
export interface ModernServerWrap {
  /** The shared upstream. */
  readonly upstream: ModernUpstream;
  /** Sessionful Streamable HTTP for legacy clients, as a Web `fetch` handler. */
  fetch(request: Request): Promise<Response>;
  /**
   * Serves one legacy session on a pair of streams (default our own stdin/stdout) until the input
   * ends; then the wrap closes too unless `closeOnEnd` is false.
   */
  serveStdio(options?: { input?: Readable; output?: Writable; closeOnEnd?: boolean }): { done: Promise<void>; close(): Promise<void> };
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

function hasInitialize(body: unknown): boolean {
  const items = Array.isArray(body) ? body : [body];
  return items.some((m) => isRecord(m) && m['method'] === 'initialize' && 'id' in m);
}

interface HttpSession {
  readonly front: WebStandardStreamableHTTPServerTransport;
  readonly bridge: LegacyClientBridge;
}

/** Serves a modern-only server to legacy clients. */
export function wrapModernServer(backend: ModernBackend, options: WrapModernServerOptions = {}): ModernServerWrap {
  const upstream = isCommand(backend) ? modernUpstream(new StdioChildTransport(backend)) : modernUpstream(backend as ModernServerTarget);
  const cache = options.discoverCache ?? new DiscoverCache();
  const bridgeOptions: LegacyClientBridgeOptions & { ownsUpstream: boolean } = { ...options, discoverCache: cache, ownsUpstream: false };
  const path = options.path === undefined ? '/mcp' : options.path;
  const principalOf = requestPrincipal(options.principal);
  const sessions = new LegacySessionTable<HttpSession>(options.sessions ?? {}, (s) => {
    void s.front.close().catch(() => {});
    void s.bridge.close();
  });
  const open = new Set<LegacyClientBridge>();
  let closing: Promise<void> | undefined;

  const session = (): LegacyClientBridge => {
    const bridge = new LegacyClientBridge(upstream, bridgeOptions);
    open.add(bridge);
    const onclose = bridge.onclose;
    bridge.onclose = () => {
      open.delete(bridge);
      onclose?.();
    };
    return bridge;
  };

  const openHttp = async (request: Request, parsedBody: unknown): Promise<Response> => {
    const admitted = sessions.admit(principalOf(request));
    if (!admitted.ok) return refusalResponse(admitted.refusal);
    const ticket = admitted.ticket;
    const bridge = session();
    let sessionId: string | undefined;
    const front = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => {
        sessionId = sid;
        ticket.commit(sid, { front, bridge });
      },
      onsessionclosed: (sid) => {
        sessions.delete(sid);
        void bridge.close();
      },
    });
    front.onmessage = (message) => {
      bridge.send(message as JsonRpcMessage).catch(() => {});
    };
    front.onclose = () => {
      if (sessionId) sessions.delete(sessionId);
      void bridge.close();
    };
    bridge.onmessage = (message, extra) => {
      const related = (extra as MessageExtra | undefined)?.relatedRequestId;
      front.send(message as never, related === undefined ? undefined : { relatedRequestId: related }).catch(() => {});
    };
    bridge.onclose = () => {
      open.delete(bridge);
      if (sessionId) sessions.delete(sessionId);
      void front.close();
    };
    try {
      await bridge.start();
      await front.start();
      const response = await front.handleRequest(request, { parsedBody });
      if (!sessionId) void bridge.close();
      return response;
    } finally {
      if (!sessionId) ticket.cancel();
    }
  };

  const wrap: ModernServerWrap = {
    upstream,
    get sessions() {
      return sessions.size;
    },
    session,
    async fetch(request: Request): Promise<Response> {
      const refused = checkOrigin(request, options.origins);
      if (refused) return refused;
      if (path !== null && new URL(request.url).pathname !== path) return jsonError(404, -32601, 'Not found');
      if (closing) return jsonError(503, -32603, 'The server is shutting down');
      // A body is read within the limit (413 beyond) before anything else is done with it.
      let parsed: unknown;
      if (request.method === 'POST') {
        const body = await readBody(request, options.limits ?? {});
        if (!body.ok) return jsonResponse(bodyFailureMessage(body.error), body.error.status);
        parsed = body.value.kind === 'batch' ? body.value.items : body.value.message;
      }
      if (request.headers.get('mcp-session-id')) return sessions.serve(request, principalOf(request), (found) => found.front.handleRequest(request, parsed === undefined ? undefined : { parsedBody: parsed }));
      if (request.method !== 'POST') return jsonError(405, -32000, 'Method not allowed: open a session with initialize first');
      if (!hasInitialize(parsed)) return jsonError(400, -32000, 'Bad Request: No valid session ID provided');
      return openHttp(request, parsed);
    },
    serveStdio(streams = {}) {
      const input = streams.input ?? process.stdin;
      const output = streams.output ?? process.stdout;
      const bridge = session();
      const write = (m: unknown) => {
        if (output.writable) output.write(frame(m));
      };
      bridge.onmessage = (m) => write(m);
      const started = bridge.start();
      const framer = new LineFramer((line) => {
        let message: unknown;
        try {
          message = JSON.parse(line);
        } catch {
          write(errorResponse(null, { code: -32700, message: 'Parse error' }));
          return;
        }
        void started.then(() => bridge.send(message as JsonRpcMessage)).catch(() => {});
      });
      let finish!: () => void;
      const done = new Promise<void>((resolve) => (finish = resolve));
      let ended = false;
      const end = async () => {
        if (ended) return;
        ended = true;
        framer.end();
        await bridge.close();
        if (streams.closeOnEnd !== false) await wrap.close();
        finish();
      };
      input.on('data', (chunk: Buffer | string) => framer.push(typeof chunk === 'string' ? chunk : new Uint8Array(chunk)));
      input.once('end', () => void end());
      input.once('close', () => void end());
      return {
        done,
        async close() {
          input.pause();
          await end();
        },
      };
    },
    close() {
      closing ??= (async () => {
        const all = sessions.drain();
        await Promise.all(all.map((s) => s.front.close().catch(() => {})));
        await Promise.all([...open].map((b) => b.close()));
        await upstream.close();
      })();
      return closing;
    },
  };
  return wrap;
}
