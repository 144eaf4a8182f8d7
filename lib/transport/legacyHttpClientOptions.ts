/**
 * The options of the client side of a legacy MCP server at an HTTP URL: which transport
 * (Streamable HTTP, HTTP+SSE, or found by the fallback probe), headers, deadlines, reconnection,
 * the bound on what is read. Types only; `LegacyHttpClientTransport` is what reads them.
 */

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

/** Options of `LegacyHttpClientTransport`. */
export interface LegacyHttpClientOptions {
  /** The Streamable HTTP endpoint, or the SSE endpoint of an HTTP+SSE server. */
  readonly url: string | URL;
  /** `auto` (default) tries Streamable HTTP and falls back to HTTP+SSE when the first POST gets 400/404/405. */
  readonly mode?: LegacyHttpMode | 'auto';
  /**
   * Extra headers on every HTTP request (e.g. `Authorization`), or a function read before each
   * request (a relayed client's current `Authorization`, which changes when its token is refreshed).
   */
  readonly headers?: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>);
  /**
   * What a 401 or 403 to a request of an established session does: `end` (default) answers the
   * request with the refusal and closes the connection (its credentials are no longer good: a new
   * connection is opened with new ones); `answer` answers the request only (the headers are read
   * anew before each request, and the next may carry a refreshed token).
   */
  readonly onAuthRefusal?: 'end' | 'answer';
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
