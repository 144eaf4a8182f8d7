/**
 * The Streamable HTTP half of the legacy HTTP client (2025-03-26 … 2025-11-25): POSTs answered
 * with JSON or an SSE stream, the session id, the standalone GET stream, resumption with
 * `Last-Event-ID`, and the closing DELETE. Not the choice of transport nor the HTTP+SSE fallback:
 * `LegacyHttpClientTransport` decides, from what the first POST met.
 */
import { mediaType } from './sse.ts';
import { readBounded } from './messageBound.ts';
import { GiveUp, retry } from '../util/retry.ts';
import { AdapterError } from '../core/errors.ts';
import { parseMessage, type JsonRpcMessage, type RequestId } from '../core/jsonrpc.ts';
import type { MessageExtra } from './transport.ts';
import type { LegacyHttpReconnectOptions } from './legacyHttpClientOptions.ts';
import { drain, noop, reason, type Cursor, type LegacyHttpClientLink } from './legacyHttpClientLink.ts';

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

/**
 * How long `initialized` waits for the standalone stream to open before it is sent anyway. Servers
 * answer the GET at once, but a loaded one can take seconds (many sessions opening together): a
 * request it sends unrelated to any call before the stream is open is dropped (the SDK's server
 * transport does), and the call waiting on it hangs. So the wait is long; it only ends early for
 * a server that holds the stream's headers back, which costs that server this much per session.
 */
const GET_STREAM_WAIT_MS = 10_000;

/** Streamable HTTP over a {@link LegacyHttpClientLink}. */
export class LegacyStreamableClient {
  readonly #link: LegacyHttpClientLink;
  #getStream = false;
  /** Resolves once the standalone stream is open (or will not be): later POSTs wait for it. */
  #standalone: Promise<void> | undefined;
  /** Told once the standalone stream first opens (or will not). */
  #opened: (() => void) | undefined;
  #expired = false;
  /**
   * The standalone stream was refused for its credentials (401 or 403) on a connection whose
   * credentials are read anew before each request: it is opened again before the next POST.
   */
  #refusedGet = false;

  constructor(link: LegacyHttpClientLink) {
    this.#link = link;
  }

  /** True once the server answered 404 to the session's id: the session is gone, not the server. */
  get expired(): boolean {
    return this.#expired;
  }

  /**
   * The first POST when the transport is not known yet. Resolves with the status of a refusal that
   * says the server does not speak Streamable HTTP (400/404/405 without a JSON-RPC body), so the
   * caller falls back to HTTP+SSE; otherwise the mode is Streamable HTTP and the answer handled.
   */
  async first(message: JsonRpcMessage, id: RequestId | undefined): Promise<number | undefined> {
    const link = this.#link;
    const posted = await link.post(link.url, message, id, true);
    if (!posted) return undefined;
    const { res } = posted;
    if (res.status === 400 || res.status === 404 || res.status === 405) {
      // A body past the bound cannot be the JSON-RPC error that would keep us on Streamable HTTP.
      const read = await readBounded(res, link.max).catch(() => undefined);
      const text = read?.ok ? read.value : '';
      const parsed = text.trim() === '' ? undefined : parseMessage(text);
      const rpc = parsed?.ok === true && (parsed.value.kind === 'result' || parsed.value.kind === 'error');
      if (!rpc) return res.status;
      link.mode = 'streamable';
      await this.#handle(message, id, res, false, text);
      return undefined;
    }
    link.mode = 'streamable';
    await this.#handle(message, id, res, posted.sentSession);
    return undefined;
  }

  /** POSTs one message and handles its answer. */
  async post(message: JsonRpcMessage, id: RequestId | undefined): Promise<void> {
    const link = this.#link;
    // The standalone stream is open before the server hears `initialized` or any later message: a
    // server that sends a request of its own then, unrelated to any call (on that stream), is not
    // left with nowhere to send it (the SDK's server transport drops it).
    if ('method' in message && message.method === 'notifications/initialized') this.#standalone ??= this.#openGetStream();
    if (this.#refusedGet) {
      // New credentials may have come: the stream is open again before the server hears more
      // (what it sends unrelated to a call meanwhile would have nowhere to go).
      this.#refusedGet = false;
      this.#getStream = false;
      this.#standalone = this.#openGetStream();
    }
    if (this.#standalone) await this.#standalone;
    const posted = await link.post(link.url, message, id, true);
    if (posted) await this.#handle(message, id, posted.res, posted.sentSession);
  }

  async #handle(message: JsonRpcMessage, id: RequestId | undefined, res: Response, sentSession: boolean, body?: string): Promise<void> {
    const link = this.#link;
    if (id !== undefined && id === link.initializeId) {
      const session = res.headers.get('mcp-session-id');
      if (session) link.sessionId = session;
    }
    if (res.status === 404 && sentSession) {
      await drain(res);
      this.#expired = true;
      return link.lose(`the server's session ${link.sessionId ?? ''} has expired (HTTP 404); initialize a new one`);
    }
    if (!res.ok) {
      if (body !== undefined) return link.httpFailure(id, res.status, body, res.headers);
      return link.readFailure(id, res);
    }
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
        const read = await readBounded(res, link.max);
        if (!read.ok) return link.tooLarge(id, res.status, read.error.size);
        text = read.value;
      } catch (e) {
        return link.fail(id, `the server's answer broke off: ${reason(e)}`, e);
      }
      if (text.trim() !== '') link.deliverText(text, extra);
      if (id !== undefined && link.waiting(id))
        link.answer(id, `the server's JSON answer (HTTP ${res.status}) held no response to request ${id}`, { httpStatus: res.status });
      return;
    }
    await drain(res);
    // A 202 for a request: the answer may still come on the GET stream (or the request times out).
    if (id !== undefined && res.status !== 202)
      link.answer(id, `the server answered HTTP ${res.status} with content type "${type}"`, { httpStatus: res.status });
  }

  async #readPostStream(res: Response, id: RequestId | undefined, extra: MessageExtra | undefined): Promise<void> {
    const link = this.#link;
    const cursor: Cursor = { lastEventId: undefined, events: 0 };
    let broken: unknown;
    let over: number | undefined;
    try {
      over = await link.consume(res, cursor, extra);
    } catch (e) {
      broken = e;
    }
    if (over !== undefined) return link.tooLarge(id, res.status, over);
    if (link.closed || id === undefined || !link.waiting(id)) return;
    if (cursor.lastEventId !== undefined) return this.#resume(id, cursor, extra);
    link.abandon(
      id,
      broken === undefined
        ? 'the server closed the stream before it answered'
        : `the server's stream broke before it answered: ${reason(broken)}`,
      'The stream of the answer broke',
    );
  }

  /** Re-opens a POST stream that had event ids with GET + `Last-Event-ID` until the answer comes. */
  async #resume(id: RequestId, cursor: Cursor, extra: MessageExtra | undefined): Promise<void> {
    const link = this.#link;
    const own = link.ownSignal(id);
    if (!own) return;
    const signal = AbortSignal.any([link.abort.signal, own]);
    const { retries, minDelayMs } = this.#reconnect();
    let quiet = 0;
    while (!link.closed && link.waiting(id)) {
      if (quiet > retries) return link.answer(id, 'the server keeps closing the stream without answering');
      await sleep(link.retryMs ?? minDelayMs, signal);
      if (signal.aborted) return;
      let res: Response | undefined;
      try {
        res = await this.#openSse(cursor.lastEventId, signal);
        this.#opened?.();
      } catch (e) {
        return link.answer(id, `could not resume the stream: ${reason(e)}`);
      }
      if (!res) return link.answer(id, 'the server cannot resume the stream (HTTP 405)', { httpStatus: 405 });
      const before = cursor.events;
      const over = await link.consume(res, cursor, extra).catch(noop);
      if (over !== undefined) return link.tooLarge(id, res.status, over);
      quiet = cursor.events > before ? 0 : quiet + 1;
    }
  }

  #reconnect(): Required<LegacyHttpReconnectOptions> {
    const r = this.#link.options.reconnect;
    return { retries: r?.retries ?? 5, minDelayMs: r?.minDelayMs ?? 1000, maxDelayMs: r?.maxDelayMs ?? 30_000 };
  }

  /** GET `Accept: text/event-stream` (with backoff on 5xx/429/network); `undefined` means 405. */
  #openSse(lastEventId: string | undefined, signal: AbortSignal): Promise<Response | undefined> {
    const link = this.#link;
    const { retries, minDelayMs, maxDelayMs } = this.#reconnect();
    return retry(
      async () => {
        const headers = link.headers(true);
        headers.set('accept', 'text/event-stream');
        if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
        const res = await link.fetch(link.url, { method: 'GET', headers, signal });
        if (res.status === 405) {
          await drain(res);
          return undefined;
        }
        if (res.status === 404 && headers.has('mcp-session-id')) {
          await drain(res);
          this.#expired = true;
          link.lose(`the server's session ${link.sessionId ?? ''} has expired (HTTP 404); initialize a new one`);
          throw new GiveUp('the session has expired');
        }
        const failure = !res.ok
          ? `HTTP ${res.status}`
          : mediaType(res) !== 'text/event-stream'
            ? `content type "${mediaType(res)}"`
            : undefined;
        if (failure === undefined) return res;
        await drain(res);
        if ((res.status === 401 || res.status === 403) && link.options.onAuthRefusal === 'answer') this.#refusedGet = true;
        const error = new AdapterError('upstream-error', `GET for the SSE stream answered ${failure}`);
        throw res.status >= 500 || res.status === 429 ? error : new GiveUp(error);
      },
      { retries, minDelayMs: link.retryMs ?? minDelayMs, maxDelayMs, signal },
    );
  }

  /** Opens the standalone stream; resolves once it is open, refused, given up on, or after `GET_STREAM_WAIT_MS`. */
  #openGetStream(): Promise<void> {
    const link = this.#link;
    if (this.#getStream || link.closed || link.mode !== 'streamable') return Promise.resolve();
    this.#getStream = true;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, GET_STREAM_WAIT_MS);
      this.#opened = () => {
        clearTimeout(timer);
        this.#opened = undefined;
        resolve();
      };
      void this.#runGetStream().finally(() => this.#opened?.());
    });
  }

  /** The standalone stream: server messages unrelated to any request; re-opened when it drops. */
  async #runGetStream(): Promise<void> {
    const link = this.#link;
    const signal = link.abort.signal;
    const { retries, minDelayMs } = this.#reconnect();
    const cursor: Cursor = { lastEventId: undefined, events: 0 };
    let quiet = 0;
    for (let first = true; !link.closed; first = false) {
      if (!first) {
        if (quiet > retries) {
          link.report(new AdapterError('upstream-error', 'the standalone GET stream keeps closing without events; no longer listening'));
          return;
        }
        await sleep(link.retryMs ?? minDelayMs, signal);
        if (link.closed) return;
      }
      let res: Response | undefined;
      try {
        res = await this.#openSse(cursor.lastEventId, signal);
        this.#opened?.();
      } catch (e) {
        if (!link.closed)
          link.report(new AdapterError('upstream-error', `the standalone GET stream could not be opened: ${reason(e)}`, { cause: e }));
        return;
      }
      if (!res) return;
      const before = cursor.events;
      const over = await link.consume(res, cursor, undefined).catch(noop);
      if (over !== undefined && !link.closed) {
        link.report(
          new AdapterError(
            'protocol',
            `an event larger than ${link.max} bytes on the standalone GET stream (${over} bytes seen); re-opening it`,
          ),
        );
      }
      quiet = cursor.events > before ? 0 : quiet + 1;
    }
  }

  /** Ends the server's session: DELETE with its id (405 and 404 are fine), within a deadline. */
  async endSession(): Promise<void> {
    const link = this.#link;
    try {
      const res = await link.fetch(link.url, {
        method: 'DELETE',
        headers: link.headers(true),
        signal: AbortSignal.timeout(link.options.requestTimeoutMs ?? 5000),
      });
      await drain(res);
      if (!res.ok && res.status !== 405 && res.status !== 404)
        link.report(new AdapterError('upstream-error', `ending the session answered HTTP ${res.status}`));
    } catch (e) {
      link.report(new AdapterError('upstream-error', `could not end the session: ${reason(e)}`, { cause: e }));
    }
  }
}
