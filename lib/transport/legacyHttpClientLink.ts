/**
 * What the two legacy HTTP client transports (Streamable HTTP, HTTP+SSE) share: the requests in
 * flight and their one answer each (the server's, or a synthesised -32603), receiving and
 * delivering messages, the POST, reading an SSE body within the bound, and closing. It chooses no
 * transport and opens no stream of its own: `LegacyHttpClientTransport` and its two halves do.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import { readSse } from './sse.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, readBounded, tooLargeDetail } from './messageBound.ts';
import { AdapterError, internalError, type WireError } from '../core/errors.ts';
import { bodyExcerpt, BODY_EXCERPT_CHARS, MAX_CHALLENGE_CHARS, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { classify, errorResponse, parseMessage, type Classified, type JsonRpcMessage, type RequestId } from '../core/jsonrpc.ts';
import type { MessageExtra } from './transport.ts';
import type { LegacyHttpClientOptions, LegacyHttpMode } from './legacyHttpClientOptions.ts';
import { KeyedTable } from '../util/idTable.ts';

/** The transport a link serves: where messages and errors go, and how a cancellation is sent. */
export interface LinkOwner {
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  send(message: JsonRpcMessage): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  readonly method: string;
  readonly abort: AbortController;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Where we are in one SSE stream, kept across reconnections. */
export interface Cursor {
  lastEventId: string | undefined;
  events: number;
}

/** Does nothing: for promises whose failure is already handled. */
export const noop = (): void => {};

/** An error's message (and its cause's), for a detail. */
export function reason(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? ` (${e.cause.message})` : '';
  return `${e.message}${cause}`;
}

/** A fetch that failed without an answer, as a failure: the network's own error (`connect ECONNREFUSED …`). */
export function networkFailure(e: unknown): UpstreamFailure {
  const inner = e instanceof Error && e.cause instanceof Error ? e.cause.message : e instanceof Error ? e.message : String(e);
  return { network: inner.slice(0, BODY_EXCERPT_CHARS) };
}

/** An HTTP refusal as a failure: its status, the start of its body, and the challenge of a 401 or 403. */
export function httpFailure(status: number, text: string, headers?: Headers): UpstreamFailure {
  const body = bodyExcerpt(text);
  const challenge = status === 401 || status === 403 ? headers?.get('www-authenticate')?.slice(0, MAX_CHALLENGE_CHARS) : undefined;
  return { httpStatus: status, ...(body === '' ? {} : { body }), ...(challenge ? { challenge } : {}) };
}

/** Leaves a body unread. */
export async function drain(res: Response): Promise<void> {
  await res.body?.cancel().catch(noop);
}

/** A text on one line, 200 characters at most. */
export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/** The state one legacy HTTP client connection keeps, and what both of its transports do alike. */
export class LegacyHttpClientLink {
  readonly options: LegacyHttpClientOptions;
  readonly url: URL;
  readonly fetch: typeof globalThis.fetch;
  /** Aborted on close: every fetch and stream of the connection. */
  readonly abort = new AbortController();
  readonly #owner: LinkOwner;
  /** Not a `Map`: see `KeyedTable`. */
  readonly #pending = new KeyedTable<RequestId, Pending>();
  /** Requests answered locally; a late answer from the server is dropped. */
  readonly #abandoned = new Set<RequestId>();
  /** The transport in use, once known. */
  mode: LegacyHttpMode | undefined;
  /** True once closed for good. */
  closed = false;
  #closing: Promise<void> | undefined;
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  /** Why the connection is of no further use, in the server's words (its credentials were refused). */
  failure: UpstreamFailure | undefined;
  initializeId: RequestId | undefined;
  /** The reconnection delay the server asked for with SSE `retry`. */
  retryMs: number | undefined;
  readonly #onAbort = (): void => void this.#owner.close();

  constructor(options: LegacyHttpClientOptions, owner: LinkOwner) {
    this.options = options;
    this.#owner = owner;
    this.url = new URL(options.url);
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    if (options.mode === 'streamable' || options.mode === 'sse') this.mode = options.mode;
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The largest JSON body or SSE event read from the server. */
  get max(): number {
    return this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** Throws `closed` once the transport is closed. */
  assertOpen(): void {
    if (this.closed) throw new AdapterError('closed', 'the legacy HTTP transport is closed');
  }

  // ── requests and their one answer ─────────────────────────────────────────

  /** Whether request `id` still waits for its answer. */
  waiting(id: RequestId): boolean {
    return this.#pending.has(id);
  }

  /** The abort signal of request `id` alone, while it waits. */
  ownSignal(id: RequestId): AbortSignal | undefined {
    return this.#pending.get(id)?.abort.signal;
  }

  /** Starts waiting for the answer to request `id` (with its deadline, if any). */
  track(id: RequestId, method: string): void {
    const pending: Pending = { method, abort: new AbortController(), timer: undefined };
    const ms = this.options.requestTimeoutMs;
    if (ms !== undefined) pending.timer = setTimeout(() => this.#timedOut(id, ms), ms);
    this.#pending.set(id, pending);
    // The id sent again (a client resending a request refused for its credentials): its answer is this one's.
    this.#abandoned.delete(id);
  }

  #settle(id: RequestId): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    clearTimeout(pending.timer);
    this.#pending.delete(id);
    return pending;
  }

  /** Answers a request locally with -32603 (once), and stops listening for the server's answer. */
  answer(id: RequestId | undefined, detail: string, failure?: UpstreamFailure): void {
    if (id === undefined) return;
    const pending = this.#settle(id);
    if (!pending) return;
    this.#abandoned.add(id);
    pending.abort.abort();
    const error: WireError = failure === undefined ? internalError(detail) : { ...internalError(detail), data: { ...failure } };
    this.#owner.onmessage?.(errorResponse(id, error));
  }

  #timedOut(id: RequestId, ms: number): void {
    const method = this.#pending.get(id)?.method;
    if (method === undefined || this.closed) return;
    this.abandon(id, `the server did not answer ${method} within ${ms} ms`, 'Request timed out');
  }

  /**
   * Answers a request the server may still be working on (its answer will never come), and tells
   * the server to stop: a dropped connection is not a cancellation (spec), so it has to be said.
   */
  abandon(id: RequestId, detail: string, reason: string, failure?: UpstreamFailure): void {
    const method = this.#pending.get(id)?.method;
    if (method === undefined) return;
    this.answer(id, detail, failure);
    if (method !== 'initialize' && !this.closed) {
      this.#owner.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }).catch(noop);
    }
  }

  /** An answer past the bound: its request gets its one -32603 and is cancelled upstream; anything else is reported. */
  tooLarge(id: RequestId | undefined, status: number, size: number): void {
    if (this.closed) return;
    const detail = tooLargeDetail(this.max);
    if (id !== undefined && this.#pending.has(id)) this.abandon(id, detail, 'The answer was too large', { httpStatus: status });
    else this.#owner.onerror?.(new AdapterError('protocol', `${detail} (${size} bytes seen); dropped`));
  }

  /** A request's POST failed without an HTTP answer; anything else is only reported. */
  fail(id: RequestId | undefined, detail: string, cause?: unknown): void {
    if (this.closed) return;
    if (id !== undefined)
      this.abandon(id, detail, 'The connection to the server broke', cause === undefined ? undefined : networkFailure(cause));
    else this.#owner.onerror?.(new AdapterError('upstream-error', detail, { cause }));
  }

  /** Reports an error through the transport's `onerror`. */
  report(error: Error): void {
    this.#owner.onerror?.(error);
  }

  // ── receiving ─────────────────────────────────────────────────────────────

  /** Parses what the server sent and delivers it (a response settles its request). */
  deliverText(text: string, extra: MessageExtra | undefined): void {
    const parsed = parseMessage(text);
    if (!parsed.ok) {
      this.#owner.onerror?.(
        new AdapterError('protocol', `the server sent something that is not a JSON-RPC message: ${parsed.error.message}`),
      );
      return;
    }
    this.#receive(parsed.value, extra);
  }

  #receive(c: Classified, extra: MessageExtra | undefined): void {
    if (this.closed) return;
    if (c.kind === 'batch') {
      for (const item of c.items) {
        const r = classify(item);
        if (r.ok) this.#receive(r.value, extra);
        else this.#owner.onerror?.(new AdapterError('protocol', `a batch from the server held a broken message: ${r.error.message}`));
      }
      return;
    }
    if (c.kind === 'result' || c.kind === 'error') {
      const id = c.message.id;
      if (id === undefined || id === null) {
        const e = (c.message as { error: WireError }).error;
        this.#owner.onerror?.(new AdapterError('upstream-error', `the server reported an error: ${e.message} (${e.code})`, { cause: e }));
        return;
      }
      if (this.#abandoned.delete(id)) return;
      this.#settle(id);
      if (c.kind === 'result' && id === this.initializeId) {
        const version = c.message.result['protocolVersion'];
        if (typeof version === 'string') this.protocolVersion = version;
      }
    }
    if (extra) this.#owner.onmessage?.(c.message, extra);
    else this.#owner.onmessage?.(c.message);
  }

  /**
   * Reads one SSE body to its end: `message` events are delivered, others go to `onOther`. Resolves
   * with the bytes seen when an event went past the bound (the stream then ended there).
   */
  async consume(
    res: Response,
    cursor: Cursor,
    extra: MessageExtra | undefined,
    onOther?: (event: EventSourceMessage) => void,
  ): Promise<number | undefined> {
    if (!res.body) return undefined;
    let over: number | undefined;
    await readSse(res.body, {
      onEvent: (event) => {
        cursor.events++;
        if (event.id !== undefined) cursor.lastEventId = event.id;
        if (event.event !== undefined && event.event !== 'message') return onOther?.(event);
        if (event.data.trim() !== '') this.deliverText(event.data, extra);
      },
      onRetry: (ms) => {
        this.retryMs = ms;
      },
      onError: (e) => {
        if (e.type !== 'unknown-field' && !this.closed)
          this.#owner.onerror?.(new AdapterError('protocol', `bad SSE from the server: ${e.message}`, { cause: e }));
      },
      maxEventBytes: this.max,
      onTooLarge: (size) => {
        over = size;
      },
    });
    return over;
  }

  // ── posting ───────────────────────────────────────────────────────────────

  /** The headers of every request; the session's own (id, version) only on Streamable HTTP. */
  headers(streamable: boolean): Headers {
    const given = this.options.headers;
    const headers = new Headers(typeof given === 'function' ? given() : given);
    if (streamable && this.sessionId !== undefined) headers.set('mcp-session-id', this.sessionId);
    if (streamable && this.protocolVersion !== undefined) headers.set('mcp-protocol-version', this.protocolVersion);
    return headers;
  }

  #signal(id: RequestId | undefined): AbortSignal {
    const own = id === undefined ? undefined : this.#pending.get(id)?.abort.signal;
    if (own) return AbortSignal.any([this.abort.signal, own]);
    const ms = this.options.requestTimeoutMs;
    return ms === undefined ? this.abort.signal : AbortSignal.any([this.abort.signal, AbortSignal.timeout(ms)]);
  }

  /** POSTs one message; `undefined` when the fetch failed (the failure is then handled). */
  async post(
    url: URL,
    message: JsonRpcMessage,
    id: RequestId | undefined,
    streamable: boolean,
  ): Promise<{ res: Response; sentSession: boolean } | undefined> {
    const headers = this.headers(streamable);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json, text/event-stream');
    try {
      const res = await this.fetch(url, { method: 'POST', headers, body: JSON.stringify(message), signal: this.#signal(id) });
      return { res, sentSession: headers.has('mcp-session-id') };
    } catch (e) {
      this.fail(id, `could not POST to ${url.href}: ${reason(e)}`, e);
      return undefined;
    }
  }

  /** Reads the body of an HTTP error (within the bound) and handles it as {@link LegacyHttpClientLink.httpFailure} does. */
  async readFailure(id: RequestId | undefined, res: Response): Promise<void> {
    const read = await readBounded(res, this.max).catch(() => undefined);
    if (read && !read.ok) return this.tooLarge(id, res.status, read.error.size);
    return this.httpFailure(id, res.status, read?.value ?? '', res.headers);
  }

  /** An HTTP error: a JSON-RPC body is delivered (or reported), and a request is answered once. */
  httpFailure(id: RequestId | undefined, status: number, text: string, headers?: Headers): void {
    if (this.closed) return;
    const parsed = text.trim() === '' ? undefined : parseMessage(text);
    let upstream: WireError | undefined;
    if (parsed?.ok) {
      const c = parsed.value;
      if (c.kind === 'error') upstream = c.message.error;
      if (c.kind === 'result' || c.kind === 'error') this.#receive(c, undefined);
    }
    const detail = `the server answered HTTP ${status}${upstream ? `: ${upstream.message}` : text.trim() ? `: ${snippet(text)}` : ''}`;
    if (id !== undefined) this.answer(id, detail, httpFailure(status, text, headers));
    else if (!upstream) this.#owner.onerror?.(new AdapterError('upstream-error', detail));
    // Credentials the server no longer takes: a connection opened with them is of no further use.
    // (Once the refused request's answer has been taken up, so it is not overtaken by the close.)
    if ((status === 401 || status === 403) && this.sessionId !== undefined && this.options.onAuthRefusal !== 'answer') {
      const detail = `the server refused the credentials of session ${this.sessionId} (HTTP ${status})`;
      this.failure ??= httpFailure(status, text, headers);
      setImmediate(() => this.lose(detail));
    }
  }

  // ── closing ───────────────────────────────────────────────────────────────

  /** The session is gone (404, or the HTTP+SSE stream ended): report, answer what is open, close. */
  lose(detail: string): void {
    if (this.closed) return;
    this.#owner.onerror?.(new AdapterError('upstream-exited', detail));
    this.end(detail);
  }

  /** Closes for good (once) without ending the server's session; requests still open are answered with `detail`. */
  end(detail: string): void {
    this.#closing ??= this.#terminate(detail, undefined);
  }

  /** Closes for good (once); a Streamable HTTP session is ended with `endSession` first. */
  close(endSession: () => Promise<void>): Promise<void> {
    return (this.#closing ??= this.#terminate('the connection was closed before the server answered', endSession));
  }

  async #terminate(detail: string, endSession: (() => Promise<void>) | undefined): Promise<void> {
    this.closed = true;
    this.options.signal?.removeEventListener('abort', this.#onAbort);
    this.abort.abort();
    for (const id of [...this.#pending.keys()]) this.answer(id, detail, this.failure);
    this.#abandoned.clear();
    const session = this.sessionId;
    if (endSession && this.mode === 'streamable' && session !== undefined) await endSession();
    this.#owner.onclose?.();
  }
}
