/**
 * The client side of a MODERN (2026-07-28) Streamable HTTP endpoint: every request is its own POST
 * with the routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` from the
 * tools the server listed), answered as JSON or as an SSE stream. Cancelling a request closes its
 * stream. It moves messages only; every request sent gets exactly one answer (-32603 for one past
 * `maxMessageBytes`, which is never read whole).
 */
import { mediaType, readSseMessages } from './sse.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, readBounded, tooLargeDetail } from './messageBound.ts';
import { AdapterError, internalError } from '../core/errors.ts';
import { classify, errorResponse, parseMessage, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import { computeHeaders } from '../core/translate/headers.ts';
import type { Transport } from './transport.ts';
import { KeyedTable } from '../util/idTable.ts';

/** Options of {@link ModernHttpClientTransport}. */
export interface ModernHttpClientOptions {
  /** The MCP endpoint. */
  readonly url: string | URL;
  /** Extra headers on every POST (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The fetch to use (default `globalThis.fetch`). */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * The largest JSON answer or SSE event read (default `DEFAULT_MAX_MESSAGE_BYTES`, 16 MiB): past
   * it, reading stops, the stream is closed and the request is answered with -32603.
   */
  readonly maxMessageBytes?: number;
}

/** A transport to a modern HTTP server: each message a POST with the routing headers, answered as JSON or SSE. */
export class ModernHttpClientTransport implements Transport {
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  readonly #url: URL;
  readonly #options: ModernHttpClientOptions;
  readonly #fetch: typeof globalThis.fetch;
  /** Not a `Map`: see `KeyedTable`. */
  readonly #pending = new KeyedTable<RequestId, AbortController>();
  /** Input schemas of the tools the server listed: where `Mcp-Param-*` headers come from. */
  readonly #tools = new Map<string, unknown>();
  #closed = false;

  constructor(options: ModernHttpClientOptions) {
    this.#options = options;
    this.#url = new URL(options.url);
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  async start(): Promise<void> {}

  async send(message: JsonRpcMessage): Promise<void> {
    if (this.#closed) throw new AdapterError('closed', 'the transport is closed');
    const c = classify(message);
    if (!c.ok) throw new AdapterError('protocol', `not a JSON-RPC message: ${c.error.message}`);
    const v = c.value;
    if (v.kind === 'notification') {
      // Over HTTP a request is cancelled by closing its stream; the core defines no other client notification.
      if (v.message.method === 'notifications/cancelled' && isRecord(v.message.params)) {
        const id = v.message.params['requestId'];
        if (typeof id === 'string' || typeof id === 'number') this.#pending.get(id)?.abort();
      }
      return;
    }
    if (v.kind !== 'request') return;
    void this.#request(v.message);
  }

  #deliver(message: JsonRpcMessage): void {
    if (this.#closed) return;
    this.onmessage?.(message);
  }

  #learn(request: JsonRpcRequest, message: unknown): void {
    if (request.method !== 'tools/list' || !isRecord(message) || !isRecord(message['result'])) return;
    const tools = message['result']['tools'];
    if (!Array.isArray(tools)) return;
    for (const tool of tools) if (isRecord(tool) && typeof tool['name'] === 'string') this.#tools.set(tool['name'], tool['inputSchema']);
  }

  async #request(request: JsonRpcRequest): Promise<void> {
    const id = request.id;
    const abort = new AbortController();
    this.#pending.set(id, abort);
    let answered = false;
    const answer = (message: unknown): void => {
      if (answered) return;
      this.#learn(request, message);
      answered = true;
      this.#deliver(message as JsonRpcMessage);
    };
    const fail = (detail: string): void => answer(errorResponse(id, internalError(detail)));
    try {
      const name = request.method === 'tools/call' && isRecord(request.params) ? request.params['name'] : undefined;
      const schema = typeof name === 'string' ? this.#tools.get(name) : undefined;
      const routing = computeHeaders(request, schema === undefined ? {} : { tool: { inputSchema: schema } });
      if (!routing.ok) return answer(errorResponse(id, routing.error));
      const headers = new Headers(this.#options.headers);
      for (const [k, val] of Object.entries(routing.value)) headers.set(k, val);
      headers.set('content-type', 'application/json');
      headers.set('accept', 'application/json, text/event-stream');
      let res: Response;
      try {
        res = await this.#fetch(this.#url, {
          method: 'POST',
          headers,
          body: JSON.stringify(request),
          signal: abort.signal,
          redirect: 'manual',
        });
      } catch (e) {
        if (abort.signal.aborted) return;
        return fail(`could not POST to ${this.#url.href}: ${e instanceof Error ? e.message : String(e)}`);
      }
      const onMessage = (raw: unknown): void => {
        const m = classify(raw);
        if (!m.ok) return;
        if ((m.value.kind === 'result' || m.value.kind === 'error') && m.value.message.id === id) answer(raw);
        else if (m.value.kind === 'notification') this.#deliver(m.value.message);
      };
      const max = this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
      try {
        if (mediaType(res) === 'text/event-stream' && res.body)
          await readSseMessages(res.body, onMessage, { maxEventBytes: max, onTooLarge: () => fail(tooLargeDetail(max)) });
        else {
          const read = await readBounded(res, max);
          if (!read.ok) return fail(tooLargeDetail(max));
          const text = read.value;
          const parsed = text.trim() === '' ? undefined : parseMessage(text);
          if (parsed?.ok && (parsed.value.kind === 'result' || parsed.value.kind === 'error')) {
            const m = parsed.value.message;
            // An HTTP error carries its JSON-RPC error with the request's id, or with none.
            if (m.id === id || m.id === null || m.id === undefined) answer(m.id === id ? m : { ...m, id });
          }
        }
      } catch (e) {
        if (abort.signal.aborted) return;
        return fail(`the server's answer broke off: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (!answered && !abort.signal.aborted) fail(`the server answered HTTP ${res.status} without a response to request ${String(id)}`);
    } finally {
      this.#pending.delete(id);
    }
  }

  /** Closes every open stream. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const abort of this.#pending.values()) abort.abort();
    this.#pending.clear();
    this.onclose?.();
  }
}
