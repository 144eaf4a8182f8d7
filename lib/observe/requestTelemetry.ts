/**
 * What is observed of one request served: its span (and the spans of its upstream calls) and, with
 * metrics on, its count and duration. A front's request gets one when an OpenTelemetry SDK is
 * registered or metrics are on (`observe()`); otherwise none, and nothing here runs.
 */
import { performance } from 'node:perf_hooks';
import type { JsonRpcRequest, JsonRpcResponse } from '../core/jsonrpc.ts';
import { isRecord, type JsonObject } from '../core/primitives.ts';
import { MetaKey } from '../core/era.ts';
import { Attr } from './conventions.ts';
import { contextOf, otel, RequestSpan, tracingRegistered, type UpstreamSpan } from './requestSpan.ts';
import type { ServeMetrics } from './serveMetrics.ts';
import { traceCarrier, type TraceCarrier } from './traceContext.ts';

/** How a request got its upstream session. */
export type SessionUse = 'reused' | 'opened' | 'waited';

/** The telemetry of one request. */
export class RequestTelemetry {
  readonly span: RequestSpan;
  readonly #metrics: ServeMetrics | undefined;
  readonly #method: string;
  readonly #started = performance.now();

  constructor(span: RequestSpan, method: string, metrics: ServeMetrics | undefined) {
    this.span = span;
    this.#method = method;
    this.#metrics = metrics;
  }

  /** How the request got its upstream session, and how long it waited for it (ms) when it was not free at once. */
  session(use: SessionUse, waitedMs = 0): void {
    this.span.set(Attr.upstreamSession, use);
    if (use !== 'reused') this.#metrics?.waited(waitedMs / 1000);
  }

  /** Which round of an MRTR call this request is (1: the first call). */
  round(round: number): void {
    this.span.set(Attr.round, round);
  }

  /** A retry that continues a call whose first round was traced as `firstRound` (its `traceparent`): linked to that round's span. */
  continues(firstRound: string | undefined, round: number): void {
    this.span.set(Attr.round, round);
    if (firstRound === undefined || !this.span.recording) return;
    this.span.link(otel().trace.getSpanContext(contextOf({ traceparent: firstRound })));
  }

  /** The span of an upstream call made for this request; its params carry the span's trace context. */
  upstream(method: string, params: JsonObject | undefined): UpstreamSpan {
    return this.span.upstream(method, params);
  }

  /** Ends the request's span and counts it. */
  end(message: JsonRpcResponse | undefined, failure?: unknown): void {
    this.span.end(message, failure);
    this.#metrics?.served(this.#method, message, (performance.now() - this.#started) / 1000);
  }
}

/** Where a request was served and what is observed of it. */
export interface ObserveOptions {
  readonly metrics?: ServeMetrics | undefined;
  readonly transport: 'tcp' | 'pipe';
  readonly clientEra: 'modern' | 'legacy';
  /** The era of the server behind, when known. */
  readonly serverEra: 'modern' | 'legacy' | undefined;
  /** The trace context of the call a retry continues, when the retry carries none of its own. */
  readonly continued?: (requestState: string) => string | undefined;
}

/**
 * The telemetry of `request`, or `undefined` when there is nothing to observe (no SDK registered,
 * metrics off). The caller's trace context is read from `_meta` (over HTTP, `withHeaderTrace` has
 * put the headers' there when `_meta` had none).
 */
export function observe(request: JsonRpcRequest, options: ObserveOptions): RequestTelemetry | undefined {
  const tracing = tracingRegistered();
  if (!tracing && !options.metrics) return undefined;
  const params = request.params as JsonObject | undefined;
  const meta = params?.['_meta'];
  let carrier: TraceCarrier | undefined = tracing ? traceCarrier(meta) : undefined;
  if (tracing && !carrier && typeof params?.['requestState'] === 'string' && options.continued) {
    const traceparent = options.continued(params['requestState']);
    if (traceparent !== undefined) carrier = { traceparent };
  }
  const version = isRecord(meta) ? meta[MetaKey.protocolVersion] : undefined;
  const span = RequestSpan.start(
    { method: request.method, params, id: request.id, transport: options.transport, clientEra: options.clientEra, serverEra: options.serverEra, protocolVersion: typeof version === 'string' ? version : undefined },
    carrier,
  );
  return new RequestTelemetry(span, request.method, options.metrics);
}
