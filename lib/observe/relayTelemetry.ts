/**
 * What is observed of a relayed session: a client's messages passed on, message for message, to
 * what serves them (the HTTP front's and the stdio front's legacy sessions, relayed to the wrap's
 * upstream; the host of `connect`, relayed through a client wrap). Each request it carries gets
 * what a request a wrap serves gets: a span of kind server, a span of
 * kind client for the request sent on (whose trace context goes upstream in that request's
 * `_meta`, continuing the caller's, from `_meta` or else the HTTP headers), and with metrics on its
 * count and duration. Both end with the answer that has the request's id, when the client cancels
 * the request (no answer is due then), or when the session ends. A session observes at most
 * `MAX_OBSERVED` requests at once; one beyond that is relayed unobserved.
 */
import { ErrorCode } from '../core/errors.ts';
import { isRequestId, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import { tracingRegistered, type UpstreamSpan } from './requestSpan.ts';
import { observe, type RequestTelemetry } from './requestTelemetry.ts';
import type { ServeMetrics } from './serveMetrics.ts';
import { withHeaderTrace, type HeaderSource } from './traceContext.ts';
import { KeyedTable } from '../util/idTable.ts';

/** The most requests of one session observed at once. */
const MAX_OBSERVED = 1024;

/** Where a relayed session is served, and between which eras. */
export interface RelayObserveOptions {
  readonly metrics?: ServeMetrics | undefined;
  readonly transport: 'tcp' | 'pipe';
  /** The era of the client whose session it is. */
  readonly clientEra: 'modern' | 'legacy';
  /** The era of what the session is relayed to (a legacy server, or a modern one behind a bridge), when known. */
  readonly serverEra: 'modern' | 'legacy' | undefined;
}

interface Observed {
  readonly telemetry: RequestTelemetry;
  readonly upstream: UpstreamSpan;
}

/** The telemetry of one relayed session. */
export class RelayTelemetry {
  readonly #options: RelayObserveOptions;
  /** Not a `Map`: see `KeyedTable`. */
  readonly #open = new KeyedTable<RequestId, Observed>();

  private constructor(options: RelayObserveOptions) {
    this.#options = options;
  }

  /** The telemetry of a session about to be relayed, or `undefined` when nothing is observed (no SDK registered, metrics off). */
  static of(options: RelayObserveOptions): RelayTelemetry | undefined {
    return options.metrics || tracingRegistered() ? new RelayTelemetry(options) : undefined;
  }

  /**
   * A message of the client on its way upstream (a batch item by item): what to send instead. A
   * request starts being observed and, when its span is recorded, carries that span's context.
   */
  sent<M extends JsonRpcMessage | JsonRpcMessage[]>(message: M, headers?: HeaderSource): M {
    if (Array.isArray(message)) return message.map((m) => this.#sentOne(m, headers)) as M;
    return this.#sentOne(message as JsonRpcMessage, headers) as M;
  }

  #sentOne(message: JsonRpcMessage, headers: HeaderSource | undefined): JsonRpcMessage {
    if (!('method' in message)) return message;
    if (!('id' in message) || !isRequestId(message.id)) {
      // A request the client cancels gets no answer: its spans end here.
      if (message.method === 'notifications/cancelled' && isRecord(message.params)) this.#end(message.params['requestId'], undefined);
      return message;
    }
    if (this.#open.size >= MAX_OBSERVED || this.#open.has(message.id)) return message;
    const request: JsonRpcRequest = headers ? withHeaderTrace(message, headers) : message;
    const telemetry = observe(request, this.#options);
    if (!telemetry) return message;
    const upstream = telemetry.upstream(request.method, request.params);
    this.#open.set(message.id, { telemetry, upstream });
    return upstream.params === request.params ? request : { ...request, params: upstream.params! };
  }

  /** A message of the upstream on its way to the client (a batch item by item): an answer ends its request's spans. */
  answered(message: JsonRpcMessage | JsonRpcMessage[]): void {
    if (Array.isArray(message)) {
      for (const m of message) this.answered(m);
      return;
    }
    if ('method' in message || !isRequestId(message.id)) return;
    this.#end(message.id, message);
  }

  /** The session ended: what is still observed ends as failed, for `reason`. */
  closed(reason: string): void {
    const failure = new Error(reason);
    for (const { telemetry, upstream } of this.#open.values()) {
      upstream.end({ error: { code: ErrorCode.InternalError, message: reason } });
      telemetry.end(undefined, failure);
    }
    this.#open.clear();
  }

  /** Ends a request's spans with its answer (`undefined`: cancelled by the client). */
  #end(id: unknown, answer: JsonRpcResponse | undefined): void {
    if (!isRequestId(id)) return;
    const observed = this.#open.get(id);
    if (!observed) return;
    this.#open.delete(id);
    observed.upstream.end(answer);
    observed.telemetry.end(answer);
  }
}
