/**
 * One pushable call in suspend mode, from its first request until it finishes or is released: the
 * hooks of its upstream call (pushes are collected for the next round, progress and logs go to the
 * request being served) and what it is between rounds (its round, its pending pushes, whether it
 * runs, why it was released). Not here: when a call parks or resumes, which the broker decides.
 */
import { ErrorCode, type WireError } from '../../core/errors.ts';
import type { JsonRpcRequest, RequestId } from '../../core/jsonrpc.ts';
import type { InputMethod } from '../../core/legacy/inputs.ts';
import type { JsonObject } from '../../core/primitives.ts';
import type { Envelope } from '../../core/translate/envelope.ts';
import { checkInputCapability, inputKeyOf, pushToInputRequest } from '../../core/translate/inputRequests.ts';
import type { Holding } from '../../session/shares.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import { deliverLog, deliverProgress, type PushableCall } from './broker.ts';
import type { ModernContext } from '../../fronts/served.ts';
import { missingCapabilityOutcome } from './missingCapabilityAnswer.ts';

/** A push waiting for the client's answer. */
export interface PendingPush {
  readonly push: JsonRpcRequest;
  readonly method: InputMethod;
  readonly resolve: (outcome: RpcOutcome) => void;
}

/** What a parked call tells, and asks, of the targets its broker remembers. */
export interface TargetMemory {
  /** True when calls to `target` have finished without pushing, and none has pushed since. */
  quiet(target: string): boolean;
  /** Records how a call to `target` went: it pushed, or it finished without pushing. */
  observed(target: string, pushed: boolean): void;
}

/** How long a released call whose pushes were answered may take to finish before it is cancelled. */
const RELEASE_GRACE_MS = 5_000;

/** What a push of a released call is answered with: elicitation `cancel`, an error otherwise. */
function releasedAnswer(method: InputMethod, reason: string): RpcOutcome {
  return method === 'elicitation/create'
    ? { result: { action: 'cancel' } }
    : { error: { code: ErrorCode.InternalError, message: `The client did not answer: ${reason}` } };
}

/**
 * One pushable call. It is also the hooks object of its upstream call (no closures per call: most
 * calls never push, and are never parked).
 */
export class ParkedCall implements CallHooks {
  /** Assigned when the call is first parked (most calls never are). */
  id = '';
  /** Cancels the upstream call (set once it is sent); `cancelled` if that was asked for before. */
  cancel: (() => void) | undefined;
  cancelled = false;
  /** Pushes waiting for the client's answers, by input key (created on the first push). */
  pending: Map<string, PendingPush> | undefined;
  round = 0;
  /** When the round it waits on stops (ms since the epoch), as its `requestState` says. */
  expiresAt = 0;
  ordinal = 0;
  /** Of its pushes, those made before the call was sent (see `CallHooks.onPush`). */
  before = 0;
  /** True while the call runs for a request being served; false while parked. */
  busy = true;
  outcome: RpcOutcome | undefined;
  capabilityError: WireError | undefined;
  /** URL elicitation required (-32042): the call is re-run from the start on the retry. */
  rerun: PushableCall['call'] | undefined;
  /** Releases the call when no retry comes in time. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Set once the call is released: why. Later pushes are answered at once. */
  released: string | undefined;
  /** After a release that answered pushes: cancels the call if it does not finish on its own. */
  grace: ReturnType<typeof setTimeout> | undefined;
  /** The request being served waits here for the call's next event. */
  waiter: (() => void) | undefined;
  /** Its share of the sessions held for parked calls, from its first round on. */
  holding: Holding | undefined;
  /** The deadline of the current run passed. */
  expired = false;
  /** False for a target known to finish without pushing (see `CallHooks.pushable`). */
  readonly pushable: boolean;
  /** Where progress and logs go: the request being served now. */
  envelope: Envelope;
  notify: ModernContext['notify'];
  readonly principal: string;
  readonly method: string;
  readonly params: JsonObject | undefined;
  /** The target called (`tools/call:name`, …). */
  readonly called: string;
  /**
   * The `traceparent` of the call's first request, when it was traced (set when first parked):
   * a retry without trace context of its own continues it, and every retry links to that span.
   */
  trace: string | undefined;
  readonly #targets: TargetMemory;
  /** The upstream session the call runs on, held from its first request until it ends. */
  readonly session: PushableCall['session'];
  /** Lets go of the upstream session the call holds. */
  readonly #releaseSession: () => void;

  constructor(targets: TargetMemory, call: PushableCall) {
    this.#targets = targets;
    this.principal = call.ctx.principal;
    this.method = call.request.method;
    this.params = call.request.params;
    this.session = call.session;
    this.#releaseSession = call.session.hold();
    this.envelope = call.legacy.envelope;
    this.notify = call.ctx.notify;
    this.called = call.target;
    this.pushable = !targets.quiet(call.target);
  }

  /** Wakes the request waiting for this call, if one is. */
  wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  readonly onWake = (): void => this.wake();

  onCancel(cancel: () => void): void {
    if (this.cancelled) cancel();
    else this.cancel = cancel;
  }

  onProgress(params: JsonObject): void {
    deliverProgress(this, params);
  }

  onLog(params: JsonObject): void {
    deliverLog(this, params);
  }

  /**
   * A push of the call: collected for the next round (or answered at once when it cannot be).
   * One made `before` the call was sent does not count as the target pushing.
   */
  onPush(push: JsonRpcRequest, before = false): Promise<RpcOutcome> {
    const input = pushToInputRequest(push);
    if (!input.ok) return Promise.resolve({ error: input.error });
    if (this.released !== undefined) return Promise.resolve(releasedAnswer(push.method as InputMethod, this.released));
    const allowed = checkInputCapability(input.value, this.envelope.clientCapabilities);
    if (!allowed.ok) {
      this.capabilityError ??= allowed.error;
      this.wake();
      return Promise.resolve(missingCapabilityOutcome(push.method));
    }
    if (before) this.before++;
    else this.#targets.observed(this.called, true);
    const key = inputKeyOf(push, ++this.ordinal);
    return new Promise<RpcOutcome>((resolve) => {
      (this.pending ??= new Map()).set(key, { push, method: push.method as InputMethod, resolve });
      this.wake();
    });
  }

  onPushCancelled(pushId: RequestId): void {
    if (!this.pending) return;
    for (const [key, pending] of this.pending) if (pending.push.id === pushId) this.pending.delete(key);
  }

  /** The deadline of the current run passed: the request being served is told. */
  expire(): void {
    this.expired = true;
    this.wake();
  }

  /**
   * Ends the call's life here: its pushes are answered (elicitation: cancel) and, when it was
   * released for a `reason`, the upstream call is cancelled; when pushes were answered, the server
   * first gets a grace period to act on the answers and finish (cancelling at once would overtake
   * the answers it is waiting for), unless its session is wanted `now`.
   */
  end(reason: string | undefined, now: boolean): void {
    this.released = reason ?? 'the call ended';
    const answered = this.pending !== undefined && this.pending.size > 0;
    if (this.pending) for (const pending of this.pending.values()) pending.resolve(releasedAnswer(pending.method, this.released));
    this.pending?.clear();
    if (reason !== undefined && !this.outcome) {
      if (!answered || now) this.#cancelUpstream();
      else {
        this.grace = setTimeout(() => this.#cancelUpstream(), RELEASE_GRACE_MS);
        this.grace.unref?.();
      }
    }
    this.#releaseSession();
  }

  #cancelUpstream(): void {
    this.cancelled = true;
    this.cancel?.();
  }
}
