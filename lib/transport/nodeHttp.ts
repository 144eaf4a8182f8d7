/**
 * Node's HTTP server for the Streamable HTTP edge: serves a handler that has a native Node listener
 * (the wrap's: it reads and answers POSTed JSON on `IncomingMessage`/`ServerResponse` directly) or
 * only a Web `fetch` handler (through @hono/node-server's request listener). Bound to loopback
 * unless told otherwise. Also the small writers the native listener answers with.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { limitAnswer, limitRefusal } from '../util/limits.ts';
import type { JsonRpcMessage } from '../core/jsonrpc.ts';
import type { SseWriter } from './httpEdge.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { exactJson } from './exactIds.ts';

/** Options of {@link serveNodeHttp}: where to listen, and the bounds on connections and their timing. */
export interface NodeHttpOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 3000; 0 picks a free port. */
  readonly port?: number;
  /**
   * Connections open at once (default 512). A request on a connection beyond it is answered 503
   * with `Retry-After` and the connection closed; past it by another 64 connections are dropped.
   */
  readonly maxConnections?: number;
  /** How long a client may take to send a request's headers (default 20 s). */
  readonly headersTimeoutMs?: number;
  /** How long a client may take to send a whole request, body included (default 60 s). */
  readonly requestTimeoutMs?: number;
  /** How long an idle kept-alive connection stays open (default 60 s). */
  readonly keepAliveTimeoutMs?: number;
}

/** Connections a listener may have beyond `maxConnections` before they are dropped unanswered. */
const OVERFLOW_CONNECTIONS = 64;

/** A listening Node HTTP server: the server, its origin (`http://host:port`) and how to close it. */
export interface RunningHttpServer {
  readonly server: Server;
  /** `http://host:port` */
  readonly origin: string;
  close(): Promise<void>;
}

/** A Web `fetch` handler. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** Something served over HTTP: a `fetch` handler, optionally with a native Node listener that takes precedence. */
export interface HttpHandler {
  readonly fetch: FetchHandler;
  readonly node?: (req: IncomingMessage, res: ServerResponse) => void;
}

/** The Web-to-Node adapter (hono's), loaded with the first request that needs it: a stdio front never does. */
let adapter: Promise<typeof import('@hono/node-server')['getRequestListener']> | undefined;

/** A Node request listener that serves through a Web `fetch` handler. */
export function viaFetch(fetch: FetchHandler): (req: IncomingMessage, res: ServerResponse) => void {
  let listener: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  return (req, res) => {
    if (listener) return listener(req, res);
    void (adapter ??= import('@hono/node-server').then((m) => m.getRequestListener)).then((make) => {
      listener ??= make(fetch) as (req: IncomingMessage, res: ServerResponse) => void;
      listener(req, res);
    });
  };
}

/** The Node request listener for a fetch handler (or a handler's own native listener). */
export function toNodeListener(handler: FetchHandler | HttpHandler): (req: IncomingMessage, res: ServerResponse) => void {
  if (typeof handler !== 'function' && handler.node) return handler.node;
  return viaFetch(typeof handler === 'function' ? handler : handler.fetch);
}

/** Listens with a handler (a `fetch` function, or a wrap); resolves once bound. */
export async function serveNodeHttp(handler: FetchHandler | HttpHandler, options: NodeHttpOptions = {}): Promise<RunningHttpServer> {
  const listener = toNodeListener(handler);
  const maxConnections = Math.max(1, options.maxConnections ?? DEFAULTS.connections);
  /** Connections past `maxConnections`: their requests get a 503. */
  const over = new WeakSet<Socket>();
  let open = 0;
  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs ?? DEFAULTS.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs ?? DEFAULTS.httpRequestTimeoutMs,
      // Node checks both only this often (30 s by default): a slow client is cut off near its deadline.
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      if (!over.has(req.socket)) return listener(req, res);
      const refused = limitAnswer(limitRefusal('connections', maxConnections, `${maxConnections} connections are open`));
      res.shouldKeepAlive = false;
      writeJson(res, refused.status, refused.message, { ...refused.headers, connection: 'close' });
    },
  );
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 60_000;
  server.maxConnections = maxConnections + OVERFLOW_CONNECTIONS;
  server.on('connection', (socket: Socket) => {
    open++;
    if (open > maxConnections) over.add(socket);
    socket.once('close', () => open--);
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    origin: `http://${shown}:${address.port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Answers with a JSON body (and `headers`, such as `Retry-After`), a caller's ids as it wrote them. */
export function writeJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void {
  const text = exactJson(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Answers with no body. */
export function writeEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, headers);
  res.end();
}

/** An SSE writer on Node's response whose head is written with the first thing it writes. */
export interface NodeSseWriter extends SseWriter {
  /** Whether the head (status 200, `text/event-stream`) has gone out. */
  readonly started: boolean;
  /** Lets go of `res` without writing anything (someone else answers on it); only before `started`. */
  release(): void;
}

/**
 * An SSE answer on `res` (`text/event-stream`, `X-Accel-Buffering: no`), its head written with its
 * first message or comment, or after `headDelayMs`, so that an answer that comes at once may still
 * go out as plain JSON with its own status (`release`, then answer). Keep-alive comments every
 * `keepAliveMs`; `onCancel` runs if the client goes away before the writer is closed.
 */
export function nodeSse(
  res: ServerResponse,
  options: { onCancel?: () => void; keepAliveMs?: number; headDelayMs?: number } = {},
): NodeSseWriter {
  let closed = false;
  let started = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let head: ReturnType<typeof setTimeout> | undefined;
  const start = (flush = false) => {
    if (started) return;
    started = true;
    clearTimeout(head);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    // With nothing to write yet, the head goes alone: the client learns its request is being served.
    if (flush) res.flushHeaders();
  };
  const onClose = () => {
    if (closed) return;
    closed = true;
    if (timer) clearInterval(timer);
    clearTimeout(head);
    options.onCancel?.();
  };
  res.once('close', onClose);
  const stop = () => {
    closed = true;
    if (timer) clearInterval(timer);
    clearTimeout(head);
    res.off('close', onClose);
  };
  const writer: NodeSseWriter = {
    get closed() {
      return closed;
    },
    get started() {
      return started;
    },
    send(message: JsonRpcMessage) {
      if (closed) return;
      start();
      res.write(`event: message\ndata: ${exactJson(message)}\n\n`);
    },
    comment(text: string) {
      if (closed) return;
      start();
      res.write(`: ${text}\n\n`);
    },
    close() {
      if (closed) return;
      stop();
      start();
      res.end();
    },
    release() {
      if (!closed) stop();
    },
  };
  if (options.keepAliveMs) {
    timer = setInterval(() => writer.comment('keep-alive'), options.keepAliveMs);
    timer.unref();
  }
  if (options.headDelayMs === undefined) start();
  else head = setTimeout(() => !closed && start(true), options.headDelayMs);
  return writer;
}

/** Writes a Web `Response` (status, headers, streamed body) to `res`; stops reading when the client goes away. */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  let gone = false;
  let wake: (() => void) | undefined;
  const onClose = () => {
    gone = true;
    wake?.();
    reader.cancel().catch(() => {});
  };
  res.once('close', onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          res.once('drain', resolve);
        });
        wake = undefined;
        if (gone) break;
      }
    }
    if (!gone) res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', onClose);
  }
}

/** The request's headers as a Web `Headers` object. */
export function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

/** A Web `Request` for a Node request whose body (if any) was already read as `body`. */
export function webRequest(req: IncomingMessage, body?: string, signal?: AbortSignal): Request {
  const host = req.headers.host ?? 'localhost';
  return new Request(`http://${host}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers: webHeaders(req),
    ...(body !== undefined && req.method !== 'GET' && req.method !== 'HEAD' ? { body } : {}),
    ...(signal ? { signal } : {}),
  });
}
