/**
 * The pipe shape every connection of ours has: the SDK's `Transport` (`start`, `send`, `close`,
 * `onmessage`, `onerror`, `onclose`), so our transports plug straight into an SDK `Client` or
 * `Server`, v1 or v2. Not a transport itself.
 */
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';

/** What a transport knows about a received message beyond the message itself. */
export interface MessageExtra {
  /** The id of a request this side sent earlier, on whose behalf the peer sent this message. */
  readonly relatedRequestId?: RequestId;
}

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
}

/**
 * What `send` may return when the message left at once: a promise that is already fulfilled, and
 * that callers may recognise and skip handling (a `.catch` on every send costs a promise and a
 * closure per message).
 */
export const SENT: Promise<void> = Promise.resolve();
