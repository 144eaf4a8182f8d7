/**
 * Decisions of an adapter that faces a legacy client and calls a modern server (direction A)
 * which are not a message translation of their own: the `initialize` error for an upstream that refuses us, which input requests the
 * legacy client cannot answer, and how a failed input round ends a call.
 */
import { ErrorCode, type WireError } from '../errors.ts';
import { isModernVersion, LEGACY_VERSIONS } from '../era.ts';
import type { LegacyClientCapabilities } from '../legacy/capabilities.ts';
import type { InputRequests } from '../modern/inputs.ts';
import { isRecord, type JsonObject } from '../primitives.ts';
import { errorToLegacy } from './errors.ts';
import { legacyClientAllows } from './inputRequests.ts';

/**
 * The error a legacy client gets for its `initialize` when a modern upstream refuses us: no shared
 * version (`-32022`, naming what the server supports), or an HTTP status such as 401/403.
 */
export function refusalToInitializeError(refusal: { error: WireError } | { status: number; detail?: string }): WireError {
  if ('status' in refusal) {
    const why = refusal.status === 401 ? 'requires authorization (HTTP 401)' : refusal.status === 403 ? 'refused access (HTTP 403)' : `answered HTTP ${refusal.status}`;
    return { code: ErrorCode.InternalError, message: `The upstream MCP server ${why}${refusal.detail ? `: ${refusal.detail}` : ''}`, data: { httpStatus: refusal.status } };
  }
  const error = refusal.error;
  if (error.code === ErrorCode.UnsupportedProtocolVersion) {
    const data = isRecord(error.data) ? error.data : {};
    const supported = Array.isArray(data['supported']) ? data['supported'].map(String) : [];
    const modern = supported.filter((s) => isModernVersion(s));
    return {
      code: ErrorCode.InvalidParams,
      message: `Unsupported protocol version: the upstream MCP server supports ${supported.length > 0 ? supported.join(', ') : 'no version we know'}, and shares no modern version with this adapter${modern.length === 0 && supported.some((s) => (LEGACY_VERSIONS as readonly string[]).includes(s)) ? ' (it offers only legacy versions)' : ''}`,
      data: { supported, requested: data['requested'] ?? null, upstreamCode: error.code },
    };
  }
  return { code: ErrorCode.InternalError, message: `The upstream MCP server refused the connection: ${error.message}`, data: { upstreamCode: error.code } };
}

/** The keys of input requests a legacy client did not declare the capability for. */
export function unanswerableInputs(inputRequests: InputRequests, capabilities: LegacyClientCapabilities | JsonObject): string[] {
  return Object.entries(inputRequests)
    .filter(([, input]) => !legacyClientAllows(input, capabilities))
    .map(([key]) => key);
}

/**
 * How a call ends when an input round cannot complete: `tools/call` gets an `isError` result a
 * model can read; other methods a JSON-RPC error.
 */
export function inputFailure(method: string, reason: string): { result: JsonObject } | { error: WireError } {
  if (method === 'tools/call') return { result: { content: [{ type: 'text', text: reason }], isError: true } };
  return { error: { code: ErrorCode.InternalError, message: reason } };
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
