/**
 * MRTR in replay mode (opt-in, per target or for all): nothing is parked; each retry re-runs the call
 * on any session (or replica holding the key) and answers its pushes in order, earlier ones from the
 * answers sealed in the single-use `requestState`, the newest from `inputResponses`. A push unlike the
 * recorded one ends the call; what the server does before its first push runs again every round.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import type { InputMethod } from '../../core/legacy/inputs.ts';
import {
  checkInputCapability,
  inputKeyOf,
  inputRequiredResult,
  inputResponseToResult,
  pushToInputRequest,
  type KeyedPush,
} from '../../core/translate/inputRequests.ts';
import type { RpcOutcome } from '../../session/callHooks.ts';
import type { Keyring } from '../../state/keyring.ts';
import { openState, paramsDigest, principalTag, pushDigest, sealState, type RecordedAnswer } from '../../state/requestState.ts';
import { InProcessUsedStates, type UsedStates } from '../../state/usedStates.ts';
import { streamHooks, type PushableCall } from './broker.ts';
import { errorAnswer, type Answer } from '../../fronts/served.ts';
import { missingCapabilityAnswer, missingCapabilityOutcome } from './missingCapabilityAnswer.ts';
import { scope } from '../../util/signals.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { RoundBound } from './gatherRound.ts';

export interface ReplayOptions {
  readonly keyring: Keyring;
  /** How long a round's state stays valid (default 10 minutes). */
  readonly stateTtlMs?: number;
  /** How long rounds wait for their barrier (default: `new RoundBound()`; see `MrtrOptions.collectMs`). */
  readonly bound?: RoundBound;
  readonly now?: () => number;
  /** Told how each call went: it pushed, or it finished without pushing. */
  readonly observed?: (target: string, pushed: boolean) => void;
  /** The states used already (default: this process's own): each is taken once. */
  readonly used?: UsedStates;
}

/** Runs pushable calls in replay mode. */
export class ReplayRunner {
  readonly #options: ReplayOptions;
  readonly #used: UsedStates;
  readonly #bound: RoundBound;

  constructor(options: ReplayOptions) {
    this.#options = options;
    this.#used = options.used ?? new InProcessUsedStates(options.now ? { now: options.now } : {});
    this.#bound = options.bound ?? new RoundBound();
  }

  async run(call: PushableCall): Promise<Answer> {
    const id = call.request.id;
    const now = (this.#options.now ?? Date.now)();
    let recorded: RecordedAnswer[] = [];
    let asked: Readonly<Record<string, string>> = {};
    let round = 1;
    let trace: string | undefined;
    const sealed = call.legacy.envelope.retry?.requestState;
    if (sealed !== undefined) {
      // Single use: of concurrent retries with one state, the first runs the call and the others are refused.
      const opened = await openState(this.#options.keyring, sealed, {
        kind: 'replay',
        principal: call.ctx.principal,
        method: call.request.method,
        params: call.request.params,
        now,
        used: this.#used,
      });
      if (!opened.ok) return errorAnswer(id, opened.error);
      recorded = [...opened.value.answers];
      asked = opened.value.asked;
      round = opened.value.round + 1;
      trace = opened.value.trace;
      call.ctx.telemetry?.continues(trace, round);
    }
    const responses = call.legacy.envelope.retry?.inputResponses ?? {};
    const run = scope([call.ctx.signal], call.timeoutMs);
    const controller = { abort: () => run.abort() };
    const signal = run.signal;
    const fresh: Array<{ key: string; push: JsonRpcRequest; digest: string; resolve: (o: RpcOutcome) => void }> = [];
    let failure: Answer | undefined;
    let ordinal = 0;
    /** Pushes made before the call was sent (its roots asked again on this run's session), numbered apart. */
    let beforeOrdinal = 0;
    let wake = () => {};
    const onPush = async (push: JsonRpcRequest, before = false): Promise<RpcOutcome> => {
      if (!before) this.#options.observed?.(call.target, true);
      const input = pushToInputRequest(push);
      if (!input.ok) return { error: input.error };
      // Whether a run is preceded by such pushes depends on the session it lands on: they are keyed
      // apart, so the call's own pushes keep their keys from run to run.
      const key = before ? `before-${inputKeyOf(push, ++beforeOrdinal)}` : inputKeyOf(push, ++ordinal);
      const digest = pushDigest(push);
      const earlier = recorded.find((r) => r.key === key);
      if (earlier) {
        if (earlier.pushDigest === digest) return { result: earlier.result };
        failure ??= errorAnswer(id, {
          code: ErrorCode.InternalError,
          message: `Internal error: on replay the server asked ${push.method} (${key}) where it had asked something else before; the call cannot be replayed`,
        });
        wake();
        return { error: { code: ErrorCode.InternalError, message: 'replay diverged' } };
      }
      const allowed = checkInputCapability(input.value, call.legacy.envelope.clientCapabilities);
      if (!allowed.ok) {
        failure ??= missingCapabilityAnswer(id, allowed.error);
        wake();
        return missingCapabilityOutcome(push.method);
      }
      if (asked[key] === digest && key in responses) {
        const result = inputResponseToResult(push.method as InputMethod, key, responses[key]);
        if (!result.ok) {
          failure ??= errorAnswer(id, result.error);
          wake();
          return { error: result.error };
        }
        recorded.push({ key, pushDigest: digest, result: result.value });
        return { result: result.value };
      }
      return new Promise<RpcOutcome>((resolve) => {
        fresh.push({ key, push, digest, resolve });
        wake();
      });
    };
    let outcome: RpcOutcome | undefined;
    const running = call.call({ signal, ...streamHooks({ envelope: call.legacy.envelope, notify: call.ctx.notify }), onPush }).then((o) => {
      outcome = o;
      wake();
    });
    for (;;) {
      if (failure) break;
      if (outcome) {
        run.dispose();
        if (ordinal === 0) this.#options.observed?.(call.target, false);
        return call.finish(outcome);
      }
      if (fresh.length > 0) {
        // Further pushes of the same round are gathered (up to a barrier, within the round bound).
        await this.#bound.gather(
          () => fresh.length,
          () => outcome !== undefined || failure !== undefined,
          (s) => call.session.barrier(s),
          (recheck) => (wake = recheck),
        );
        if (outcome || failure) continue;
        break;
      }
      if (signal.aborted) {
        controller.abort();
        return errorAnswer(id, {
          code: ErrorCode.InternalError,
          message: run.timedOut
            ? `Internal error: the upstream server did not answer ${call.request.method} within ${call.timeoutMs} ms`
            : 'Request cancelled',
        });
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    // Nothing is parked: the run is abandoned. The upstream call is cancelled first, then its pushes
    // get an error (not an answer the server would act on, which could make it push again).
    controller.abort();
    for (const f of fresh) f.resolve({ error: { code: ErrorCode.InternalError, message: 'The call was abandoned; it will be replayed' } });
    void running;
    if (failure) return failure;
    if (round === 1) call.ctx.telemetry?.round(1);
    const requestState = sealState(this.#options.keyring, {
      kind: 'replay',
      stateId: randomUUID(),
      principalTag: principalTag(call.ctx.principal),
      method: call.request.method,
      paramsDigest: paramsDigest(call.request.params),
      round,
      expiresAt: now + (this.#options.stateTtlMs ?? DEFAULTS.replayStateTtlMs),
      answers: recorded,
      asked: Object.fromEntries(fresh.map((f) => [f.key, f.digest])),
      // The trace of the call's first round, carried from round to round.
      ...((trace ??= call.ctx.telemetry?.span.traceparent()) !== undefined ? { trace } : {}),
    });
    const serverInfo = call.session.initializeResult?.serverInfo;
    const pushes: KeyedPush[] = fresh.map((f) => ({ key: f.key, request: f.push }));
    const result = inputRequiredResult(pushes, { requestState, ...(serverInfo ? { serverInfo } : {}) });
    if (!result.ok) return errorAnswer(id, result.error);
    return { message: { jsonrpc: '2.0', id, result: result.value }, status: 200 };
  }
}
