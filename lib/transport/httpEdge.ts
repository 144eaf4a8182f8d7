/**
 * The Streamable HTTP edge, runtime-neutral (Web `Request`/`Response`): Origin and Host checks
 * (403), a bounded body (413), bounded JSON nesting (400), JSON responses, and SSE responses that
 * carry a request's notifications before its one answer.
 */
import { isIP } from 'node:net';
import { parseMessage, type Classified, type ClassifyFailure, type JsonRpcMessage } from '../core/jsonrpc.ts';
import { limitAnswer, type LimitRefusal } from '../util/limits.ts';
import { readBounded } from './messageBound.ts';
import { exactJson, holdExactIds } from './exactIds.ts';
import { fail, ok, type Outcome } from '../core/outcome.ts';
import { ErrorCode } from '../core/errors.ts';
import { DEFAULTS } from '../util/defaults.ts';

/** Bounds on what an HTTP endpoint reads before anything is parsed. */
export interface EdgeLimits {
  /** Largest accepted body, in bytes (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Deepest accepted JSON nesting (default 64). */
  readonly maxDepth?: number;
}

/** Which `Host` and `Origin` headers an HTTP endpoint accepts (default: loopback only). */
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

/** Reads one request header (case-insensitive name); `null` when absent. */
export type HeaderGetter = (name: string) => string | null;

/** The status and JSON-RPC error of a refused request. */
export interface EdgeRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
}

/** Why the request's Origin or Host is not allowed (DNS rebinding protection), if it is not. */
export function originRefusal(header: HeaderGetter, policy: OriginPolicy = {}): EdgeRefusal | undefined {
  const origin = header('origin');
  if (origin !== null && policy.allowedOrigins !== '*') {
    let allowed = false;
    if (policy.allowedOrigins) allowed = policy.allowedOrigins.includes(origin);
    else {
      try {
        const name = new URL(origin).hostname;
        allowed = LOOPBACK.has(name) || LOOPBACK.has(`[${name}]`);
      } catch {
        allowed = false;
      }
    }
    if (!allowed) return { status: 403, code: ErrorCode.InvalidRequest, message: `Forbidden: origin ${origin} is not allowed` };
  }
  const host = header('host');
  if (host !== null && policy.allowedHosts !== '*') {
    const name = hostName(host);
    const allowed = policy.allowedHosts ? policy.allowedHosts.some((h) => h.toLowerCase() === name) : LOOPBACK.has(name);
    if (!allowed) return { status: 403, code: ErrorCode.InvalidRequest, message: `Forbidden: host ${host} is not allowed` };
  }
  return undefined;
}

/**
 * The Origin and Host check of the health and metrics endpoints: `originRefusal`'s, except that a
 * Host naming an IP address passes. Orchestrators' probes and scrapers name a pod or process by its
 * address (Kubernetes sends the pod's IP as Host); a page that rebinds its DNS name to this
 * process cannot, its Host is that name.
 */
export function probeRefusal(header: HeaderGetter, policy: OriginPolicy = {}): EdgeRefusal | undefined {
  const host = header('host');
  const address = host === null ? '' : hostName(host).replace(/^\[(.*)\]$/, '$1');
  return originRefusal(isIP(address) === 0 ? header : (name) => (name.toLowerCase() === 'host' ? null : header(name)), policy);
}

/** A 403 response when the request's Origin or Host is not allowed (DNS rebinding protection). */
export function checkOrigin(request: Request, policy: OriginPolicy = {}): Response | undefined {
  const refused = originRefusal((name) => request.headers.get(name), policy);
  return refused ? jsonError(refused.status, refused.code, refused.message) : undefined;
}

/** A failure to read a body: the status and the JSON-RPC error to answer with. */
export interface BodyFailure extends ClassifyFailure {
  readonly status: number;
}

/** Largest accepted body under `limits`, in bytes. */
export function maxBodyBytes(limits: EdgeLimits): number {
  return limits.maxBodyBytes ?? DEFAULTS.bodyBytes;
}

/** The failure for a body over `max` bytes. */
export function tooLarge(max: number): BodyFailure {
  return { code: ErrorCode.InvalidRequest, message: `Invalid Request: body larger than ${max} bytes`, id: null, status: 413 };
}

/**
 * The media type of a `Content-Type` value, lower case, without its parameters (RFC 9110 §8.3.1):
 * `Application/JSON; charset=utf-8` → `application/json`. `''` when there is none.
 */
export function mediaTypeOf(contentType: string | null): string {
  if (contentType === null) return '';
  const semicolon = contentType.indexOf(';');
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/** What the headers alone say against a POSTed body: too large by its declared length (413), not JSON (415). */
export function bodyHeaderFailure(header: HeaderGetter, limits: EdgeLimits = {}): BodyFailure | undefined {
  const max = maxBodyBytes(limits);
  const declared = Number(header('content-length') ?? NaN);
  if (declared > max) return tooLarge(max);
  if (mediaTypeOf(header('content-type')) !== 'application/json')
    return { code: ErrorCode.InvalidRequest, message: 'Invalid Request: Content-Type must be application/json', id: null, status: 415 };
  return undefined;
}

/**
 * Decodes and classifies a body's text (bounded nesting), its ids held exactly (see `exactIds.ts`);
 * a parse failure is a 400.
 */
export function parseBody(text: string, limits: EdgeLimits = {}): Outcome<Classified, BodyFailure> {
  const parsed = parseMessage(
    text,
    limits.maxDepth === undefined ? { rewrite: holdExactIds } : { maxDepth: limits.maxDepth, rewrite: holdExactIds },
  );
  return parsed.ok ? ok(parsed.value) : fail({ ...parsed.error, status: 400 });
}

/** Reads and classifies a JSON-RPC body within the limits. */
export async function readBody(request: Request, limits: EdgeLimits = {}): Promise<Outcome<Classified, BodyFailure>> {
  const refused = bodyHeaderFailure((name) => request.headers.get(name), limits);
  if (refused) return fail(refused);
  const max = maxBodyBytes(limits);
  let text = '';
  if (request.headers.has('content-length')) {
    // A declared length within the limit: read it whole (servers such as @hono/node-server have a
    // fast path for text(); the stream path below costs far more per request).
    text = await request.text();
    // UTF-8 takes 1–3 bytes per UTF-16 unit: count bytes exactly only when the text could be over.
    const over = text.length > max || (text.length * 3 > max && new TextEncoder().encode(text).length > max);
    if (over) return fail(tooLarge(max));
  } else if (request.body) {
    const read = await readBounded(request, max);
    if (!read.ok) return fail(tooLarge(max));
    text = read.value;
  }
  return parseBody(text, limits);
}

/** The JSON-RPC error response body for a body failure (with the id when one was read). */
export function bodyFailureMessage(failure: BodyFailure): JsonRpcMessage {
  return {
    jsonrpc: '2.0',
    ...(failure.id === null ? {} : { id: failure.id }),
    error: { code: failure.code, message: failure.message },
  } as JsonRpcMessage;
}

/** A JSON response (a caller's ids as it wrote them). */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(exactJson(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A JSON-RPC error response without an id. */
export function jsonError(status: number, code: number, message: string): Response {
  return jsonResponse({ jsonrpc: '2.0', error: { code, message } }, status);
}

/** The answer to a request (with no id) refused by a limit: `-32005` naming it, 429 or 503, `Retry-After`. */
export function refusalResponse(refusal: LimitRefusal): Response {
  const refused = limitAnswer(refusal);
  return jsonResponse(refused.message, refused.status, refused.headers);
}

/** 404 for a session id that names no session of the caller's (the SDK's own words and code). */
export function sessionNotFound(): Response {
  return jsonError(404, ErrorCode.SessionNotFound, 'Session not found');
}

/** The principal of every request without an `Authorization` header (by default): callers it cannot tell apart. */
export const ANONYMOUS = 'anonymous';

/** Who is asking, by default: the `Authorization` header (sessions are never shared between principals). */
export function principalFromHeaders(header: HeaderGetter): string {
  const auth = header('authorization');
  return auth ? `auth:${auth}` : ANONYMOUS;
}

/** The principal of a Web request: what `custom` says, or by default its `Authorization` header. */
export function requestPrincipal(custom?: (request: Request) => string): (request: Request) => string {
  return custom ?? ((request) => principalFromHeaders((name) => request.headers.get(name)));
}

/**
 * `response`, with `ended` called once it has been served: at once for a plain body, when the
 * stream ends or the client leaves for an event stream (a session with an open stream is in use).
 */
export function whileServed(response: Response, ended: () => void): Response {
  if (!response.body || mediaTypeOf(response.headers.get('content-type')) !== 'text/event-stream') {
    ended();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          ended();
          controller.close();
        } else controller.enqueue(value);
      } catch (e) {
        ended();
        controller.error(e);
      }
    },
    cancel(reason) {
      ended();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
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
export function sseResponse(
  produce: (writer: SseWriter) => void,
  options: { onCancel?: () => void; keepAliveMs?: number; headers?: Record<string, string> } = {},
): Response {
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
          controller.enqueue(encoder.encode(`event: message\ndata: ${exactJson(message)}\n\n`));
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
  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...options.headers },
  });
}

/** What a served request ends with: its one message, its HTTP status and headers. */
export interface EdgeAnswer {
  readonly message: JsonRpcMessage;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Serves `run` as an SSE response whose head goes out with its first message or comment, or after
 * `headDelayMs`: an answer that comes before, with a status other than 200 (a refusal), goes out
 * as plain JSON with its status and headers instead.
 */
export function lazyEventStream(
  run: (writer: SseWriter) => Promise<EdgeAnswer | undefined>,
  options: { onCancel?: () => void; keepAliveMs?: number; headDelayMs?: number } = {},
): Promise<Response> {
  return new Promise<Response>((resolve) => {
    let decided = false;
    let target: SseWriter | undefined;
    /** Set when `run` finished before the stream began: what to end it with. */
    let finished: { final: JsonRpcMessage | undefined } | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stream = () => {
      if (decided) return;
      decided = true;
      clearTimeout(timer);
      resolve(
        sseResponse((writer) => {
          target = writer;
          if (!finished) return;
          if (finished.final) writer.send(finished.final);
          writer.close();
        }, options),
      );
    };
    timer = setTimeout(stream, options.headDelayMs ?? 0);
    const writer: SseWriter = {
      get closed() {
        return target ? target.closed : finished !== undefined;
      },
      send(message) {
        stream();
        target?.send(message);
      },
      comment(text) {
        stream();
        target?.comment(text);
      },
      close() {
        if (target) target.close();
      },
    };
    run(writer).then(
      (answer) => {
        if (!decided && answer && answer.status !== 200) {
          decided = true;
          clearTimeout(timer);
          resolve(jsonResponse(answer.message, answer.status, answer.headers ? { ...answer.headers } : {}));
          return;
        }
        if (target) {
          if (answer) target.send(answer.message);
          target.close();
          return;
        }
        finished = { final: answer?.message };
        stream();
      },
      () => {
        if (target) target.close();
        else {
          finished = { final: undefined };
          stream();
        }
      },
    );
  });
}
