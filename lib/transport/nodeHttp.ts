/**
 * Node's HTTP server for the Streamable HTTP edge: serves a handler that has a native Node listener
 * (the wrap's: it reads and answers POSTed JSON on `IncomingMessage`/`ServerResponse` directly) or
 * only a Web `fetch` handler (through @hono/node-server's request listener). Bound to loopback
 * unless told otherwise. Also the small writers the native listener answers with.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonRpcMessage } from '../core/jsonrpc.ts';
import type { SseWriter } from './httpEdge.ts';

export interface NodeHttpOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 3000; 0 picks a free port. */
  readonly port?: number;
}

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
let adapter: Promise<(typeof import('@hono/node-server'))['getRequestListener']> | undefined;

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
  const server = createServer(toNodeListener(handler));
  server.keepAliveTimeout = 60_000;
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

/** Answers with a JSON body. */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Answers with no body. */
export function writeEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, headers);
  res.end();
}

/**
 * Starts an SSE answer on `res` (`text/event-stream`, `X-Accel-Buffering: no`). `onCancel` runs if
 * the client goes away before the writer is closed; keep-alive comments every `keepAliveMs`.
 */
export function nodeSse(res: ServerResponse, options: { onCancel?: () => void; keepAliveMs?: number } = {}): SseWriter {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const onClose = () => {
    if (closed) return;
    closed = true;
    if (timer) clearInterval(timer);
    options.onCancel?.();
  };
  res.once('close', onClose);
  const writer: SseWriter = {
    get closed() {
      return closed;
    },
    send(message: JsonRpcMessage) {
      if (!closed) res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    },
    comment(text: string) {
      if (!closed) res.write(`: ${text}\n\n`);
    },
    close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      res.off('close', onClose);
      res.end();
    },
  };
  if (options.keepAliveMs) {
    timer = setInterval(() => writer.comment('keep-alive'), options.keepAliveMs);
    timer.unref();
  }
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
