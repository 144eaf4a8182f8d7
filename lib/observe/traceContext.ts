/**
 * W3C trace context on MCP requests: read from a request's `params._meta` (`traceparent`,
 * `tracestate`, `baggage`, as the 2026-07-28 revision and the OpenTelemetry MCP conventions carry
 * it), or from the HTTP headers of the same names when `_meta` has none; written back into the
 * `_meta` of the request sent on. Pure functions.
 */
import { TRACE_META_KEYS } from '../core/era.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import { isRecord, type JsonObject } from '../core/primitives.ts';

/** The trace context of a request: any of the W3C keys, as strings. */
export type TraceCarrier = { [K in (typeof TRACE_META_KEYS)[number]]?: string };

/** What a carrier is read from when `_meta` has none: a header by (lowercase) name. */
export type HeaderSource = (name: string) => string | null | undefined;

/** The `traceparent` format: version, trace id, parent id, flags. */
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/** The trace context in `meta`, or (when `meta` has no `traceparent`) in `headers`; `undefined` when neither has one. */
export function traceCarrier(meta: unknown, headers?: HeaderSource): TraceCarrier | undefined {
  if (isRecord(meta) && typeof meta['traceparent'] === 'string') return pickMeta(meta);
  if (!headers) return undefined;
  const parent = headers('traceparent');
  return typeof parent === 'string' && parent !== '' ? pick(headers) : undefined;
}

function pickMeta(meta: JsonObject): TraceCarrier {
  const carrier: TraceCarrier = {};
  for (const key of TRACE_META_KEYS) {
    const value = meta[key];
    if (typeof value === 'string' && value !== '') carrier[key] = value;
  }
  return carrier;
}

function pick(read: (key: string) => unknown): TraceCarrier {
  const carrier: TraceCarrier = {};
  for (const key of TRACE_META_KEYS) {
    const value = read(key);
    if (typeof value === 'string' && value !== '') carrier[key] = value;
  }
  return carrier;
}

/** The trace id (32 hex digits) of a `traceparent`, when it is well formed and not all zeros. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  const id = traceparent === undefined ? undefined : TRACEPARENT.exec(traceparent)?.[1];
  return id === undefined || /^0+$/.test(id) ? undefined : id;
}

/** `params` with `carrier`'s keys in its `_meta` (over any there); `params` itself when the carrier is empty. */
export function withTraceMeta(params: JsonObject | undefined, carrier: TraceCarrier): JsonObject | undefined {
  const { traceparent, tracestate, baggage } = carrier;
  if (traceparent === undefined && tracestate === undefined && baggage === undefined) return params;
  const meta: JsonObject = params && isRecord(params['_meta']) ? { ...params['_meta'] } : {};
  if (traceparent !== undefined) meta['traceparent'] = traceparent;
  if (tracestate !== undefined) meta['tracestate'] = tracestate;
  if (baggage !== undefined) meta['baggage'] = baggage;
  return { ...params, _meta: meta };
}

/**
 * `request` with the trace context of its HTTP headers in its `_meta` when `_meta` has none (the
 * request itself otherwise): what the caller's HTTP client propagated reaches the server behind.
 */
export function withHeaderTrace(request: JsonRpcRequest, headers: HeaderSource): JsonRpcRequest {
  if (!request.params) return request;
  const meta = request.params['_meta'];
  if (isRecord(meta) && typeof meta['traceparent'] === 'string') return request;
  const fromHeaders = traceCarrier(undefined, headers);
  return fromHeaders ? { ...request, params: withTraceMeta(request.params, fromHeaders)! } : request;
}
