/**
 * Error remaps both ways (translation table row 23 and the 2026-07-28 code policy): `-32002`
 * resource-not-found ⇄ `-32602` with `data.uri`, and legacy codes in the range the modern spec
 * reserves (−32020…−32099) that would be misread by a modern client.
 */
import { ErrorCode, type WireError } from '../errors.ts';
import { isRecord, type JsonObject } from '../primitives.ts';
import { inputFailure } from './inputRequests.ts';

function uriOf(error: WireError, params: JsonObject | undefined): string | undefined {
  if (isRecord(error.data) && typeof error.data['uri'] === 'string') return error.data['uri'];
  return typeof params?.['uri'] === 'string' ? params['uri'] : undefined;
}

/**
 * A legacy error → modern. `-32002` becomes `-32602` (with `data.uri`); codes in −32020…−32099 that a
 * legacy peer sent carry no modern meaning and become `-32603` with the original under `data`.
 * (`-32042` is not an error for modern clients: see `urlElicitationToInputRequired`.)
 */
export function errorToModern(error: WireError, context: { method?: string; params?: JsonObject } = {}): WireError {
  if (error.code === ErrorCode.ResourceNotFound) {
    const uri = uriOf(error, context.params);
    const data = { ...(isRecord(error.data) ? error.data : {}), ...(uri === undefined ? {} : { uri }) };
    return { code: ErrorCode.InvalidParams, message: error.message, data };
  }
  if (error.code <= -32020 && error.code >= -32099) {
    return {
      code: ErrorCode.InternalError,
      message: error.message,
      data: { upstreamCode: error.code, ...(error.data === undefined ? {} : { upstreamData: error.data }) },
    };
  }
  return error;
}

/**
 * A modern error → legacy. On `resources/read`, `-32602` naming a `data.uri` becomes the legacy
 * resource-not-found `-32002`. Other codes pass unchanged.
 */
export function errorToLegacy(error: WireError, context: { method?: string } = {}): WireError {
  if (
    context.method === 'resources/read' &&
    error.code === ErrorCode.InvalidParams &&
    isRecord(error.data) &&
    typeof error.data['uri'] === 'string'
  ) {
    return { code: ErrorCode.ResourceNotFound, message: error.message, data: error.data };
  }
  if (error.code === ErrorCode.InternalError && isRecord(error.data) && typeof error.data['upstreamCode'] === 'number') {
    const { upstreamCode, upstreamData } = error.data as { upstreamCode: number; upstreamData?: unknown };
    return upstreamData === undefined
      ? { code: upstreamCode, message: error.message }
      : { code: upstreamCode, message: error.message, data: upstreamData };
  }
  return error;
}

/**
 * An upstream error → what a legacy client gets. `-32021` (the call needs a client capability the
 * legacy client did not declare) has no legacy code: a `tools/call` ends with an `isError` result
 * naming the capability, other methods keep the error. The rest goes through `errorToLegacy`
 * (`-32602` naming a URI on `resources/read` → `-32002`).
 */
export function upstreamErrorToLegacy(method: string, error: WireError): { result: JsonObject } | { error: WireError } {
  if (error.code === ErrorCode.MissingRequiredClientCapability) {
    const data = isRecord(error.data) ? error.data['requiredCapabilities'] : undefined;
    const reason = `${error.message}${data === undefined ? '' : ` (required: ${JSON.stringify(data)})`}`;
    return method === 'tools/call' ? inputFailure(method, reason) : { error };
  }
  return { error: errorToLegacy(error, { method }) };
}
