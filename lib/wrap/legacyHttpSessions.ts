/**
 * Legacy clients on the same HTTP endpoint: an `initialize` without modern `_meta` opens a legacy
 * session, served by the SDK's own Streamable HTTP server transport (sessions, the GET stream,
 * server→client requests on the right stream) and relayed, message for message, to a dedicated
 * upstream connection. Nothing is translated: both sides speak legacy.
 */
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import type { Backend } from '../session/backend.ts';
import type { MessageExtra, Transport } from '../transport/transport.ts';
import { jsonError } from '../transport/httpEdge.ts';

/**
 * The client request an upstream message belongs to, when the upstream pipe does not say (stdio
 * never does): progress by its token; a log or a server request when exactly one request is in
 * flight. Without it these would go to the optional GET stream, or nowhere.
 */
function relatedCall(message: JsonRpcMessage, inFlight: ReadonlyMap<RequestId, unknown>): RequestId | undefined {
  if (!('method' in message)) return undefined;
  if (message.method === 'notifications/progress') {
    const token = message.params?.['progressToken'];
    if (token === undefined) return undefined;
    for (const [id, t] of inFlight) if (t === token) return id;
    return undefined;
  }
  if (('id' in message || message.method === 'notifications/message') && inFlight.size === 1) return inFlight.keys().next().value;
  return undefined;
}

interface LegacySession {
  readonly front: WebStandardStreamableHTTPServerTransport;
  readonly upstream: Transport;
}

/** The SDK's server transport, loaded with the first legacy session (a stdio front never needs it). */
let sdkTransport: Promise<typeof WebStandardStreamableHTTPServerTransport> | undefined;
const loadTransport = () => (sdkTransport ??= import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').then((m) => m.WebStandardStreamableHTTPServerTransport));

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
    let ServerTransport: typeof WebStandardStreamableHTTPServerTransport;
    try {
      ServerTransport = await loadTransport();
      upstream = await this.#backend.connect();
      await upstream.start();
    } catch (e) {
      return jsonError(502, -32603, `The upstream server is unavailable: ${e instanceof Error ? e.message : String(e)}`);
    }
    let sessionId: string | undefined;
    const front = new ServerTransport({
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
    const inFlight = new Map<RequestId, unknown>();
    front.onmessage = (raw) => {
      const message = raw as JsonRpcMessage;
      if ('method' in message && 'id' in message) {
        const meta = message.params?.['_meta'];
        inFlight.set(message.id, isRecord(meta) ? meta['progressToken'] : undefined);
      } else if ('method' in message && message.method === 'notifications/cancelled') inFlight.delete(message.params?.['requestId'] as RequestId);
      upstream.send(message).catch(() => {});
    };
    upstream.onmessage = (message, extra) => {
      const related = (extra as MessageExtra | undefined)?.relatedRequestId ?? relatedCall(message, inFlight);
      if (!('method' in message) && message.id !== undefined && message.id !== null) inFlight.delete(message.id);
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
