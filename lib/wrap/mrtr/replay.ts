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
import type { InputResponses } from '../../core/modern/inputs.ts';
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
import { openReplay, paramsDigest, principalTag, pushDigest, sealReplay, type RecordedAnswer } from '../../state/requestState.ts';
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

/** A push of this run that no recorded or given answer covers: asked of the client in the next round. */
interface FreshPush {
  readonly key: string;
  readonly push: JsonRpcRequest;
  readonly digest: string;
  readonly resolve: (o: RpcOutcome) => void;
}

/**
 * One run of a call in replay mode: its pushes answered in order, earlier ones from the answers
 * recorded, the newest from the retry's `inputResponses`, until the call ends, a push diverges from
 * the recorded one (or asks what the client did not declare), or a round of new pushes is gathered.
 */
class ReplayPass {
  /** The pushes no answer covers: the next round's input requests. */
  readonly fresh: FreshPush[] = [];
  readonly #call: PushableCall;
  /** The answers recorded in earlier rounds; the responses this run uses are added. */
  readonly #recorded: RecordedAnswer[];
  /** What the previous round asked, by key: the digests of its pushes. */
  readonly #asked: Readonly<Record<string, string>>;
  readonly #responses: InputResponses;
  readonly #observed: ReplayOptions['observed'];
  #failure: Answer | undefined;
  #outcome: RpcOutcome | undefined;
  #ordinal = 0;
  /** Pushes made before the call was sent (its roots asked again on this run's session), numbered apart. */
  #beforeOrdinal = 0;
  #wake = () => {};

  constructor(
    call: PushableCall,
    recorded: RecordedAnswer[],
    asked: Readonly<Record<string, string>>,
    responses: InputResponses,
    observed: ReplayOptions['observed'],
  ) {
    this.#call = call;
    this.#recorded = recorded;
    this.#asked = asked;
    this.#responses = responses;
    this.#observed = observed;
  }

  /**
   * Runs the call: its answer once it ends, is cancelled or fails; `undefined` when it is abandoned
   * with a round of new pushes in `fresh`.
   */
  async run(bound: RoundBound): Promise<Answer | undefined> {
    const call = this.#call;
    const run = scope([call.ctx.signal], call.timeoutMs);
    const signal = run.signal;
    const onPush = (push: JsonRpcRequest, before?: boolean) => this.#onPush(push, before);
    const running = call.call({ signal, ...streamHooks({ envelope: call.legacy.envelope, notify: call.ctx.notify }), onPush }).then((o) => {
      this.#outcome = o;
      this.#wake();
    });
    for (;;) {
      if (this.#failure) break;
      if (this.#outcome) {
        run.dispose();
        if (this.#ordinal === 0) this.#observed?.(call.target, false);
        return call.finish(this.#outcome);
      }
      if (this.fresh.length > 0) {
        // Further pushes of the same round are gathered (up to a barrier, within the round bound).
        await bound.gather(
          () => this.fresh.length,
          () => this.#outcome !== undefined || this.#failure !== undefined,
          (s) => call.session.barrier(s),
          (recheck) => (this.#wake = recheck),
        );
        if (this.#outcome || this.#failure) continue;
        break;
      }
      if (signal.aborted) {
        run.abort();
        return errorAnswer(call.request.id, {
          code: ErrorCode.InternalError,
          message: run.timedOut
            ? `Internal error: the upstream server did not answer ${call.request.method} within ${call.timeoutMs} ms`
            : 'Request cancelled',
        });
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    // Nothing is parked: the run is abandoned. The upstream call is cancelled first, then its pushes
    // get an error (not an answer the server would act on, which could make it push again).
    run.abort();
    for (const f of this.fresh)
      f.resolve({ error: { code: ErrorCode.InternalError, message: 'The call was abandoned; it will be replayed' } });
    void running;
    return this.#failure;
  }

  async #onPush(push: JsonRpcRequest, before = false): Promise<RpcOutcome> {
    const call = this.#call;
    if (!before) this.#observed?.(call.target, true);
    const input = pushToInputRequest(push);
    if (!input.ok) return { error: input.error };
    // Whether a run is preceded by such pushes depends on the session it lands on: they are keyed
    // apart, so the call's own pushes keep their keys from run to run.
    const key = before ? `before-${inputKeyOf(push, ++this.#beforeOrdinal)}` : inputKeyOf(push, ++this.#ordinal);
    const digest = pushDigest(push);
    const earlier = this.#recorded.find((r) => r.key === key);
    if (earlier) {
      if (earlier.pushDigest === digest) return { result: earlier.result };
      this.#fail(
        errorAnswer(call.request.id, {
          code: ErrorCode.InternalError,
          message: `Internal error: on replay the server asked ${push.method} (${key}) where it had asked something else before; the call cannot be replayed`,
        }),
      );
      return { error: { code: ErrorCode.InternalError, message: 'replay diverged' } };
    }
    const allowed = checkInputCapability(input.value, call.legacy.envelope.clientCapabilities);
    if (!allowed.ok) {
      this.#fail(missingCapabilityAnswer(call.request.id, allowed.error));
      return missingCapabilityOutcome(push.method);
    }
    if (this.#asked[key] === digest && key in this.#responses) {
      const result = inputResponseToResult(push.method as InputMethod, key, this.#responses[key]);
      if (!result.ok) {
        this.#fail(errorAnswer(call.request.id, result.error));
        return { error: result.error };
      }
      this.#recorded.push({ key, pushDigest: digest, result: result.value });
      return { result: result.value };
    }
    return new Promise<RpcOutcome>((resolve) => {
      this.fresh.push({ key, push, digest, resolve });
      this.#wake();
    });
  }

  /** Ends the run with `answer` (the first failure is the one answered). */
  #fail(answer: Answer): void {
    this.#failure ??= answer;
    this.#wake();
  }
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
      const opened = await openReplay(this.#options.keyring, sealed, {
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
    const pass = new ReplayPass(call, recorded, asked, responses, this.#options.observed);
    const ended = await pass.run(this.#bound);
    if (ended) return ended;
    if (round === 1) call.ctx.telemetry?.round(1);
    const requestState = sealReplay(this.#options.keyring, {
      kind: 'replay',
      stateId: randomUUID(),
      principalTag: principalTag(call.ctx.principal),
      method: call.request.method,
      paramsDigest: paramsDigest(call.request.params),
      round,
      expiresAt: now + (this.#options.stateTtlMs ?? DEFAULTS.replayStateTtlMs),
      answers: recorded,
      asked: Object.fromEntries(pass.fresh.map((f) => [f.key, f.digest])),
      // The trace of the call's first round, carried from round to round.
      ...((trace ??= call.ctx.telemetry?.span.traceparent()) !== undefined ? { trace } : {}),
    });
    const serverInfo = call.session.initializeResult?.serverInfo;
    const pushes: KeyedPush[] = pass.fresh.map((f) => ({ key: f.key, request: f.push }));
    const result = inputRequiredResult(pushes, { requestState, ...(serverInfo ? { serverInfo } : {}) });
    if (!result.ok) return errorAnswer(id, result.error);
    return { message: { jsonrpc: '2.0', id, result: result.value }, status: 200 };
  }
}
