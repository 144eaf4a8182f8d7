/**
 * The client side of a LEGACY MCP server at an HTTP URL: one `Transport` over Streamable HTTP
 * (`legacyStreamableClient.ts`) or the deprecated HTTP+SSE (`legacySseClient.ts`), chosen by `mode`
 * or by the spec's fallback probe. It only moves messages, never answers the server. Every request
 * sent gets exactly one answer: the server's, or a synthesised -32603 (also past `maxMessageBytes`).
 */
import type { UpstreamFailure } from '../util/upstreamFailure.ts';
import { AdapterError } from '../core/errors.ts';
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import type { Transport } from './transport.ts';
import type { LegacyHttpClientOptions, LegacyHttpMode } from './legacyHttpClientOptions.ts';
import { LegacyHttpClientLink, noop, reason } from './legacyHttpClientLink.ts';
import { LegacySseClient } from './legacySseClient.ts';
import { LegacyStreamableClient } from './legacyStreamableClient.ts';

export type { LegacyHttpClientOptions, LegacyHttpMode, LegacyHttpReconnectOptions } from './legacyHttpClientOptions.ts';

/** A `Transport` to a legacy MCP server over Streamable HTTP or HTTP+SSE. */
export class LegacyHttpClientTransport implements Transport {
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  readonly options: LegacyHttpClientOptions;
  readonly #link: LegacyHttpClientLink;
  readonly #streamable: LegacyStreamableClient;
  readonly #sse: LegacySseClient;
  #gate: Promise<void> | undefined;
  #started: Promise<void> | undefined;

  constructor(options: LegacyHttpClientOptions) {
    this.options = options;
    this.#link = new LegacyHttpClientLink(options, this);
    this.#streamable = new LegacyStreamableClient(this.#link);
    this.#sse = new LegacySseClient(this.#link);
  }

  /** The transport in use: fixed by the options, or known once the first POST was answered (`auto`). */
  get mode(): LegacyHttpMode | undefined {
    return this.#link.mode;
  }

  /** The `Mcp-Session-Id` the server gave with its `initialize` result (Streamable HTTP). */
  get sessionId(): string | undefined {
    return this.#link.sessionId;
  }

  /** What the server said when it made the connection useless (its credentials refused), once closed. */
  get failure(): UpstreamFailure | undefined {
    return this.#link.failure;
  }

  /** True once the server answered 404 to the session's id: the session is gone, not the server. */
  get sessionExpired(): boolean {
    return this.#streamable.expired;
  }

  /** The negotiated version sent as `MCP-Protocol-Version` (Streamable HTTP). */
  get protocolVersion(): string | undefined {
    return this.#link.protocolVersion;
  }

  /** Sets the `MCP-Protocol-Version` header value; also learnt from the `initialize` result. */
  setProtocolVersion(version: string): void {
    this.#link.protocolVersion = version;
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
    this.#link.assertOpen();
    if (this.#link.mode !== 'sse') return;
    try {
      await this.#sse.connect();
    } catch (e) {
      this.#link.end(`the server could not be reached: ${reason(e)}`);
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
    const link = this.#link;
    link.assertOpen();
    // A failed HTTP+SSE connection closes the transport; the send then throws 'closed' below.
    await this.#ensureStarted().catch(noop);
    while (this.#gate) await this.#gate;
    link.assertOpen();
    const request = 'method' in message && 'id' in message ? message : undefined;
    const id = request?.id;
    if (request) {
      link.track(request.id, request.method);
      if (request.method === 'initialize') link.initializeId = request.id;
    }
    if (link.mode === undefined) {
      const first = this.#first(message, id);
      this.#hold(first);
      return first;
    }
    return link.mode === 'sse' ? this.#sse.post(message, id) : this.#streamable.post(message, id);
  }

  /** The first message in `auto`: Streamable HTTP, or HTTP+SSE when the server refuses it. */
  async #first(message: JsonRpcMessage, id: RequestId | undefined): Promise<void> {
    const refused = await this.#streamable.first(message, id);
    if (refused !== undefined) await this.#sse.fallBack(message, id, refused);
  }

  /** Ends the session (DELETE, 405 ignored), aborts every stream, answers requests still open. Idempotent. */
  async close(): Promise<void> {
    await this.#link.close(() => this.#streamable.endSession());
  }
}
