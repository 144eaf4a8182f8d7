/**
 * The client side of a LEGACY MCP server at an HTTP URL: Streamable HTTP (2025-03-26 … 2025-11-25:
 * sessions, the standalone GET stream, resumption) or the deprecated HTTP+SSE transport (2024-11-05),
 * chosen by `mode` or found by the spec's fallback probe. It only moves messages; it never answers
 * the server. Every request sent gets exactly one answer: the server's, or a synthesised -32603
 * (also for an answer past `maxMessageBytes`, which is never read whole).
 */
import type { EventSourceMessage } from 'eventsource-parser';
import { mediaType, readSse } from './sse.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, readBounded, tooLargeDetail } from './messageBound.ts';
import { GiveUp, retry } from '../retry.ts';
import { AdapterError, internalError, type WireError } from '../core/errors.ts';
import { bodyExcerpt, BODY_EXCERPT_CHARS, type UpstreamFailure } from '../core/upstreamFailure.ts';
import { classify, errorResponse, parseMessage, type Classified, type JsonRpcMessage, type RequestId } from '../core/jsonrpc.ts';
import type { MessageExtra, Transport } from './transport.ts';

/** The two legacy HTTP transports. */
export type LegacyHttpMode = 'streamable' | 'sse';

/** How a dropped SSE stream (the standalone GET stream, or a resumable POST stream) is re-opened. */
export interface LegacyHttpReconnectOptions {
  /** Retries of one failed re-open, and how many event-less reconnections in a row are tolerated (default 5). */
  readonly retries?: number;
  /** Delay before a reconnection when the server sent no SSE `retry`, and the first backoff step (default 1000 ms). */
  readonly minDelayMs?: number;
  /** Backoff ceiling (default 30 000 ms). */
  readonly maxDelayMs?: number;
}

/** Options of {@link LegacyHttpClientTransport}. */
export interface LegacyHttpClientOptions {
  /** The Streamable HTTP endpoint, or the SSE endpoint of an HTTP+SSE server. */
  readonly url: string | URL;
  /** `auto` (default) tries Streamable HTTP and falls back to HTTP+SSE when the first POST gets 400/404/405. */
  readonly mode?: LegacyHttpMode | 'auto';
  /** Extra headers on every HTTP request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The fetch to use (default `globalThis.fetch`). */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * How long a request may wait for its answer; then its POST is aborted, it is answered with -32603
   * and the server is sent `notifications/cancelled`. Also bounds other POSTs, the wait for the
   * HTTP+SSE `endpoint` event (default 30 s) and the closing DELETE (default 5 s).
   */
  readonly requestTimeoutMs?: number;
  /** Aborting it closes the transport. */
  readonly signal?: AbortSignal;
  readonly reconnect?: LegacyHttpReconnectOptions;
  /**
   * The largest JSON body or SSE event read from the server (default `DEFAULT_MAX_MESSAGE_BYTES`,
   * 16 MiB). A request whose answer is larger gets -32603 and the server is told to cancel it; an
   * event past it on the standalone GET stream is reported and the stream re-opened.
   */
  readonly maxMessageBytes?: number;
}

interface Pending {
  readonly method: string;
  readonly abort: AbortController;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Where we are in one SSE stream, kept across reconnections. */
interface Cursor {
  lastEventId: string | undefined;
  events: number;
}

const noop = (): void => {};

function reason(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? ` (${e.cause.message})` : '';
  return `${e.message}${cause}`;
}

/** A fetch that failed without an answer, as a failure: the network's own error (`connect ECONNREFUSED …`). */
function networkFailure(e: unknown): UpstreamFailure {
  const inner = e instanceof Error && e.cause instanceof Error ? e.cause.message : e instanceof Error ? e.message : String(e);
  return { network: inner.slice(0, BODY_EXCERPT_CHARS) };
}

/** An HTTP refusal as a failure: its status and the start of its body. */
function httpFailure(status: number, text: string): UpstreamFailure {
  const body = bodyExcerpt(text);
  return body === '' ? { httpStatus: status } : { httpStatus: status, body };
}

/** The start of a body (a few KiB at most: enough for an excerpt), the rest left unread. */
async function readSome(res: Response, max = 4096): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < max) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // What was read is enough.
  } finally {
    await reader.cancel().catch(noop);
  }
  return text.slice(0, max);
}


async function drain(res: Response): Promise<void> {
  await res.body?.cancel().catch(noop);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/** A `Transport` to a legacy MCP server over Streamable HTTP or HTTP+SSE. */
export class LegacyHttpClientTransport implements Transport {
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  readonly options: LegacyHttpClientOptions;
  readonly #url: URL;
  readonly #fetch: typeof globalThis.fetch;
  readonly #abort = new AbortController();
  readonly #pending = new Map<RequestId, Pending>();
  /** Requests answered locally; a late answer from the server is dropped. */
  readonly #abandoned = new Set<RequestId>();
  #mode: LegacyHttpMode | undefined;
  #gate: Promise<void> | undefined;
  #started: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #closed = false;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #initializeId: RequestId | undefined;
  #endpoint: URL | undefined;
  #retryMs: number | undefined;
  #getStream = false;
  #expired = false;
  readonly #onAbort = (): void => void this.close();

  constructor(options: LegacyHttpClientOptions) {
    this.options = options;
    this.#url = new URL(options.url);
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    if (options.mode === 'streamable' || options.mode === 'sse') this.#mode = options.mode;
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The transport in use: fixed by the options, or known once the first POST was answered (`auto`). */
  get mode(): LegacyHttpMode | undefined {
    return this.#mode;
  }

  /** The `Mcp-Session-Id` the server gave with its `initialize` result (Streamable HTTP). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** True once the server answered 404 to the session's id: the session is gone, not the server. */
  get sessionExpired(): boolean {
    return this.#expired;
  }

  /** The negotiated version sent as `MCP-Protocol-Version` (Streamable HTTP). */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  /** Sets the `MCP-Protocol-Version` header value; also learnt from the `initialize` result. */
  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /** Opens the HTTP+SSE stream when `mode` is `sse`; otherwise nothing goes on the wire yet. */
  async start(): Promise<void> {
    if (this.#started) throw new AdapterError('protocol', 'legacy HTTP transport already started');
    await this.#ensureStarted();
  }

  #ensureStarted(): Promise<void> {
    return (this.#started ??= this.#open());
  }

  async #open(): Promise<void> {
    if (this.options.signal?.aborted) await this.close();
    this.#assertOpen();
    if (this.#mode !== 'sse') return;
    try {
      await this.#connectSse();
    } catch (e) {
      this.#closing ??= this.#terminate(`the server could not be reached: ${reason(e)}`, false);
      throw e;
    }
  }

  /** Makes later sends wait for `work` (the first POST in `auto`, the HTTP+SSE connection). */
  #hold(work: Promise<void>): void {
    const gate: Promise<void> = work.then(noop, noop).then(() => {
      if (this.#gate === gate) this.#gate = undefined;
    });
    this.#gate = gate;
  }

  /**
   * POSTs one message. Resolves once the server took it (for a request: once its answer started
   * to stream). A server-side failure never throws: a request is answered with a -32603 error
   * through `onmessage`, anything else is reported through `onerror`. Throws only when closed.
   */
  async send(message: JsonRpcMessage, _options?: unknown): Promise<void> {
    this.#assertOpen();
    // A failed HTTP+SSE connection closes the transport; the send then throws 'closed' below.
    await this.#ensureStarted().catch(noop);
    while (this.#gate) await this.#gate;
    this.#assertOpen();
    const request = 'method' in message && 'id' in message ? message : undefined;
    const id = request?.id;
    if (request) {
      this.#track(request.id, request.method);
      if (request.method === 'initialize') this.#initializeId = request.id;
    }
    if (this.#mode === undefined) {
      const first = this.#firstPost(message, id);
      this.#hold(first);
      return first;
    }
    return this.#mode === 'sse' ? this.#postSse(message, id) : this.#postStreamable(message, id);
  }

  /** Ends the session (DELETE, 405 ignored), aborts every stream, answers requests still open. Idempotent. */
  async close(): Promise<void> {
    await (this.#closing ??= this.#terminate('the connection was closed before the server answered', true));
  }

  get #max(): number {
    return this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  #assertOpen(): void {
    if (this.#closed) throw new AdapterError('closed', 'the legacy HTTP transport is closed');
  }

  // ── requests and their one answer ─────────────────────────────────────────

  #track(id: RequestId, method: string): void {
    const pending: Pending = { method, abort: new AbortController(), timer: undefined };
    const ms = this.options.requestTimeoutMs;
    if (ms !== undefined) pending.timer = setTimeout(() => this.#timedOut(id, ms), ms);
    this.#pending.set(id, pending);
  }

  #settle(id: RequestId): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    clearTimeout(pending.timer);
    this.#pending.delete(id);
    return pending;
  }

  /** Answers a request locally with -32603 (once), and stops listening for the server's answer. */
  #answer(id: RequestId | undefined, detail: string, failure?: UpstreamFailure): void {
    if (id === undefined) return;
    const pending = this.#settle(id);
    if (!pending) return;
    this.#abandoned.add(id);
    pending.abort.abort();
    const error: WireError = failure === undefined ? internalError(detail) : { ...internalError(detail), data: { ...failure } };
    this.onmessage?.(errorResponse(id, error));
  }

  #timedOut(id: RequestId, ms: number): void {
    const method = this.#pending.get(id)?.method;
    if (method === undefined || this.#closed) return;
    this.#abandon(id, `the server did not answer ${method} within ${ms} ms`, 'Request timed out');
  }

  /**
   * Answers a request the server may still be working on (its answer will never come), and tells
   * the server to stop: a dropped connection is not a cancellation (spec), so it has to be said.
   */
  #abandon(id: RequestId, detail: string, reason: string, failure?: UpstreamFailure): void {
    const method = this.#pending.get(id)?.method;
    if (method === undefined) return;
    this.#answer(id, detail, failure);
    if (method !== 'initialize' && !this.#closed) {
      this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }).catch(noop);
    }
  }

  /** An answer past the bound: its request gets its one -32603 and is cancelled upstream; anything else is reported. */
  #tooLarge(id: RequestId | undefined, status: number, size: number): void {
    if (this.#closed) return;
    const detail = tooLargeDetail(this.#max);
    if (id !== undefined && this.#pending.has(id)) this.#abandon(id, detail, 'The answer was too large', { httpStatus: status });
    else this.onerror?.(new AdapterError('protocol', `${detail} (${size} bytes seen); dropped`));
  }

  /** A request's POST failed without an HTTP answer; anything else is only reported. */
  #fail(id: RequestId | undefined, detail: string, cause?: unknown): void {
    if (this.#closed) return;
    if (id !== undefined) this.#abandon(id, detail, 'The connection to the server broke', cause === undefined ? undefined : networkFailure(cause));
    else this.onerror?.(new AdapterError('upstream-error', detail, { cause }));
  }

  // ── receiving ─────────────────────────────────────────────────────────────

  #deliverText(text: string, extra: MessageExtra | undefined): void {
    const parsed = parseMessage(text);
    if (!parsed.ok) {
      this.onerror?.(new AdapterError('protocol', `the server sent something that is not a JSON-RPC message: ${parsed.error.message}`));
      return;
    }
    this.#receive(parsed.value, extra);
  }

  #receive(c: Classified, extra: MessageExtra | undefined): void {
    if (this.#closed) return;
    if (c.kind === 'batch') {
      for (const item of c.items) {
        const r = classify(item);
        if (r.ok) this.#receive(r.value, extra);
        else this.onerror?.(new AdapterError('protocol', `a batch from the server held a broken message: ${r.error.message}`));
      }
      return;
    }
    if (c.kind === 'result' || c.kind === 'error') {
      const id = c.message.id;
      if (id === undefined || id === null) {
        const e = (c.message as { error: WireError }).error;
        this.onerror?.(new AdapterError('upstream-error', `the server reported an error: ${e.message} (${e.code})`, { cause: e }));
        return;
      }
      if (this.#abandoned.delete(id)) return;
      this.#settle(id);
      if (c.kind === 'result' && id === this.#initializeId) {
        const version = c.message.result['protocolVersion'];
        if (typeof version === 'string') this.#protocolVersion = version;
      }
    }
    if (extra) this.onmessage?.(c.message, extra);
    else this.onmessage?.(c.message);
  }

  // ── Streamable HTTP ───────────────────────────────────────────────────────

  #headers(streamable: boolean): Headers {
    const headers = new Headers(this.options.headers);
    if (streamable && this.#sessionId !== undefined) headers.set('mcp-session-id', this.#sessionId);
    if (streamable && this.#protocolVersion !== undefined) headers.set('mcp-protocol-version', this.#protocolVersion);
    return headers;
  }

  #signal(id: RequestId | undefined): AbortSignal {
    const own = id === undefined ? undefined : this.#pending.get(id)?.abort.signal;
    if (own) return AbortSignal.any([this.#abort.signal, own]);
    const ms = this.options.requestTimeoutMs;
    return ms === undefined ? this.#abort.signal : AbortSignal.any([this.#abort.signal, AbortSignal.timeout(ms)]);
  }

  async #post(url: URL, message: JsonRpcMessage, id: RequestId | undefined, streamable: boolean): Promise<{ res: Response; sentSession: boolean } | undefined> {
    const headers = this.#headers(streamable);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json, text/event-stream');
    try {
      const res = await this.#fetch(url, { method: 'POST', headers, body: JSON.stringify(message), signal: this.#signal(id) });
      return { res, sentSession: headers.has('mcp-session-id') };
    } catch (e) {
      this.#fail(id, `could not POST to ${url.href}: ${reason(e)}`, e);
      return undefined;
    }
  }

  async #firstPost(message: JsonRpcMessage, id: RequestId | undefined): Promise<void> {
    const posted = await this.#post(this.#url, message, id, true);
    if (!posted) return;
    const { res } = posted;
    if (res.status === 400 || res.status === 404 || res.status === 405) {
      // A body past the bound cannot be the JSON-RPC error that would keep us on Streamable HTTP.
      const read = await readBounded(res, this.#max).catch(() => undefined);
      const text = read?.ok ? read.value : '';
      const parsed = text.trim() === '' ? undefined : parseMessage(text);
      const rpc = parsed?.ok === true && (parsed.value.kind === 'result' || parsed.value.kind === 'error');
      if (!rpc) return this.#fallBack(message, id, res.status);
      this.#mode = 'streamable';
      return this.#handle(message, id, res, false, text);
    }
    this.#mode = 'streamable';
    return this.#handle(message, id, res, posted.sentSession);
  }

  async #postStreamable(message: JsonRpcMessage, id: RequestId | undefined): Promise<void> {
    const posted = await this.#post(this.#url, message, id, true);
    if (posted) await this.#handle(message, id, posted.res, posted.sentSession);
  }

  async #handle(message: JsonRpcMessage, id: RequestId | undefined, res: Response, sentSession: boolean, body?: string): Promise<void> {
    if (id !== undefined && id === this.#initializeId) {
      const session = res.headers.get('mcp-session-id');
      if (session) this.#sessionId = session;
    }
    if (res.status === 404 && sentSession) {
      await drain(res);
      this.#expired = true;
      return this.#lose(`the server's session ${this.#sessionId ?? ''} has expired (HTTP 404); initialize a new one`);
    }
    if (!res.ok) {
      if (body !== undefined) return this.#httpFailure(id, res.status, body);
      return this.#readFailure(id, res);
    }
    if ('method' in message && message.method === 'notifications/initialized') this.#openGetStream();
    const extra = id === undefined ? undefined : { relatedRequestId: id };
    const type = mediaType(res);
    if (type === 'text/event-stream') {
      void this.#readPostStream(res, id, extra);
      return;
    }
    if (res.status === 202 && id === undefined) return drain(res);
    if (type === 'application/json') {
      let text: string;
      try {
        const read = await readBounded(res, this.#max);
        if (!read.ok) return this.#tooLarge(id, res.status, read.error.size);
        text = read.value;
      } catch (e) {
        return this.#fail(id, `the server's answer broke off: ${reason(e)}`, e);
      }
      if (text.trim() !== '') this.#deliverText(text, extra);
      if (id !== undefined && this.#pending.has(id)) this.#answer(id, `the server's JSON answer (HTTP ${res.status}) held no response to request ${id}`, { httpStatus: res.status });
      return;
    }
    await drain(res);
    // A 202 for a request: the answer may still come on the GET stream (or the request times out).
    if (id !== undefined && res.status !== 202) this.#answer(id, `the server answered HTTP ${res.status} with content type "${type}"`, { httpStatus: res.status });
  }

  /** Reads the body of an HTTP error (within the bound) and handles it as {@link #httpFailure} does. */
  async #readFailure(id: RequestId | undefined, res: Response): Promise<void> {
    const read = await readBounded(res, this.#max).catch(() => undefined);
    if (read && !read.ok) return this.#tooLarge(id, res.status, read.error.size);
    return this.#httpFailure(id, res.status, read?.value ?? '');
  }

  /** An HTTP error: a JSON-RPC body is delivered (or reported), and a request is answered once. */
  #httpFailure(id: RequestId | undefined, status: number, text: string): void {
    if (this.#closed) return;
    const parsed = text.trim() === '' ? undefined : parseMessage(text);
    let upstream: WireError | undefined;
    if (parsed?.ok) {
      const c = parsed.value;
      if (c.kind === 'error') upstream = c.message.error;
      if (c.kind === 'result' || c.kind === 'error') this.#receive(c, undefined);
    }
    const detail = `the server answered HTTP ${status}${upstream ? `: ${upstream.message}` : text.trim() ? `: ${snippet(text)}` : ''}`;
    if (id !== undefined) this.#answer(id, detail, httpFailure(status, text));
    else if (!upstream) this.onerror?.(new AdapterError('upstream-error', detail));
  }

  /** The session is gone (404, or the HTTP+SSE stream ended): report, answer what is open, close. */
  #lose(detail: string): void {
    if (this.#closed) return;
    this.onerror?.(new AdapterError('upstream-exited', detail));
    this.#closing ??= this.#terminate(detail, false);
  }

  async #readPostStream(res: Response, id: RequestId | undefined, extra: MessageExtra | undefined): Promise<void> {
    const cursor: Cursor = { lastEventId: undefined, events: 0 };
    let broken: unknown;
    let over: number | undefined;
    try {
      over = await this.#consume(res, cursor, extra);
    } catch (e) {
      broken = e;
    }
    if (over !== undefined) return this.#tooLarge(id, res.status, over);
    if (this.#closed || id === undefined || !this.#pending.has(id)) return;
    if (cursor.lastEventId !== undefined) return this.#resume(id, cursor, extra);
    this.#abandon(id, broken === undefined ? 'the server closed the stream before it answered' : `the server's stream broke before it answered: ${reason(broken)}`, 'The stream of the answer broke');
  }

  /** Re-opens a POST stream that had event ids with GET + `Last-Event-ID` until the answer comes. */
  async #resume(id: RequestId, cursor: Cursor, extra: MessageExtra | undefined): Promise<void> {
    const own = this.#pending.get(id)?.abort.signal;
    if (!own) return;
    const signal = AbortSignal.any([this.#abort.signal, own]);
    const { retries, minDelayMs } = this.#reconnect();
    let quiet = 0;
    while (!this.#closed && this.#pending.has(id)) {
      if (quiet > retries) return this.#answer(id, 'the server keeps closing the stream without answering');
      await sleep(this.#retryMs ?? minDelayMs, signal);
      if (signal.aborted) return;
      let res: Response | undefined;
      try {
        res = await this.#openSse(cursor.lastEventId, signal);
      } catch (e) {
        return this.#answer(id, `could not resume the stream: ${reason(e)}`);
      }
      if (!res) return this.#answer(id, 'the server cannot resume the stream (HTTP 405)', { httpStatus: 405 });
      const before = cursor.events;
      const over = await this.#consume(res, cursor, extra).catch(noop);
      if (over !== undefined) return this.#tooLarge(id, res.status, over);
      quiet = cursor.events > before ? 0 : quiet + 1;
    }
  }

  #reconnect(): Required<LegacyHttpReconnectOptions> {
    const r = this.options.reconnect;
    return { retries: r?.retries ?? 5, minDelayMs: r?.minDelayMs ?? 1000, maxDelayMs: r?.maxDelayMs ?? 30_000 };
  }

  /** GET `Accept: text/event-stream` (with backoff on 5xx/429/network); `undefined` means 405. */
  #openSse(lastEventId: string | undefined, signal: AbortSignal): Promise<Response | undefined> {
    const { retries, minDelayMs, maxDelayMs } = this.#reconnect();
    return retry(
      async () => {
        const headers = this.#headers(true);
        headers.set('accept', 'text/event-stream');
        if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
        const res = await this.#fetch(this.#url, { method: 'GET', headers, signal });
        if (res.status === 405) {
          await drain(res);
          return undefined;
        }
        if (res.status === 404 && headers.has('mcp-session-id')) {
          await drain(res);
          this.#expired = true;
          this.#lose(`the server's session ${this.#sessionId ?? ''} has expired (HTTP 404); initialize a new one`);
          throw new GiveUp('the session has expired');
        }
        const failure = !res.ok ? `HTTP ${res.status}` : mediaType(res) !== 'text/event-stream' ? `content type "${mediaType(res)}"` : undefined;
        if (failure === undefined) return res;
        await drain(res);
        const error = new AdapterError('upstream-error', `GET for the SSE stream answered ${failure}`);
        throw res.status >= 500 || res.status === 429 ? error : new GiveUp(error);
      },
      { retries, minDelayMs: this.#retryMs ?? minDelayMs, maxDelayMs, signal },
    );
  }

  #openGetStream(): void {
    if (this.#getStream || this.#closed || this.#mode !== 'streamable') return;
    this.#getStream = true;
    void this.#runGetStream();
  }

  /** The standalone stream: server messages unrelated to any request; re-opened when it drops. */
  async #runGetStream(): Promise<void> {
    const signal = this.#abort.signal;
    const { retries, minDelayMs } = this.#reconnect();
    const cursor: Cursor = { lastEventId: undefined, events: 0 };
    let quiet = 0;
    for (let first = true; !this.#closed; first = false) {
      if (!first) {
        if (quiet > retries) {
          this.onerror?.(new AdapterError('upstream-error', 'the standalone GET stream keeps closing without events; no longer listening'));
          return;
        }
        await sleep(this.#retryMs ?? minDelayMs, signal);
        if (this.#closed) return;
      }
      let res: Response | undefined;
      try {
        res = await this.#openSse(cursor.lastEventId, signal);
      } catch (e) {
        if (!this.#closed) this.onerror?.(new AdapterError('upstream-error', `the standalone GET stream could not be opened: ${reason(e)}`, { cause: e }));
        return;
      }
      if (!res) return;
      const before = cursor.events;
      const over = await this.#consume(res, cursor, undefined).catch(noop);
      if (over !== undefined && !this.#closed) {
        this.onerror?.(new AdapterError('protocol', `an event larger than ${this.#max} bytes on the standalone GET stream (${over} bytes seen); re-opening it`));
      }
      quiet = cursor.events > before ? 0 : quiet + 1;
    }
  }

  /**
   * Reads one SSE body to its end: `message` events are delivered, others go to `onOther`. Resolves
   * with the bytes seen when an event went past the bound (the stream then ended there).
   */
  async #consume(res: Response, cursor: Cursor, extra: MessageExtra | undefined, onOther?: (event: EventSourceMessage) => void): Promise<number | undefined> {
    if (!res.body) return undefined;
    let over: number | undefined;
    await readSse(res.body, {
      onEvent: (event) => {
        cursor.events++;
        if (event.id !== undefined) cursor.lastEventId = event.id;
        if (event.event !== undefined && event.event !== 'message') return onOther?.(event);
        if (event.data.trim() !== '') this.#deliverText(event.data, extra);
      },
      onRetry: (ms) => {
        this.#retryMs = ms;
      },
      onError: (e) => {
        if (e.type !== 'unknown-field' && !this.#closed) this.onerror?.(new AdapterError('protocol', `bad SSE from the server: ${e.message}`, { cause: e }));
      },
      maxEventBytes: this.#max,
      onTooLarge: (size) => {
        over = size;
      },
    });
    return over;
  }

  // ── HTTP+SSE (2024-11-05) ─────────────────────────────────────────────────

  async #fallBack(message: JsonRpcMessage, id: RequestId | undefined, status: number): Promise<void> {
    this.#mode = 'sse';
    try {
      await this.#connectSse();
    } catch (e) {
      const detail = `the server refused Streamable HTTP (HTTP ${status}) and HTTP+SSE (${reason(e)})`;
      // What the HTTP+SSE attempt met is the upstream's last word.
      this.#answer(id, detail, e instanceof AdapterError && e.upstream ? e.upstream : { httpStatus: status });
      this.onerror?.(new AdapterError('upstream-error', detail, { cause: e }));
      this.#closing ??= this.#terminate(detail, false);
      return;
    }
    await this.#postSse(message, id);
  }

  /** GETs the SSE endpoint and waits for its `endpoint` event; the stream then carries every answer. */
  async #connectSse(): Promise<void> {
    const headers = this.#headers(false);
    headers.set('accept', 'text/event-stream');
    let res: Response;
    try {
      res = await this.#fetch(this.#url, { method: 'GET', headers, signal: this.#abort.signal });
    } catch (e) {
      throw new AdapterError('upstream-error', `could not GET ${this.#url.href}: ${reason(e)}`, { cause: e, upstream: networkFailure(e) });
    }
    if (!res.ok || mediaType(res) !== 'text/event-stream') {
      const failure = httpFailure(res.status, await readSome(res));
      throw new AdapterError('upstream-error', `GET ${this.#url.href} answered HTTP ${res.status} (${mediaType(res) || 'no content type'}), not an SSE stream${failure.body ? `: ${failure.body}` : ''}`, { upstream: failure });
    }
    let found: (url: URL) => void = noop;
    let lost: (e: Error) => void = noop;
    const endpoint = new Promise<URL>((resolve, reject) => {
      found = resolve;
      lost = reject;
    });
    const onOther = (event: EventSourceMessage): void => {
      if (event.event !== 'endpoint' || this.#endpoint) return;
      let url: URL;
      try {
        url = new URL(event.data.trim(), this.#url);
      } catch {
        return lost(new AdapterError('protocol', `the endpoint event holds no URL: ${snippet(event.data)}`));
      }
      if (url.origin !== this.#url.origin) return lost(new AdapterError('protocol', `the endpoint ${url.href} is on another origin`));
      found(url);
    };
    const cursor: Cursor = { lastEventId: undefined, events: 0 };
    void this.#consume(res, cursor, undefined, onOther).then(
      (over) => this.#sseEnded(lost, over === undefined ? 'closed' : `broke off at an event larger than ${this.#max} bytes`),
      (e: unknown) => this.#sseEnded(lost, `broke (${reason(e)})`),
    );
    const ms = this.options.requestTimeoutMs ?? 30_000;
    const timer = setTimeout(() => lost(new AdapterError('timeout', `no endpoint event within ${ms} ms`)), ms);
    try {
      this.#endpoint = await endpoint;
    } finally {
      clearTimeout(timer);
    }
  }

  #sseEnded(lost: (e: Error) => void, how: string): void {
    lost(new AdapterError('upstream-error', `the SSE stream ${how} before its endpoint event`));
    if (this.#endpoint) this.#lose(`the HTTP+SSE stream ${how}; the server's session is gone`);
  }

  async #postSse(message: JsonRpcMessage, id: RequestId | undefined): Promise<void> {
    const endpoint = this.#endpoint;
    if (!endpoint) return this.#fail(id, 'no HTTP+SSE endpoint to POST to');
    const posted = await this.#post(endpoint, message, id, false);
    if (!posted) return;
    const { res } = posted;
    if (res.status === 404) {
      await drain(res);
      return this.#lose(`the HTTP+SSE endpoint answered HTTP 404; the server's session is gone`);
    }
    if (!res.ok) return this.#readFailure(id, res);
    await drain(res);
  }

  // ── closing ───────────────────────────────────────────────────────────────

  /** Closes for good; requests still open are answered with `detail`. */
  async #terminate(detail: string, deleteSession: boolean): Promise<void> {
    this.#closed = true;
    this.options.signal?.removeEventListener('abort', this.#onAbort);
    this.#abort.abort();
    for (const id of [...this.#pending.keys()]) this.#answer(id, detail);
    this.#abandoned.clear();
    const session = this.#sessionId;
    if (deleteSession && this.#mode === 'streamable' && session !== undefined) await this.#deleteSession();
    this.onclose?.();
  }

  async #deleteSession(): Promise<void> {
    try {
      const res = await this.#fetch(this.#url, { method: 'DELETE', headers: this.#headers(true), signal: AbortSignal.timeout(this.options.requestTimeoutMs ?? 5000) });
      await drain(res);
      if (!res.ok && res.status !== 405 && res.status !== 404) this.onerror?.(new AdapterError('upstream-error', `ending the session answered HTTP ${res.status}`));
    } catch (e) {
      this.onerror?.(new AdapterError('upstream-error', `could not end the session: ${reason(e)}`, { cause: e }));
    }
  }
}
