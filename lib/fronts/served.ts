/**
 * The seam between a wrap and the fronts that serve it: a modern request and its context in, one
 * answer out; a legacy session relayed to a pipe the wrap opens. A wrap hands itself to the HTTP
 * front or the stdio line server as a `Served`; the fronts know nothing else of it. Types and one
 * answer builder only: no I/O here.
 */
import { ErrorCode, httpStatusForError, type WireError } from '../core/errors.ts';
import type { UpstreamFailure } from '../util/upstreamFailure.ts';
import { errorResponse, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../core/jsonrpc.ts';
import type { Envelope } from '../core/translate/envelope.ts';
import type { HeaderLookup } from '../core/translate/headers.ts';
import type { Openings } from '../session/gate.ts';
import type { ConnectContext } from '../session/backend.ts';
import type { CancelSignal } from '../util/signals.ts';
import type { Transport } from '../transport/transport.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestTelemetry } from '../observe/requestTelemetry.ts';
import type { RelayTelemetry } from '../observe/relayTelemetry.ts';

/** Where a modern request came from and how to reach its stream. */
export interface ModernContext {
  /** Who is asking: sessions are never shared between principals. */
  readonly principal: string;
  /** Aborts when the client goes away (HTTP stream closed, stdio cancel) or the wrap shuts down. */
  readonly signal: CancelSignal;
  /** Sends a notification on this request's own stream (progress, logs, listen notifications). */
  readonly notify: (notification: JsonRpcNotification) => void;
  /** The request's envelope, when the front has already read and checked it (it is not read again). */
  readonly envelope?: Envelope | undefined;
  /** The HTTP request headers, when the request came over HTTP (`Mcp-Param-*` are checked against the tool). */
  readonly headers?: HeaderLookup | undefined;
  /**
   * In front of a protected upstream: the upstream's `WWW-Authenticate` challenge as this client
   * is shown it (its `resource_metadata` naming the front's metadata).
   */
  readonly challenge?: ((upstream: string) => string) | undefined;
  /** What is observed of this request (its span, its metrics), when anything is (see `observe`). */
  readonly telemetry?: RequestTelemetry | undefined;
}

/**
 * `ctx` with what is observed of its request: a new context of one fixed shape, every field
 * written out. A spread copy (`{ ...ctx, telemetry }`) was measured to make the reads of the
 * copy slow all along the request's path (the stdio front's CPU per call went from 11 to 20 µs).
 */
export function withTelemetry(ctx: ModernContext, telemetry: RequestTelemetry): ModernContext {
  // Every field, required: a field added to ModernContext must be added here too.
  const full: { readonly [K in keyof Required<ModernContext>]: ModernContext[K] } = {
    principal: ctx.principal,
    signal: ctx.signal,
    notify: ctx.notify,
    envelope: ctx.envelope,
    headers: ctx.headers,
    challenge: ctx.challenge,
    telemetry,
  };
  return full;
}

/** The one answer to a request, with the HTTP status (and headers) a Streamable HTTP front uses. */
export interface Answer {
  readonly message: JsonRpcResponse;
  readonly status: number;
  /** HTTP headers of the answer beyond its content type (`Retry-After` on a refusal). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An upstream's refusal of a caller's credentials: its status, challenge, and the error that says so. */
export interface AuthRefusal {
  readonly status: 401 | 403;
  /** The upstream's `WWW-Authenticate` challenge, as it gave it. */
  readonly challenge: string;
  readonly error: WireError;
}

/** The refusal `failure` holds, when the upstream refused the credentials (HTTP 401 or 403 with a challenge). */
export function authRefusalOf(failure: UpstreamFailure | undefined): AuthRefusal | undefined {
  if (!failure || (failure.httpStatus !== 401 && failure.httpStatus !== 403) || failure.challenge === undefined) return undefined;
  const status = failure.httpStatus;
  const said = failure.body ? `: ${failure.body}` : '';
  const message =
    status === 401
      ? `Unauthorized: the server refused the credentials (HTTP 401)${said}`
      : `Forbidden: the server refused the request for its credentials (HTTP 403)${said}`;
  return { status, challenge: failure.challenge, error: { code: ErrorCode.InvalidRequest, message, data: { httpStatus: status } } };
}

/**
 * The answer to a request the upstream refused for its credentials: the same status and
 * challenge (as `challenge` shows it to this client), so the client signs in (or refreshes its
 * token) as it would at the server itself. `undefined` for any other failure.
 */
export function authRefusalAnswer(
  id: JsonRpcRequest['id'] | null,
  failure: UpstreamFailure | undefined,
  challenge: ((upstream: string) => string) | undefined,
): Answer | undefined {
  const refusal = authRefusalOf(failure);
  if (!refusal) return undefined;
  return {
    message: errorResponse(id, refusal.error),
    status: refusal.status,
    headers: { 'www-authenticate': challenge ? challenge(refusal.challenge) : refusal.challenge },
  };
}

/** The error answer for a request, with its HTTP status. */
export function errorAnswer(id: JsonRpcRequest['id'] | null, error: WireError & { status?: number }): Answer {
  return { message: errorResponse(id, error), status: error.status ?? httpStatusForError(error) };
}

/** Where a legacy session (a client that sent `initialize`) is relayed to. */
export interface SessionSource {
  /**
   * Opens the pipe one legacy session is relayed to, message for message (not started yet); with
   * `passesAuthorization`, `context` gives the session client's current `Authorization`.
   */
  connect(context?: ConnectContext): Promise<Transport>;
  /** Each client's own `Authorization` goes upstream with what is relayed of its session. */
  readonly passesAuthorization?: boolean;
  /**
   * The turns in which pipes are opened, shared with the wrap's pool (opening one may boot a
   * server process); absent, a session opens at once.
   */
  readonly openings?: Openings;
  /** Told when a session's pipe could not be opened or closed before it said a word. */
  readonly failed?: (reason: string) => void;
  /**
   * What is observed of a session served over `transport` (spans and metrics of the requests it
   * carries), or `undefined` when nothing is; absent, nothing is.
   */
  readonly observe?: (transport: 'tcp' | 'pipe') => RelayTelemetry | undefined;
}

/** What a front serves: a wrap hands itself over as this. */
export interface Served {
  /**
   * Serves one modern request; `undefined` when the client left a listen. Absent, the wrap serves
   * legacy sessions only: a request outside a session is refused (HTTP) or opens the session (stdio).
   */
  readonly serveModern?: (request: JsonRpcRequest, ctx: ModernContext) => Promise<Answer | undefined>;
  /** Legacy sessions. */
  readonly legacy: SessionSource;
  /** Ends everything the wrap holds. Idempotent. */
  close(): Promise<void>;
}

/** The header a replica of a fleet signs a forwarded request with. */
export const HOP_HEADER = 'x-mcp-dual-era-hop';

/** A request forwarded to the replica that owns what it continues: a parked call's retry, or a request about a task (`task` its id). */
export interface ForwardedCall {
  readonly call: JsonRpcRequest['id'];
  readonly task?: string;
}

/**
 * Who a forwarded request is answered for when its owner is gone: a parked call's retry or a
 * task's request, a legacy session, or new work a draining replica handed to a ready one.
 */
export type ForwardedFor = ForwardedCall | { readonly session: string } | { readonly handedOver: JsonRpcRequest['id'] | null };

/**
 * Where a request that belongs to another replica of a fleet goes: the fleet hands this to the
 * HTTP front. A request forwarded by a replica of the fleet (it carries a valid `HOP_HEADER`) is
 * served here whatever its Host and Origin (the hop is between replicas) and never forwarded again.
 */
export interface Forwarding {
  /** The replica a retry's `requestState` names (its call is parked there), when that is not this one. */
  stateOwner(requestState: string): string | undefined;
  /** A new id naming this replica as its owner: a legacy session's, a task's. */
  ownedId(): string;
  /** The replica an id made by `ownedId` names (its legacy session, its task is there), when that is not this one. */
  idOwner(id: string): string | undefined;
  /** A replica other than this one that takes new work, if there is one (while this one drains). */
  readyPeer(): Promise<string | undefined>;
  /**
   * Sends `request` to the replica `owner` (`body` is the message as sent on; none for GET and
   * DELETE) and answers with what that replica answers, streamed as it comes; a defined error
   * for `what` when the owner is gone.
   */
  forward(owner: string, request: Request, body: string | undefined, what: ForwardedFor): Promise<Response>;
  /**
   * The same for a retry read on Node's own objects (the HTTP front's fast path): forwarded with
   * Node's HTTP client, the answer written on `res` as it comes. `body` is the message as sent on.
   */
  forwardCall(owner: string, req: IncomingMessage, res: ServerResponse, body: string, what: ForwardedCall): void;
  /**
   * Whether `hop` (the header's value) proves that a replica of this fleet sent `request` to this
   * one, as it arrived, and has not sent it before: the first arrival is served, a replay refused.
   */
  verifyHop(hop: string, request: HopRequest): Promise<boolean>;
}

/** A request as a hop's signature covers it. */
export interface HopRequest {
  readonly method: string;
  /** Its path and query (`/mcp?x=1`). */
  readonly path: string;
  readonly sessionId: string | null;
  /** The message it carries as the sending replica sent it on (empty for GET and DELETE). */
  readonly body: string;
  /** Its headers, by lower-case name. */
  readonly header: (name: string) => string | null;
}
