/**
 * Legacy clients on the same HTTP endpoint: an `initialize` without modern `_meta` opens a legacy
 * session, served by the SDK's own Streamable HTTP server transport (sessions, the GET stream,
 * server→client requests on the right stream) and relayed, message for message, to a dedicated
 * upstream connection. Nothing is translated: both sides speak legacy.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JsonRpcMessage } from '../core/jsonrpc.ts';
import type { Backend } from '../session/backend.ts';
import type { MessageExtra, Transport } from '../transport/transport.ts';
import { jsonError } from '../transport/httpEdge.ts';

interface LegacySession {
  readonly front: WebStandardStreamableHTTPServerTransport;
  readonly upstream: Transport;
}

/** The legacy sessions of one endpoint. */
export class LegacyHttpSessions {
  readonly #backend: Backend;
  readonly #sessions = new Map<string, LegacySession>();
  readonly #maxSessions: number;
  #closed = false;

  constructor(backend: Backend, options: { maxSessions?: number } = {}) {
    this.#backend = backend;
    this.#maxSessions = options.maxSessions ?? 256;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Serves a request that belongs to an existing legacy session (by `Mcp-Session-Id`). */
  async handle(request: Request, parsedBody?: unknown): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    const session = id ? this.#sessions.get(id) : undefined;
    if (!session) return jsonError(404, -32001, 'Session not found');
    return session.front.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  }

  /** Opens a legacy session for an `initialize` and serves it. */
  async open(request: Request, parsedBody: unknown): Promise<Response> {
    if (this.#closed) return jsonError(503, -32603, 'The server is shutting down');
    if (this.#sessions.size >= this.#maxSessions) return jsonError(503, -32603, 'Too many legacy sessions');
    let upstream: Transport;
    try {
      upstream = await this.#backend.connect();
      await upstream.start();
    } catch (e) {
      return jsonError(502, -32603, `The upstream server is unavailable: ${e instanceof Error ? e.message : String(e)}`);
    }
    let sessionId: string | undefined;
    const front = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (sid) => {
        sessionId = sid;
        this.#sessions.set(sid, { front, upstream });
      },
      onsessionclosed: (sid) => {
        this.#sessions.delete(sid);
        void upstream.close();
      },
    });
    front.onmessage = (message) => {
      upstream.send(message as JsonRpcMessage).catch(() => {});
    };
    upstream.onmessage = (message, extra) => {
      const related = (extra as MessageExtra | undefined)?.relatedRequestId;
      front.send(message as never, related === undefined ? undefined : { relatedRequestId: related }).catch(() => {});
    };
    upstream.onclose = () => {
      if (sessionId) this.#sessions.delete(sessionId);
      void front.close();
    };
    front.onclose = () => {
      if (sessionId) this.#sessions.delete(sessionId);
      void upstream.close();
    };
    await front.start();
    const response = await front.handleRequest(request, { parsedBody });
    if (!sessionId) void upstream.close();
    return response;
  }

  /** Ends every legacy session and its upstream connection. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(all.map(async (s) => {
      await s.front.close().catch(() => {});
      await s.upstream.close().catch(() => {});
    }));
  }
}
