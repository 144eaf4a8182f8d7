/**
 * JSON-RPC 2.0 envelopes shared by both eras: schemas, `classify()` for a decoded value, `parseMessage()`
 * for text (with a nesting bound), and response builders. It knows nothing of MCP methods.
 */
import * as v from 'valibot';
import { invalidRequest, parseError, type WireError } from './errors.ts';
import { fail, ok, type Outcome } from './outcome.ts';
import { isRecord } from './primitives.ts';

/** A request id: a string or an integer (JSON-RPC allows numbers; MCP forbids null). */
export const RequestIdSchema = v.union([v.string(), v.pipe(v.number(), v.integer())]);
/** A request id: a string or an integer. */
export type RequestId = v.InferOutput<typeof RequestIdSchema>;

const Params = v.optional(v.record(v.string(), v.unknown()));

/** Validates a JSON-RPC request (members beyond the envelope are kept). */
export const JsonRpcRequestSchema = v.looseObject({ jsonrpc: v.literal('2.0'), id: RequestIdSchema, method: v.string(), params: Params });
/** A JSON-RPC request: it has an `id` and expects one answer. */
export type JsonRpcRequest = { jsonrpc: '2.0'; id: RequestId; method: string; params?: Record<string, unknown> };

/** Validates a JSON-RPC notification. */
export const JsonRpcNotificationSchema = v.looseObject({ jsonrpc: v.literal('2.0'), method: v.string(), params: Params });
/** A JSON-RPC notification: no `id`, no answer. */
export type JsonRpcNotification = { jsonrpc: '2.0'; method: string; params?: Record<string, unknown> };

/** Validates a successful JSON-RPC response. */
export const JsonRpcResultSchema = v.looseObject({
  jsonrpc: v.literal('2.0'),
  id: RequestIdSchema,
  result: v.record(v.string(), v.unknown()),
});
/** A successful JSON-RPC response. */
export type JsonRpcResult = { jsonrpc: '2.0'; id: RequestId; result: Record<string, unknown> };

export const WireErrorSchema = v.looseObject({ code: v.pipe(v.number(), v.integer()), message: v.string(), data: v.optional(v.unknown()) });
/** Validates a JSON-RPC error response. */
export const JsonRpcErrorSchema = v.looseObject({
  jsonrpc: v.literal('2.0'),
  id: v.optional(v.nullable(RequestIdSchema)),
  error: WireErrorSchema,
});
/** A JSON-RPC error response (`id` null or absent when the request could not be read). */
export type JsonRpcError = { jsonrpc: '2.0'; id?: RequestId | null; error: WireError };

/** A JSON-RPC response: a result or an error. */
export type JsonRpcResponse = JsonRpcResult | JsonRpcError;
/** Any JSON-RPC message: request, notification or response. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** A decoded value sorted into what it is. Batches (2025-03-26) are kept whole. */
export type Classified =
  | { readonly kind: 'request'; readonly message: JsonRpcRequest }
  | { readonly kind: 'notification'; readonly message: JsonRpcNotification }
  | { readonly kind: 'result'; readonly message: JsonRpcResult }
  | { readonly kind: 'error'; readonly message: JsonRpcError }
  | { readonly kind: 'batch'; readonly items: readonly unknown[] };

/** A failure to classify, with the id to answer under when one could be read. */
export interface ClassifyFailure extends WireError {
  readonly id: RequestId | null;
}

function isId(id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}

function recoverId(value: Record<string, unknown>): RequestId | null {
  const id = value['id'];
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

function failure(value: Record<string, unknown> | undefined, detail: string): Outcome<never, ClassifyFailure> {
  const error = invalidRequest(detail);
  return fail({ ...error, id: value ? recoverId(value) : null });
}

/**
 * Sorts a decoded JSON value into request, notification, result, error or batch, checking the
 * envelope. A broken envelope yields `-32600` with the id, if one could be recovered.
 */
export function classify(value: unknown): Outcome<Classified, ClassifyFailure> {
  if (Array.isArray(value)) {
    if (value.length === 0) return failure(undefined, 'empty batch');
    return ok({ kind: 'batch', items: value });
  }
  if (!isRecord(value)) return failure(undefined, 'a JSON-RPC message must be an object');
  if (value['jsonrpc'] !== '2.0') return failure(value, 'jsonrpc must be "2.0"');
  const hasId = 'id' in value;
  if (typeof value['method'] === 'string') {
    if (value['params'] !== undefined && !isRecord(value['params'])) return failure(value, 'params must be an object');
    // The shapes the schemas accept are checked directly; the schema only words a failure.
    if (!hasId) return ok({ kind: 'notification', message: value as unknown as JsonRpcNotification });
    if (isId(value['id'])) return ok({ kind: 'request', message: value as unknown as JsonRpcRequest });
    const r = v.safeParse(JsonRpcRequestSchema, value);
    return failure(value, r.success ? 'invalid id' : describe(r.issues));
  }
  if ('method' in value) return failure(value, 'method must be a string');
  if ('result' in value && 'error' in value) return failure(value, 'a response has either result or error, not both');
  if ('result' in value) {
    if (!isRecord(value['result'])) return failure(value, 'result must be an object');
    if (isId(value['id'])) return ok({ kind: 'result', message: value as unknown as JsonRpcResult });
    const r = v.safeParse(JsonRpcResultSchema, value);
    return failure(value, r.success ? 'invalid id' : describe(r.issues));
  }
  if ('error' in value) {
    const r = v.safeParse(JsonRpcErrorSchema, value);
    if (!r.success) return failure(value, describe(r.issues));
    return ok({ kind: 'error', message: value as unknown as JsonRpcError });
  }
  return failure(value, 'neither a request, a notification nor a response');
}

/** A short, single-line account of the first schema issue, with its path. */
export function describe(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid';
  const path = issue.path?.map((p) => String(p.key)).join('.') ?? '';
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Default bound on JSON nesting depth for anything the adapter decodes. */
export const DEFAULT_MAX_DEPTH = 64;

/** Depth of nested arrays/objects in a decoded value (iterative: never overflows the stack). */
export function nestingDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) {
      max = depth;
      if (max > limit) return max;
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return max;
}

/** False when `text` has too few brackets to nest deeper than `maxDepth` (most messages). */
function mayNestBeyond(text: string, maxDepth: number): boolean {
  // Counted with indexOf (a native scan) rather than character by character: a message has far
  // fewer brackets than characters.
  let open = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++open > maxDepth) return true;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++open > maxDepth) return true;
  return false;
}

/** True when `value`, decoded from `text`, nests deeper than `maxDepth` (the text is looked at first: most messages need no walk). */
export function nestedBeyond(text: string, value: unknown, maxDepth = DEFAULT_MAX_DEPTH): boolean {
  return mayNestBeyond(text, maxDepth) && nestingDepth(value, maxDepth) > maxDepth;
}

/**
 * Decodes one JSON-RPC message from text: `-32700` for invalid JSON or nesting beyond `maxDepth`
 * (default 64), then `classify()`. `rewrite`, when given, rewrites the decoded value (given the
 * text it came from) before it is classified: the fronts that answer callers hold the ids a
 * JavaScript number would change this way.
 */
export function parseMessage(
  text: string,
  options: { maxDepth?: number; rewrite?: (value: unknown, text: string) => unknown } = {},
): Outcome<Classified, ClassifyFailure> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail({ ...parseError(e instanceof Error ? e.message : undefined), id: null });
  }
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (nestedBeyond(text, value, maxDepth)) return fail({ ...parseError(`nesting deeper than ${maxDepth}`), id: null });
  return classify(options.rewrite ? options.rewrite(value, text) : value);
}

/** Builds a result response. */
export function resultResponse(id: RequestId, result: Record<string, unknown>): JsonRpcResult {
  return { jsonrpc: '2.0', id, result };
}

/** Builds an error response; `id` is null only when the request's id could not be read. */
export function errorResponse(id: RequestId | null, error: WireError): JsonRpcError {
  const err: WireError =
    error.data === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, data: error.data };
  return id === null ? { jsonrpc: '2.0', error: err } : { jsonrpc: '2.0', id, error: err };
}

/** Builds a request. */
export function request(id: RequestId, method: string, params?: Record<string, unknown>): JsonRpcRequest {
  return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
}

/** Builds a notification. */
export function notification(method: string, params?: Record<string, unknown>): JsonRpcNotification {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

/** True for a value usable as a JSON-RPC request id. */
export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}
