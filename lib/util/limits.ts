/**
 * The limits that share one server among its callers, and the refusal a caller gets when one is
 * reached: a `-32005` error that names the limit in its message and in `data`, the HTTP status
 * (429 for what one caller may hold, 503 for what the whole server has) and how long to wait
 * before trying again (`Retry-After`). Pure: the limits themselves are counted where they live.
 */
import { AdapterError, ErrorCode, type WireError } from '../core/errors.ts';
import { errorResponse, type JsonRpcResponse, type RequestId } from '../core/jsonrpc.ts';

/** The limits a request can be refused by. */
export type LimitName =
  /** Upstream sessions in all (with the reserve kept for callers that hold none). */
  | 'sessions'
  /** Upstream sessions one caller may have open. */
  | 'sessions-per-caller'
  /** Upstream sessions one caller may have for one capability set (pushable calls each need one). */
  | 'sessions-per-capabilities'
  /** Upstream connections being opened at once (each boots a server): the others wait their turn. */
  | 'sessions-opening'
  /** Calls parked waiting for their MRTR retry, in all. */
  | 'parked'
  /** Tasks one caller may have running at once. */
  | 'tasks-per-caller'
  /** Tasks kept in all (running, or finished and not expired). */
  | 'tasks'
  /** `subscriptions/listen` streams one caller may have open. */
  | 'listens-per-caller'
  /** Legacy sessions (clients that sent `initialize`) in all. */
  | 'legacy-sessions'
  /** Legacy sessions one caller may have open. */
  | 'legacy-sessions-per-caller'
  /** Connections open at once on the HTTP listener. */
  | 'connections';

/** A refusal, as a value: which limit, its size, whose it is, and when to try again. */
export interface LimitRefusal {
  readonly limit: LimitName;
  readonly max: number;
  /** `caller`: what one caller may hold (HTTP 429); `server`: what the server has in all (HTTP 503). */
  readonly scope: 'caller' | 'server';
  /** Whole seconds to wait before trying again. */
  readonly retryAfterSeconds: number;
  /** What was refused and why, in words (the message's tail). */
  readonly detail: string;
}

/** What a refusal carries in `data`. */
export interface LimitData {
  readonly limit: LimitName;
  readonly max: number;
  readonly retryAfterSeconds: number;
}

/** A refusal of `limit`. */
export function limitRefusal(
  limit: LimitName,
  max: number,
  detail: string,
  options: { scope?: LimitRefusal['scope']; retryAfterSeconds?: number } = {},
): LimitRefusal {
  const scope = options.scope ?? (limit.endsWith('-per-caller') || limit === 'sessions-per-capabilities' ? 'caller' : 'server');
  return {
    limit,
    max,
    scope,
    retryAfterSeconds: Math.max(1, Math.ceil(options.retryAfterSeconds ?? (scope === 'caller' ? 5 : 1))),
    detail,
  };
}

/** The `-32005` error of a refusal: `Limit exceeded: <limit> (<max>): <detail>`, with `data`. */
export function limitExceeded(refusal: LimitRefusal): WireError {
  const data: LimitData = { limit: refusal.limit, max: refusal.max, retryAfterSeconds: refusal.retryAfterSeconds };
  return { code: ErrorCode.LimitExceeded, message: `Limit exceeded: ${refusal.limit} (${refusal.max}): ${refusal.detail}`, data };
}

/** The HTTP status of a refusal: 429 for a caller's own limit, 503 for the server's. */
export function limitStatus(refusal: Pick<LimitRefusal, 'scope'>): number {
  return refusal.scope === 'caller' ? 429 : 503;
}

/** The HTTP headers of a refusal (`Retry-After`). */
export function limitHeaders(refusal: Pick<LimitRefusal, 'retryAfterSeconds'>): Record<string, string> {
  return { 'retry-after': String(refusal.retryAfterSeconds) };
}

/**
 * The whole answer of a refusal: its message (with `id`, or none for a request that had none
 * to read), HTTP status and headers.
 */
export function limitAnswer(
  refusal: LimitRefusal,
  id?: RequestId | null,
): { message: JsonRpcResponse; status: number; headers: Record<string, string> } {
  const error = limitExceeded(refusal);
  const message = id === undefined ? ({ jsonrpc: '2.0', error } as unknown as JsonRpcResponse) : errorResponse(id, error);
  return { message, status: limitStatus(refusal), headers: limitHeaders(refusal) };
}

/** A refusal as a local error (`AdapterError` code `limit`, the refusal as its `cause`), for code that throws. */
export function limitError(refusal: LimitRefusal): AdapterError {
  return new AdapterError('limit', limitExceeded(refusal).message, { cause: refusal });
}

/** The refusal a `limit` error carries, if `e` is one. */
export function refusalOf(e: unknown): LimitRefusal | undefined {
  return e instanceof AdapterError && e.code === 'limit' ? (e.cause as LimitRefusal) : undefined;
}
