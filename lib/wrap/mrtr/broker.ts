/**
 * The seam MRTR lives behind: what a legacy server's push during a modern call becomes. The modern
 * dispatch hands a broker each call that may push (`PushableCall`) and asks it which targets push;
 * the broker (suspend mode, `suspend.ts`; replay mode, `replay.ts`) answers with the call's outcome
 * or an `input_required` round. A call's notifications reach the stream of the request being
 * served for it (`StreamTarget`), whichever round that is.
 */
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import { modernMethod } from '../../core/modern/methods.ts';
import type { JsonObject } from '../../core/primitives.ts';
import type { Envelope, LegacyRequest } from '../../core/translate/envelope.ts';
import { logToModern } from '../../core/translate/notifications.ts';
import type { Answer, ModernContext } from '../../fronts/served.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';

/** What a push made during a modern call becomes. MRTR lives behind this seam. */
export interface InputBroker {
  /**
   * Runs an upstream call whose server may push requests. Resolves with the final outcome, or with
   * an `input_required` answer when the call was parked.
   */
  run(call: PushableCall): Promise<Answer>;
  /**
   * Resumes the suspended call a retry continues, before any upstream session is taken for it (the
   * parked call holds its own, and a retry that answers its pushes sends nothing new upstream).
   * Undefined when the broker runs retries of `retry.target` as calls of their own (replay mode):
   * they then take a session and go through `run`.
   */
  resume?(retry: RetryCall): Promise<Answer> | undefined;
  /** True when calls to `target` (`tools/call:name`, `prompts/get:name`, `resources/read:uri`) have pushed before. */
  pushes?(target: string): boolean;
  /**
   * True when calls to `target` have finished without pushing and none has pushed since: they may
   * share an upstream session. Calls to other targets get a session of their own (a push names no
   * call on most transports, so two pushable calls must not share one).
   */
  quiet?(target: string): boolean;
  /** True when calls to `target` re-run from the start on every round (replay mode) instead of resuming a parked call. */
  replays?(target: string): boolean;
  /** The `traceparent` of the first round of the call a `requestState` continues, when it was traced. */
  traceOf?(requestState: string): string | undefined;
}

/** Everything the broker needs to run (or resume) one pushable call. */
export interface PushableCall {
  /** The modern request being served now (the first call or a retry). */
  readonly request: JsonRpcRequest;
  readonly legacy: LegacyRequest;
  readonly key: SessionKey;
  readonly session: UpstreamSession;
  readonly ctx: ModernContext;
  /** Sends the request upstream with the broker's hooks. */
  readonly call: (hooks: CallHooks) => Promise<RpcOutcome>;
  /** Turns an upstream outcome into the answer to `request`. */
  readonly finish: (outcome: RpcOutcome) => Answer;
  /** `method:name` of what is called (the tool, the prompt, the resource). */
  readonly target: string;
  /** How long the call may run upstream (time parked waiting for the retry does not count). */
  readonly timeoutMs: number;
}

/** A retry of a pushable call (it carries `requestState`), before it has an upstream session. */
export interface RetryCall {
  /** The retry being served. */
  readonly request: JsonRpcRequest;
  /** Its legacy form, with `retry` read off its envelope. */
  readonly legacy: LegacyRequest;
  readonly ctx: ModernContext;
  /** `method:name` of what is called. */
  readonly target: string;
  /** How long the call may run upstream from here. */
  readonly timeoutMs: number;
  /** Turns an outcome of the call on `session` (the one the parked call holds) into the answer to `request`. */
  readonly finishOn: (session: UpstreamSession) => (outcome: RpcOutcome) => Answer;
}

/** `method:name` for a pushable request: what `pushes()` is asked about. */
export function targetOf(method: string, params: JsonObject | undefined): string {
  const name = params?.[modernMethod(method)?.nameParam ?? 'name'];
  return `${method}:${typeof name === 'string' ? name : ''}`;
}

/** Where a call's notifications go: the stream of the request being served for it. */
export interface StreamTarget {
  readonly envelope: Envelope;
  readonly notify: ModernContext['notify'];
}

/** Delivers upstream progress on `to`'s stream, under that request's own token (none without one). */
export function deliverProgress(to: StreamTarget, params: JsonObject): void {
  if (to.envelope.progressToken !== undefined)
    to.notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...params, progressToken: to.envelope.progressToken } });
}

/** Delivers an upstream log on `to`'s stream, only at or above that request's level. */
export function deliverLog(to: StreamTarget, params: JsonObject): void {
  const allowed = logToModern({ jsonrpc: '2.0', method: 'notifications/message', params }, to.envelope.logLevel);
  if (allowed.ok && allowed.value) to.notify(allowed.value);
}

/** The progress and log hooks that deliver a call's notifications on the stream of `to`. */
export function streamHooks(to: StreamTarget): Pick<CallHooks, 'onProgress' | 'onLog'> {
  return { onProgress: (params) => deliverProgress(to, params), onLog: (params) => deliverLog(to, params) };
}
