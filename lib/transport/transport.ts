/**
 * The pipe shape every connection of ours has: the SDK's `Transport` (`start`, `send`, `close`,
 * `onmessage`, `onerror`, `onclose`), so our transports plug straight into an SDK `Client` or
 * `Server`, v1 or v2. Not a transport itself.
 */
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import type { UpstreamFailure } from '../util/upstreamFailure.ts';

/** What a transport knows about a received message beyond the message itself. */
export interface MessageExtra {
  /** The id of a request this side sent earlier, on whose behalf the peer sent this message. */
  readonly relatedRequestId?: RequestId | undefined;
}

/**
 * A JSON-RPC message as the SDKs (v1 and v2) type one: the shapes of `JsonRpcMessage`, with their
 * optional members spelled `?: … | undefined`, as the SDKs' inferred types have them. JSON has no
 * `undefined`, so on the wire it is the same message; the type only lets an SDK's message in.
 */
export type TransportMessage =
  | { jsonrpc: '2.0'; id: RequestId; method: string; params?: Record<string, unknown> | undefined }
  | { jsonrpc: '2.0'; method: string; params?: Record<string, unknown> | undefined }
  | { jsonrpc: '2.0'; id: RequestId; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id?: RequestId | null | undefined; error: { code: number; message: string; data?: unknown } };

/** What a sender of ours may tell a transport of ours about one message (an SDK's own options pass through unread). */
export interface SendOptions {
  /**
   * Nothing else is due on this transport in this turn of the event loop (the sender's one
   * exchange in flight): one that batches the writes of a turn may write this one at once.
   */
  readonly lone?: boolean;
}

/** `SendOptions` for a lone message, shared. */
export const LONE: SendOptions = Object.freeze({ lone: true });

/** A bidirectional JSON-RPC message pipe with the SDK's `Transport` shape. */
export interface Transport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: unknown): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
  /**
   * Ours only: what the other end itself said when it failed (a process's exit code and last
   * stderr lines, an HTTP status and body), once the pipe has closed or a send was refused.
   */
  readonly failure?: UpstreamFailure | undefined;
  /**
   * Ours only: true when everything the other end sends comes in the order it was sent, on one
   * stream (a pipe, an in-memory pair); a round's barrier then needs no turn of the loop after it.
   */
  readonly ordered?: boolean;
}

/**
 * A transport of ours as an SDK `Client` or `Server` (v1 or v2) holds it: what it is sent and what
 * it hands to `onmessage` are typed as the SDKs type messages, so it is given to `connect()`
 * with no cast, with or without `exactOptionalPropertyTypes`. The messages themselves are ours.
 */
export interface SdkTransport extends Transport {
  send(message: TransportMessage, options?: unknown): Promise<void>;
  onmessage?: ((message: TransportMessage, extra?: unknown) => void) | undefined;
}

/**
 * What `send` may return when the message left at once: a promise that is already fulfilled, and
 * that callers may recognise and skip handling (a `.catch` on every send costs a promise and a
 * closure per message).
 */
export const SENT: Promise<void> = Promise.resolve();
