/**
 * What is observed of one request served: its span (and the spans of its upstream calls) and, with
 * metrics on, its count and duration. A front's request gets one when an OpenTelemetry SDK is
 * registered or metrics are on (`observe()`); otherwise none, and nothing here runs.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { JsonRpcRequest, JsonRpcResponse } from '../core/jsonrpc.ts';
import { isRecord, type JsonObject } from '../core/primitives.ts';
import { MetaKey } from '../core/era.ts';
import { Attr } from './conventions.ts';
import { contextOf, otel, RequestSpan, tracingRegistered, type UpstreamSpan } from './requestSpan.ts';
import type { ServeMetrics } from './serveMetrics.ts';
import { traceCarrier, traceIdOf, type TraceCarrier } from './traceContext.ts';

/** One line of the access log: a request served, as an operator reads it. */
export interface AccessEntry {
  readonly method: string;
  /** The tool or prompt name, or the resource URI, when the request names one. */
  readonly name?: string;
  /** The era the client spoke. */
  readonly era: 'modern' | 'legacy';
  /** complete, input_required (an MRTR round), error, or none (a listen the client left). */
  readonly outcome: 'complete' | 'input_required' | 'error' | 'none';
  /** The JSON-RPC error code, for an error. */
  readonly code?: number;
  readonly durationMs: number;
  /** The W3C trace id the request carried (or was given), when it has one. */
  readonly traceId?: string;
  /** Who asked, as a short hash of the principal (never the credentials themselves). */
  readonly principal: string;
}

/** Where a request's access line goes, what it says before the answer, and the trace it carried. */
interface AccessSink {
  readonly write: (entry: AccessEntry) => void;
  readonly base: Omit<AccessEntry, 'outcome' | 'code' | 'durationMs' | 'traceId'>;
  readonly carried: string | undefined;
}

/** A principal as the access log names it: the first 12 hex digits of its SHA-256. */
export function principalHash(principal: string): string {
  return createHash('sha256').update(principal).digest('hex').slice(0, 12);
}

/** How a request got its upstream session. */
export type SessionUse = 'reused' | 'opened' | 'waited';

/** The telemetry of one request. */
export class RequestTelemetry {
  readonly span: RequestSpan;
  readonly #metrics: ServeMetrics | undefined;
  readonly #method: string;
  readonly #started = performance.now();
  readonly #access: AccessSink | undefined;

  constructor(span: RequestSpan, method: string, metrics: ServeMetrics | undefined, access?: AccessSink) {
    this.span = span;
    this.#method = method;
    this.#metrics = metrics;
    this.#access = access;
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

  /** Ends the request's span, counts it, and writes its access line. */
  end(message: JsonRpcResponse | undefined, failure?: unknown): void {
    const seconds = (performance.now() - this.#started) / 1000;
    const traceId = this.#access ? (traceIdOf(this.span.traceparent()) ?? traceIdOf(this.#access.carried)) : undefined;
    this.span.end(message, failure);
    this.#metrics?.served(this.#method, message, seconds);
    const access = this.#access;
    if (!access) return;
    const outcome = !message
      ? 'none'
      : 'error' in message
        ? 'error'
        : isRecord(message.result) && message.result['resultType'] === 'input_required'
          ? 'input_required'
          : 'complete';
    access.write({
      ...access.base,
      outcome,
      ...(message && 'error' in message ? { code: message.error.code } : {}),
      durationMs: Math.round(seconds * 10_000) / 10,
      ...(traceId ? { traceId } : {}),
    });
  }
}

/** Where a request was served and what is observed of it. */
export interface ObserveOptions {
  readonly metrics?: ServeMetrics | undefined;
  readonly transport: 'tcp' | 'pipe';
  readonly clientEra: 'modern' | 'legacy';
  /** The era of the server behind, when known. */
  readonly serverEra: 'modern' | 'legacy' | undefined;
  /**
   * The `traceparent` of the call a retry continues, asked only when the retry carries no trace
   * context of its own (`undefined` when the request is no retry, or its call was not traced).
   */
  readonly continued?: (() => string | undefined) | undefined;
  /** Where the access log's line for the request goes, when it is kept, and who asked (hashed there). */
  readonly access?: { readonly write: (entry: AccessEntry) => void; readonly principal: string } | undefined;
}

/**
 * The telemetry of `request`, or `undefined` when there is nothing to observe (no SDK registered,
 * metrics off). The caller's trace context is read from `_meta` (over HTTP, `withHeaderTrace` has
 * put the headers' there when `_meta` had none).
 */
export function observe(request: JsonRpcRequest, options: ObserveOptions): RequestTelemetry | undefined {
  const tracing = tracingRegistered();
  if (!tracing && !options.metrics && !options.access) return undefined;
  const params = request.params as JsonObject | undefined;
  const meta = params?.['_meta'];
  let carrier: TraceCarrier | undefined = tracing ? traceCarrier(meta) : undefined;
  if (tracing && !carrier && options.continued) {
    const traceparent = options.continued();
    if (traceparent !== undefined) carrier = { traceparent };
  }
  const version = isRecord(meta) ? meta[MetaKey.protocolVersion] : undefined;
  const span = tracing
    ? RequestSpan.start(
        {
          method: request.method,
          params,
          id: request.id,
          transport: options.transport,
          clientEra: options.clientEra,
          serverEra: options.serverEra,
          protocolVersion: typeof version === 'string' ? version : undefined,
        },
        carrier,
      )
    : RequestSpan.untraced();
  const access = options.access
    ? {
        write: options.access.write,
        base: accessBase(request, options.clientEra, options.access.principal),
        carried: isRecord(meta) && typeof meta['traceparent'] === 'string' ? meta['traceparent'] : carrier?.traceparent,
      }
    : undefined;
  return new RequestTelemetry(span, request.method, options.metrics, access);
}

/** What an access line says of `request` before it is answered. */
function accessBase(
  request: JsonRpcRequest,
  era: AccessEntry['era'],
  principal: string,
): Omit<AccessEntry, 'outcome' | 'code' | 'durationMs' | 'traceId'> {
  const params = request.params;
  const named = isRecord(params)
    ? typeof params['name'] === 'string'
      ? params['name']
      : typeof params['uri'] === 'string'
        ? params['uri']
        : undefined
    : undefined;
  return {
    method: request.method,
    ...(named !== undefined ? { name: named.slice(0, 256) } : {}),
    era,
    principal: principalHash(principal),
  };
}
