/**
 * The HTTP+SSE half of the legacy HTTP client (2024-11-05, deprecated since): one GET stream that
 * first names, in its `endpoint` event, where to POST, and then carries every answer and server
 * message; the session lives as long as that stream. Not Streamable HTTP, and not the choice
 * between the two: `LegacyHttpClientTransport` makes it.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import { mediaType } from './sse.ts';
import { AdapterError } from '../core/errors.ts';
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import {
  drain,
  httpFailure,
  networkFailure,
  noop,
  reason,
  snippet,
  type Cursor,
  type LegacyHttpClientLink,
} from './legacyHttpClientLink.ts';

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

/** HTTP+SSE over a {@link LegacyHttpClientLink}. */
export class LegacySseClient {
  readonly #link: LegacyHttpClientLink;
  #endpoint: URL | undefined;

  constructor(link: LegacyHttpClientLink) {
    this.#link = link;
  }

  /** Where messages are POSTed, once the `endpoint` event named it. */
  get endpoint(): URL | undefined {
    return this.#endpoint;
  }

  /**
   * GETs the SSE endpoint and waits for its `endpoint` event (same origin only, within
   * `requestTimeoutMs`, default 30 s); the stream then carries every answer. Throws an
   * `AdapterError` (with what the server said, when it said something) when that fails.
   */
  async connect(): Promise<void> {
    const link = this.#link;
    const headers = link.headers(false);
    headers.set('accept', 'text/event-stream');
    let res: Response;
    try {
      res = await link.fetch(link.url, { method: 'GET', headers, signal: link.abort.signal });
    } catch (e) {
      throw new AdapterError('upstream-error', `could not GET ${link.url.href}: ${reason(e)}`, { cause: e, upstream: networkFailure(e) });
    }
    if (!res.ok || mediaType(res) !== 'text/event-stream') {
      const failure = httpFailure(res.status, await readSome(res), res.headers);
      throw new AdapterError(
        'upstream-error',
        `GET ${link.url.href} answered HTTP ${res.status} (${mediaType(res) || 'no content type'}), not an SSE stream${failure.body ? `: ${failure.body}` : ''}`,
        { upstream: failure },
      );
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
        url = new URL(event.data.trim(), link.url);
      } catch {
        return lost(new AdapterError('protocol', `the endpoint event holds no URL: ${snippet(event.data)}`));
      }
      if (url.origin !== link.url.origin) return lost(new AdapterError('protocol', `the endpoint ${url.href} is on another origin`));
      found(url);
    };
    const cursor: Cursor = { lastEventId: undefined, events: 0 };
    void link.consume(res, cursor, undefined, onOther).then(
      (over) => this.#ended(lost, over === undefined ? 'closed' : `broke off at an event larger than ${link.max} bytes`),
      (e: unknown) => this.#ended(lost, `broke (${reason(e)})`),
    );
    const ms = link.options.requestTimeoutMs ?? 30_000;
    const timer = setTimeout(() => lost(new AdapterError('timeout', `no endpoint event within ${ms} ms`)), ms);
    try {
      this.#endpoint = await endpoint;
    } finally {
      clearTimeout(timer);
    }
  }

  #ended(lost: (e: Error) => void, how: string): void {
    lost(new AdapterError('upstream-error', `the SSE stream ${how} before its endpoint event`));
    if (this.#endpoint) this.#link.lose(`the HTTP+SSE stream ${how}; the server's session is gone`);
  }

  /** POSTs one message to the endpoint; its answer comes on the stream. A 404 means the session is gone. */
  async post(message: JsonRpcMessage, id: RequestId | undefined): Promise<void> {
    const link = this.#link;
    const endpoint = this.#endpoint;
    if (!endpoint) return link.fail(id, 'no HTTP+SSE endpoint to POST to');
    const posted = await link.post(endpoint, message, id, false);
    if (!posted) return;
    const { res } = posted;
    if (res.status === 404) {
      await drain(res);
      return link.lose(`the HTTP+SSE endpoint answered HTTP 404; the server's session is gone`);
    }
    if (!res.ok) return link.readFailure(id, res);
    await drain(res);
  }

  /**
   * The server refused Streamable HTTP (`status`): switches to HTTP+SSE, connects and POSTs
   * `message`. When that fails too, the request is answered, the failure reported and the link closed.
   */
  async fallBack(message: JsonRpcMessage, id: RequestId | undefined, status: number): Promise<void> {
    const link = this.#link;
    link.mode = 'sse';
    try {
      await this.connect();
    } catch (e) {
      const detail = `the server refused Streamable HTTP (HTTP ${status}) and HTTP+SSE (${reason(e)})`;
      // What the HTTP+SSE attempt met is the upstream's last word.
      link.answer(id, detail, e instanceof AdapterError && e.upstream ? e.upstream : { httpStatus: status });
      link.report(new AdapterError('upstream-error', detail, { cause: e }));
      link.end(detail);
      return;
    }
    await this.post(message, id);
  }
}
