/**
 * A modern (2026-07-28) server as seen from an adapter that calls it: one request in, its related
 * notifications out as they come, then exactly one response. Cancellation is an `AbortSignal`; the
 * transport maps it to the wire (the notification on a pipe, closing the stream over HTTP). This
 * file holds the shape and the pipe implementation (stdio child, in-memory pair); HTTP lives in
 * `modernHttpUpstream.ts`.
 */
import { ErrorCode, AdapterError, internalError } from '../core/errors.ts';
import { MetaKey } from '../core/era.ts';
import {
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../core/jsonrpc.ts';
import { extend, isRecord } from '../core/primitives.ts';
import type { MessageExtra, Transport } from './transport.ts';
import { KeyedTable } from '../util/idTable.ts';
import { closedReason, type UpstreamFailure } from '../util/upstreamFailure.ts';

/** Per-call options of a modern upstream request. */
export interface UpstreamCallOptions {
  /** Aborting cancels the call upstream; the returned promise then rejects with an `AdapterError('cancelled')`. */
  readonly signal?: AbortSignal;
  /** Notifications that belong to this call (progress, logs; for a listen, its stream). */
  readonly onNotification?: (notification: JsonRpcNotification) => void;
  /** The tool's input schema, for `Mcp-Param-*` headers on `tools/call` over HTTP. */
  readonly toolSchema?: unknown;
}

/** Raised for an HTTP answer that is not JSON-RPC: the status says why (401, 403, 5xx, …). */
export class UpstreamHttpError extends AdapterError {
  readonly status: number;
  constructor(status: number, statusText: string, detail?: string) {
    super('upstream-error', `the upstream answered HTTP ${status}${statusText ? ` ${statusText}` : ''}${detail ? `: ${detail}` : ''}`);
    this.status = status;
  }
}

/** A modern server reached over some wire. */
export interface ModernUpstream {
  readonly kind: 'pipe' | 'http';
  /** A human-readable account of the upstream. */
  readonly describe: string;
  start(): Promise<void>;
  /** Sends one request (its id is replaced by the upstream's own) and resolves with its response, id restored. */
  request(request: JsonRpcRequest, options?: UpstreamCallOptions): Promise<JsonRpcResponse>;
  /**
   * The upstream turned out to be legacy: a raw pipe to it, for relaying a legacy session unchanged
   * (a pipe hands over itself; HTTP opens a legacy Streamable HTTP client).
   */
  legacyPipe(): Transport;
  /**
   * Set once the upstream can no longer be reached (a pipe whose server exited), with what it said
   * (its exit code, its last words on stderr): an error answer then is ours, not the server's, and
   * says nothing of its era.
   */
  readonly gone?: { readonly failure: UpstreamFailure | undefined } | undefined;
  close(): Promise<void>;
}

interface PipeCall {
  readonly originalId: RequestId;
  readonly resolve: (response: JsonRpcResponse) => void;
  readonly onNotification: ((n: JsonRpcNotification) => void) | undefined;
  readonly token: unknown;
  readonly originalToken: unknown;
}

function progressTokenOf(request: JsonRpcRequest): unknown {
  const meta = isRecord(request.params) ? request.params['_meta'] : undefined;
  return isRecord(meta) ? meta['progressToken'] : undefined;
}

function withProgressToken(request: JsonRpcRequest, id: RequestId, token: unknown): JsonRpcRequest {
  const params = isRecord(request.params) ? request.params : {};
  const meta = isRecord(params['_meta']) ? params['_meta'] : {};
  const out: JsonRpcRequest = {
    jsonrpc: '2.0',
    id,
    method: request.method,
    params: token === undefined ? params : extend(params, { _meta: extend(meta, { progressToken: token }) }),
  };
  return out;
}

/**
 * A modern server over a pipe (a spawned stdio process, or an in-process server on a memory
 * pair), shared by any number of callers: ids and progress tokens are the upstream's own, so two
 * legacy sessions never collide; notifications are routed by progress token, subscription id, or
 * the request the transport says they relate to.
 */
export class ModernPipeUpstream implements ModernUpstream {
  readonly kind = 'pipe';
  readonly describe: string;
  readonly #transport: Transport;
  /** Not a `Map`: see `KeyedTable`. */
  readonly #calls = new KeyedTable<RequestId, PipeCall>();
  readonly #byToken = new Map<unknown, RequestId>();
  #next = 1;
  #started: Promise<void> | undefined;
  #gone: { readonly failure: UpstreamFailure | undefined } | undefined;
  #raw = false;

  constructor(transport: Transport, options: { describe?: string } = {}) {
    this.#transport = transport;
    this.describe = options.describe ?? 'a modern server over a pipe';
  }

  start(): Promise<void> {
    this.#started ??= (async () => {
      this.#transport.onmessage = (m, extra) => this.#receive(m, extra as MessageExtra | undefined);
      this.#transport.onclose = () => {
        // A process that exited says how (its code, its last words on stderr).
        const failure = (this.#transport as { failure?: UpstreamFailure }).failure;
        this.#fail(`the upstream server ${closedReason(failure)}`, failure);
      };
      await this.#transport.start();
    })();
    return this.#started;
  }

  /** Set once the pipe closed, with what its process said. */
  get gone(): { readonly failure: UpstreamFailure | undefined } | undefined {
    return this.#gone;
  }

  #fail(reason: string, failure?: UpstreamFailure): void {
    this.#gone ??= { failure };
    for (const call of [...this.#calls.values()]) call.resolve(errorResponse(call.originalId, internalError(reason)));
    this.#calls.clear();
    this.#byToken.clear();
  }

  #receive(message: JsonRpcMessage, extra: MessageExtra | undefined): void {
    if (this.#raw) return;
    if (!('method' in message)) {
      const id = message.id;
      if (id === undefined || id === null) return;
      const call = this.#calls.get(id);
      if (!call) return;
      this.#forget(id, call);
      call.resolve({ ...message, id: call.originalId } as JsonRpcResponse);
      return;
    }
    if ('id' in message) {
      // Modern servers send no requests; a stray one gets an error rather than silence.
      void this.#transport
        .send(errorResponse(message.id, { code: ErrorCode.MethodNotFound, message: 'Method not found: the client takes no requests' }))
        .catch(() => {});
      return;
    }
    const n = message as JsonRpcNotification;
    const params = isRecord(n.params) ? n.params : undefined;
    let target: RequestId | undefined;
    if (n.method === 'notifications/progress' && params) {
      target = this.#byToken.get(params['progressToken']);
      const call = target === undefined ? undefined : this.#calls.get(target);
      if (call) {
        call.onNotification?.({ jsonrpc: '2.0', method: n.method, params: extend(params, { progressToken: call.originalToken }) });
        return;
      }
    }
    const meta = params && isRecord(params['_meta']) ? params['_meta'] : undefined;
    if (meta && meta[MetaKey.subscriptionId] !== undefined) target = meta[MetaKey.subscriptionId] as RequestId;
    else if (extra?.relatedRequestId !== undefined) target = extra.relatedRequestId;
    else if (n.method === 'notifications/message') {
      // stdio says nothing about which call a log belongs to: only a lone call can own it.
      const calls = [...this.#calls.entries()].filter(([, c]) => c.token !== 'listen');
      if (calls.length === 1) target = calls[0]![0];
    }
    if (target !== undefined) this.#calls.get(target)?.onNotification?.(n);
  }

  #forget(id: RequestId, call: PipeCall): void {
    this.#calls.delete(id);
    if (call.token !== undefined && call.token !== 'listen') this.#byToken.delete(call.token);
  }

  async request(request: JsonRpcRequest, options: UpstreamCallOptions = {}): Promise<JsonRpcResponse> {
    await this.start();
    if (this.#gone) return errorResponse(request.id, internalError('the upstream server is not running'));
    const id = `u${this.#next++}`;
    const originalToken = progressTokenOf(request);
    const token = originalToken === undefined ? undefined : `p-${id}`;
    const signal = options.signal;
    if (signal?.aborted) throw new AdapterError('cancelled', 'cancelled before it was sent');
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      const call: PipeCall = {
        originalId: request.id,
        resolve,
        onNotification: options.onNotification,
        token: request.method === 'subscriptions/listen' ? 'listen' : token,
        originalToken,
      };
      this.#calls.set(id, call);
      if (token !== undefined) this.#byToken.set(token, id);
      const onAbort = () => {
        if (!this.#calls.has(id)) return;
        this.#forget(id, call);
        void this.#transport
          .send({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: id, reason: String(signal?.reason ?? 'cancelled') },
          })
          .catch(() => {});
        reject(new AdapterError('cancelled', 'the call was cancelled'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#transport.send(withProgressToken(request, id, token)).catch((e: unknown) => {
        this.#forget(id, call);
        resolve(
          errorResponse(request.id, internalError(`cannot reach the upstream server: ${e instanceof Error ? e.message : String(e)}`)),
        );
      });
    });
  }

  legacyPipe(): Transport {
    this.#raw = true;
    return this.#transport;
  }

  async close(): Promise<void> {
    if (!this.#raw) this.#fail('the upstream connection was closed');
    await this.#transport.close();
  }
}
