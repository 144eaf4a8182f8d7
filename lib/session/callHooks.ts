/**
 * What a caller of an upstream session gives and gets: a call's outcome, the hooks through which it
 * hears of its progress, logs and pushes, and the session's options. Types only; the session that
 * honours them is `upstreamSession.ts` (and its reading of the server's pushes, `upstreamPushes.ts`).
 */
import type { WireError } from '../core/errors.ts';
import type { JsonRpcRequest, RequestId } from '../core/jsonrpc.ts';
import type { Implementation, JsonObject } from '../core/primitives.ts';
import type { CancelSignal } from '../util/signals.ts';
import type { PushCopies } from './pushCopies.ts';

/** What a call, or a push, ends with. */
export type RpcOutcome = { readonly result: JsonObject } | { readonly error: WireError };

/** How a call hears about what happens while it runs. */
export interface CallHooks {
  readonly signal?: CancelSignal;
  /**
   * Whether the call may push requests (default: by method, `tools/call`, `prompts/get`,
   * `resources/read`). A call known not to push is no candidate for a push that names no call,
   * and does not keep its session from taking a pushable call.
   */
  readonly pushable?: boolean;
  /** Receives the call's cancel function (an alternative to `signal` that costs no AbortSignal). */
  readonly onCancel?: (cancel: () => void) => void;
  /** Progress for this call, with the caller's own token restored. */
  readonly onProgress?: (params: JsonObject) => void;
  /** A log message the server sent for this call. */
  readonly onLog?: (params: JsonObject) => void;
  /**
   * A request the server pushed while handling this call; the answer goes back upstream. `before`:
   * the server pushed it before the call was sent, in answer to a notification sent for the call
   * (see `UpstreamSession.announce`): it is the call's, but says nothing of what the call does.
   */
  readonly onPush?: (push: JsonRpcRequest, before?: boolean) => Promise<RpcOutcome>;
  /** The server cancelled one of its own pushes. */
  readonly onPushCancelled?: (pushId: RequestId) => void;
}

/** How an upstream session is opened and whom it tells what. */
export interface UpstreamSessionOptions {
  readonly clientInfo: Implementation;
  readonly capabilities: JsonObject;
  readonly protocolVersion: string;
  /** Answers pushes that belong to no call (e.g. `roots/list` right after `initialized`). */
  readonly onUnrelatedPush?: (push: JsonRpcRequest) => Promise<RpcOutcome>;
  /**
   * A push that names no call and comes while no call that may push is in flight waits for the
   * next one (up to `ambiguityTimeoutMs`, then it is unrelated) when this says so: what only the
   * session's client can answer (its roots, asked right after `initialized` by a server that asks
   * once) is then asked of it in that call's round.
   */
  readonly awaitsCall?: (push: JsonRpcRequest) => boolean;
  /** Notifications that belong to no call (list changes, resource updates, stray logs). */
  readonly onNotification?: (method: string, params: JsonObject | undefined) => void;
  /** Called once when the pipe closes or the process exits. */
  readonly onClose?: (reason: string) => void;
  /** Called when a pushable call ends (its session may now take another alone). */
  readonly onPushableEnd?: () => void;
  /** Called when the session has nothing left to do: no call in flight and no hold. */
  readonly onIdle?: () => void;
  /** How long `initialize` may take. */
  readonly initializeTimeoutMs?: number;
  /**
   * Shared by the sessions of one HTTP upstream: copies of a push that names no request, which a
   * server may send to every session, are settled together (see `PushCopies`).
   */
  readonly copies?: PushCopies;
  /**
   * A push that names no request while several pushable calls are in flight is held until
   * the others finish and one candidate is left; after this long it is answered as unrelated.
   */
  readonly ambiguityTimeoutMs?: number;
}
