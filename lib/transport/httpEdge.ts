/**
 * The Streamable HTTP edge, runtime-neutral (Web `Request`/`Response`): Origin and Host checks
 * (403), a bounded body (413), bounded JSON nesting (400), JSON responses, and SSE responses that
 * carry a request's notifications before its one answer.
 */
import { parseMessage, type Classified, type ClassifyFailure, type JsonRpcMessage } from '../core/jsonrpc.ts';
import { fail, ok, type Outcome } from '../core/outcome.ts';

export interface EdgeLimits {
  /** Largest accepted body, in bytes (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Deepest accepted JSON nesting (default 64). */
  readonly maxDepth?: number;
}

export interface OriginPolicy {
  /** Accepted `Origin` values; default: loopback origins only. `'*'` accepts any. */
  readonly allowedOrigins?: readonly string[] | '*';
  /** Accepted `Host` names (without port); default: loopback names only. `'*'` accepts any. */
  readonly allowedHosts?: readonly string[] | '*';
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

/** A 403 response when the request's Origin or Host is not allowed (DNS rebinding protection). */
export function checkOrigin(request: Request, policy: OriginPolicy = {}): Response | undefined {
  const origin = request.headers.get('origin');
  if (origin !== null && policy.allowedOrigins !== '*') {
    let allowed = false;
    if (policy.allowedOrigins) allowed = policy.allowedOrigins.includes(origin);
    else {
      try {
        allowed = LOOPBACK.has(new URL(origin).hostname) || LOOPBACK.has(`[${new URL(origin).hostname}]`);
      } catch {
        allowed = false;
      }
    }
    if (!allowed) return jsonError(403, -32600, `Forbidden: origin ${origin} is not allowed`);
  }
  const host = request.headers.get('host');
  if (host !== null && policy.allowedHosts !== '*') {
    const name = hostName(host);
    const allowed = policy.allowedHosts ? policy.allowedHosts.map((h) => h.toLowerCase()).includes(name) : LOOPBACK.has(name);
    if (!allowed) return jsonError(403, -32600, `Forbidden: host ${host} is not allowed`);
  }
  return undefined;
}

/** A failure to read a body: the status and the JSON-RPC error to answer with. */
export interface BodyFailure extends ClassifyFailure {
  readonly status: number;
}

/** Reads and classifies a JSON-RPC body within the limits. */
export async function readBody(request: Request, limits: EdgeLimits = {}): Promise<Outcome<Classified, BodyFailure>> {
  const max = limits.maxBodyBytes ?? 4 * 1024 * 1024;
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > max) return fail({ code: -32600, message: `Invalid Request: body larger than ${max} bytes`, id: null, status: 413 });
  const contentType = request.headers.get('content-type') ?? '';
  if (!contentType.toLowerCase().includes('application/json')) return fail({ code: -32600, message: 'Invalid Request: Content-Type must be application/json', id: null, status: 415 });
  let text = '';
  if (Number.isFinite(declared)) {
    // A declared length within the limit: read it whole (servers such as @hono/node-server have a
    // fast path for text(); the stream path below costs far more per request).
    text = await request.text();
    // UTF-8 takes 1–3 bytes per UTF-16 unit: count bytes exactly only when the text could be over.
    const over = text.length > max || (text.length * 3 > max && new TextEncoder().encode(text).length > max);
    if (over) return fail({ code: -32600, message: `Invalid Request: body larger than ${max} bytes`, id: null, status: 413 });
  } else if (request.body) {
    const reader = request.body.getReader();
    const decoder = new TextDecoder();
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        return fail({ code: -32600, message: `Invalid Request: body larger than ${max} bytes`, id: null, status: 413 });
      }
      text += decoder.decode(value, { stream: true });
    }
    text += decoder.decode();
  }
  const parsed = parseMessage(text, limits.maxDepth === undefined ? {} : { maxDepth: limits.maxDepth });
  return parsed.ok ? ok(parsed.value) : fail({ ...parsed.error, status: 400 });
}

/** A JSON response. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A JSON-RPC error response without an id. */
export function jsonError(status: number, code: number, message: string): Response {
  return jsonResponse({ jsonrpc: '2.0', error: { code, message } }, status);
}

/** The writer an SSE response hands to its producer. */
export interface SseWriter {
  send(message: JsonRpcMessage): void;
  comment(text: string): void;
  close(): void;
  readonly closed: boolean;
}

/**
 * An SSE response (`text/event-stream`, `X-Accel-Buffering: no`): `produce` writes messages and
 * closes the stream; when the client goes away `onCancel` runs. Keep-alive comments every
 * `keepAliveMs` while open.
 */
export function sseResponse(produce: (writer: SseWriter) => void, options: { onCancel?: () => void; keepAliveMs?: number; headers?: Record<string, string> } = {}): Response {
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const writer: SseWriter = {
        get closed() {
          return closed;
        },
        send(message) {
          if (closed) return;
          controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
        },
        comment(text) {
          if (!closed) controller.enqueue(encoder.encode(`: ${text}\n\n`));
        },
        close() {
          if (closed) return;
          closed = true;
          if (timer) clearInterval(timer);
          controller.close();
        },
      };
      if (options.keepAliveMs) {
        timer = setInterval(() => writer.comment('keep-alive'), options.keepAliveMs);
        (timer as { unref?: () => void }).unref?.();
      }
      produce(writer);
    },
    cancel() {
      closed = true;
      if (timer) clearInterval(timer);
      options.onCancel?.();
    },
  });
  return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...options.headers } });
}
