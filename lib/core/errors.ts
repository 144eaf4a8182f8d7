/**
 * The wire error codes of both eras, their constructors and HTTP statuses, and `AdapterError`
 * for local (non-wire) failures. One code table for the whole library; translators return these
 * as values, only edges turn them into responses.
 */
import { isRecord } from './primitives.ts';

/** The upstream's own account of a failure (every member optional, every one bounded). */
export interface UpstreamFailure {
  /** The HTTP status it answered with. */
  readonly httpStatus?: number;
  /** The start of the body it answered with, whitespace collapsed. */
  readonly body?: string;
  /** The `WWW-Authenticate` challenge of a 401 or 403 (what a client needs to sign in). */
  readonly challenge?: string;
  /** The process's exit code. */
  readonly exitCode?: number;
  /** The signal that ended the process. */
  readonly signal?: string;
  /** The last lines the process wrote to stderr, oldest first. */
  readonly stderr?: readonly string[];
  /** The connection's own error (`connect ECONNREFUSED 127.0.0.1:8080`, `spawn x ENOENT`). */
  readonly network?: string;
}

/** Every JSON-RPC error code the adapter reads or writes, by name. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Legacy (v1 SDK) generic server error, e.g. "Server not initialized" / "No valid session ID". */
  ConnectionClosed: -32000,
  /** Legacy Streamable HTTP: the `Mcp-Session-Id` names no session (any more). HTTP 404. */
  SessionNotFound: -32001,
  /** Legacy only (≤ 2025-11-25): resource not found. Modern uses -32602. */
  ResourceNotFound: -32002,
  /** Modern: a required header is missing, malformed, or differs from the body. HTTP 400. */
  HeaderMismatch: -32020,
  /** Modern: the request needs a client capability it did not declare. HTTP 400. */
  MissingRequiredClientCapability: -32021,
  /** Modern: the protocol version is unknown or unsupported. HTTP 400. */
  UnsupportedProtocolVersion: -32022,
  /** 2025-11-25 only: URL elicitation required before the request can be retried. */
  UrlElicitationRequired: -32042,
  /**
   * Ours, in the implementation-defined range (-32000 … -32019): a limit of this server was
   * reached (`data.limit` names it, `data.max` gives it, `data.retryAfterSeconds` says when to try
   * again). The number follows JSON-RPC's "limit exceeded" of EIP-1474. HTTP 429 or 503.
   */
  LimitExceeded: -32005,
} as const;

/** The name of a wire error code in {@link ErrorCode} (`ParseError`, `HeaderMismatch`, …). */
export type ErrorCodeName = keyof typeof ErrorCode;

/** A JSON-RPC error object as it travels on the wire. */
export interface WireError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

function wire(code: number, message: string, data?: unknown): WireError {
  return data === undefined ? { code, message } : { code, message, data };
}

/** `-32700`: the text is not JSON. */
export const parseError = (detail?: string): WireError => wire(ErrorCode.ParseError, detail ? `Parse error: ${detail}` : 'Parse error');
/** `-32600`: the JSON is not a valid JSON-RPC message. */
export const invalidRequest = (detail: string): WireError => wire(ErrorCode.InvalidRequest, `Invalid Request: ${detail}`);
/** `-32601`: the method is unknown (or removed in this era). */
export const methodNotFound = (method: string, detail?: string): WireError =>
  wire(ErrorCode.MethodNotFound, detail ? `Method not found: ${method} (${detail})` : `Method not found: ${method}`);
/** `-32602`: the params (or the modern `_meta` envelope) are invalid; `data` is passed through. */
export const invalidParams = (detail: string, data?: unknown): WireError =>
  wire(ErrorCode.InvalidParams, `Invalid params: ${detail}`, data);
/** `-32603`: the request could not be served. */
export const internalError = (detail: string): WireError => wire(ErrorCode.InternalError, `Internal error: ${detail}`);
/** `-32020`: an HTTP routing header is missing or disagrees with the body. */
export const headerMismatch = (detail: string): WireError => wire(ErrorCode.HeaderMismatch, `Header mismatch: ${detail}`);

/** `-32021` with the capabilities the request would have needed. */
export function missingCapability(requiredCapabilities: Record<string, unknown>, detail?: string): WireError {
  const names = Object.keys(requiredCapabilities).join(', ');
  return wire(ErrorCode.MissingRequiredClientCapability, detail ?? `Missing required client capability: ${names}`, {
    requiredCapabilities,
  });
}

/** `-32022` naming what was asked for and what is supported. */
export function unsupportedVersion(requested: string, supported: readonly string[]): WireError {
  return wire(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${requested}`, {
    supported: [...supported],
    requested,
  });
}

/**
 * Whether an error is one only a modern server gives with that meaning: `-32020`, `-32021` with
 * `data.requiredCapabilities`, `-32022` with `data.supported`, and on HTTP a `404` with `-32601`.
 * `-32601` and `-32602` otherwise come from both eras.
 */
export function isRecognisedModernError(error: Pick<WireError, 'code' | 'data'>, status?: number): boolean {
  switch (error.code) {
    case ErrorCode.HeaderMismatch:
      return true;
    case ErrorCode.MissingRequiredClientCapability:
      return isRecord(error.data) && isRecord(error.data['requiredCapabilities']);
    case ErrorCode.UnsupportedProtocolVersion:
      return isRecord(error.data) && Array.isArray(error.data['supported']);
    case ErrorCode.MethodNotFound:
      return status === 404;
    default:
      return false;
  }
}

/**
 * The HTTP status a modern Streamable HTTP server answers with for a JSON-RPC error
 * (2026-07-28 §5.7). `missingMeta` marks a -32602 caused by missing required `_meta` keys.
 */
export function httpStatusForError(error: Pick<WireError, 'code'>, options: { missingMeta?: boolean } = {}): number {
  switch (error.code) {
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
    case ErrorCode.ParseError:
    case ErrorCode.InvalidRequest:
      return 400;
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.InvalidParams:
      return options.missingMeta ? 400 : 200;
    default:
      return 200;
  }
}

/** Local failure codes of the adapter itself (never sent as JSON-RPC codes). */
export type AdapterErrorCode =
  | 'closed'
  | 'timeout'
  | 'cancelled'
  | 'upstream-exited'
  | 'upstream-error'
  | 'protocol'
  | 'config'
  | 'state'
  | 'limit';

/**
 * The one error class for local failures: a string `code`, a message, an optional `cause`, and
 * for a failure of the upstream, what the upstream itself said (`upstream`).
 */
export class AdapterError extends Error {
  readonly code: AdapterErrorCode;
  readonly upstream: UpstreamFailure | undefined;
  constructor(code: AdapterErrorCode, message: string, options: { cause?: unknown; upstream?: UpstreamFailure | undefined } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AdapterError';
    this.code = code;
    this.upstream = options.upstream;
  }
}
