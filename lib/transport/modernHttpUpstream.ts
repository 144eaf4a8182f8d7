/**
 * A modern (2026-07-28) server over Streamable HTTP, as the adapter's upstream: every request is
 * its own POST carrying `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`; the
 * answer is JSON or an SSE stream of related notifications ending in the response. Closing the
 * stream is the cancellation; an answer past `maxMessageBytes` is not read whole but answered with
 * -32603. Not a legacy client: `legacyPipe()` hands that job to
 * `LegacyHttpClientTransport`.
 */
import type { EventSourceMessage } from 'eventsource-parser';
import { readSse } from './sse.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, readBounded, tooLargeDetail } from './messageBound.ts';
import { AdapterError, internalError } from '../core/errors.ts';
import { classify, errorResponse, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../core/jsonrpc.ts';
import { computeHeaders } from '../core/translate/headers.ts';
import { LegacyHttpClientTransport } from './legacyHttpClient.ts';
import { UpstreamHttpError, type ModernUpstream, type UpstreamCallOptions } from './modernUpstream.ts';
import type { Transport } from './transport.ts';

/** Where a modern HTTP server is and how to reach it. */
export interface ModernHttpUpstreamOptions {
  readonly url: string | URL;
  /** Sent on every request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The fetch to use (default the global one). */
  readonly fetch?: typeof fetch;
  /**
   * The largest JSON answer or SSE event read (default `DEFAULT_MAX_MESSAGE_BYTES`, 16 MiB): past
   * it, reading stops and the call resolves with -32603. Also given to `legacyPipe()`.
   */
  readonly maxMessageBytes?: number;
}

/** A modern Streamable HTTP endpoint. Stateless: nothing to start, nothing held between calls. */
export class ModernHttpUpstream implements ModernUpstream {
  readonly kind = 'http';
  readonly describe: string;
  readonly #options: ModernHttpUpstreamOptions;
  readonly #fetch: typeof fetch;
  #next = 1;

  constructor(options: ModernHttpUpstreamOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? ((...args) => fetch(...args));
    this.describe = String(options.url);
  }

  async start(): Promise<void> {}

  get #max(): number {
    return this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  async request(request: JsonRpcRequest, options: UpstreamCallOptions = {}): Promise<JsonRpcResponse> {
    const headers = computeHeaders(request, options.toolSchema === undefined ? {} : { tool: { inputSchema: options.toolSchema } });
    if (!headers.ok) return errorResponse(request.id, headers.error);
    const id = `h${this.#next++}`;
    const controller = new AbortController();
    const signal = options.signal;
    if (signal?.aborted) throw new AdapterError('cancelled', 'cancelled before it was sent');
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#fetch(this.#options.url, {
        method: 'POST',
        headers: {
          ...this.#options.headers,
          ...headers.value,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ ...request, id }),
        signal: controller.signal,
      });
      const type = response.headers.get('content-type') ?? '';
      if (type.includes('text/event-stream') && response.body) return await this.#stream(response.body, request, id, options);
      const read = await readBounded(response, this.#max);
      if (!read.ok) return errorResponse(request.id, internalError(tooLargeDetail(this.#max)));
      const text = read.value;
      let body: unknown;
      try {
        body = text.length > 0 ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      const c = classify(body);
      if (c.ok && (c.value.kind === 'result' || c.value.kind === 'error')) return { ...c.value.message, id: request.id } as JsonRpcResponse;
      throw new UpstreamHttpError(response.status, response.statusText, text.slice(0, 200));
    } catch (e) {
      if (signal?.aborted) throw new AdapterError('cancelled', 'the call was cancelled');
      if (e instanceof AdapterError) throw e;
      throw new AdapterError('upstream-error', `cannot reach ${this.describe}: ${e instanceof Error ? e.message : String(e)}`, {
        cause: e,
      });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async #stream(
    body: ReadableStream<Uint8Array>,
    request: JsonRpcRequest,
    id: string,
    options: UpstreamCallOptions,
  ): Promise<JsonRpcResponse> {
    let final: JsonRpcResponse | undefined;
    let tooLarge = false;
    await readSse(body, {
      onEvent: (event: EventSourceMessage) => {
        if (final || event.data.length === 0) return;
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        const c = classify(data);
        if (!c.ok) return;
        if ((c.value.kind === 'result' || c.value.kind === 'error') && c.value.message.id === id)
          final = { ...c.value.message, id: request.id } as JsonRpcResponse;
        else if (c.value.kind === 'notification') options.onNotification?.(c.value.message as JsonRpcNotification);
      },
      done: () => final !== undefined,
      maxEventBytes: this.#max,
      onTooLarge: () => {
        tooLarge = true;
      },
    });
    if (final) return final;
    return errorResponse(
      request.id,
      internalError(tooLarge ? tooLargeDetail(this.#max) : 'the upstream ended the stream without a response'),
    );
  }

  legacyPipe(): Transport {
    const o = this.#options;
    return new LegacyHttpClientTransport({
      url: o.url,
      ...(o.headers ? { headers: o.headers } : {}),
      ...(o.fetch ? { fetch: o.fetch } : {}),
      ...(o.maxMessageBytes !== undefined ? { maxMessageBytes: o.maxMessageBytes } : {}),
    });
  }

  async close(): Promise<void> {}
}
