/**
 * The MRTR broker (suspend mode): a legacy server's own `elicitation/create`, `sampling/createMessage`
 * and `roots/list` during a modern call become one `input_required` round, the call is parked, and a
 * signed `requestState` naming it lets the retry answer them and resume it; calls never resumed are released.
 * Not here: the parked call (`parkedCall.ts`), the state and its checks (`state/requestState.ts`).
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, invalidParams, type WireError } from '../../core/errors.ts';
import { isRecord, type JsonObject } from '../../core/primitives.ts';
import {
  inputRequiredResult,
  inputResponseToResult,
  urlElicitationToInputRequired,
  type KeyedPush,
} from '../../core/translate/inputRequests.ts';
import { limitAnswer, limitRefusal } from '../../util/limits.ts';
import { Shares } from '../../session/shares.ts';
import { Keyring } from '../../state/keyring.ts';
import { InProcessParkedCalls, type ParkedCallStore } from '../../state/parkedCalls.ts';
import { openSuspend, replayTrace, stateRefusal, suspendRefusal, suspendState } from '../../state/requestState.ts';
import { DeadlineList } from '../../util/signals.ts';
import { ReplayRunner } from './replay.ts';
import { ParkedCall, type PendingPush, type TargetMemory } from './parkedCall.ts';
import { missingCapabilityAnswer } from './missingCapabilityAnswer.ts';
import type { InputBroker, PushableCall, RetryCall } from './broker.ts';
import { errorAnswer, type Answer } from '../../fronts/served.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { RoundBound } from './gatherRound.ts';
import type { MrtrOptions } from './mrtrOptions.ts';
import { RememberedTargets } from './rememberedTargets.ts';

/** What serving one request of a call needs: the request, its context, the call's session and how its outcome is answered. */
type Serving = Pick<PushableCall, 'request' | 'ctx' | 'session' | 'finish' | 'timeoutMs'>;

/** `#next`: gather the round's pushes for a moment, then park. */
const COLLECT = Symbol('collect');
/** `#next`: nothing to answer yet. */
const WAIT_FOR_EVENT = Symbol('wait');

/** The MRTR broker: suspend mode, with replay mode for the targets configured for it. */
export class MrtrBroker implements InputBroker, TargetMemory {
  readonly keyring: Keyring;
  readonly #parked: ParkedCallStore<ParkedCall>;
  /** What calls to each target were seen to do: push, or finish without pushing. */
  readonly #targets: RememberedTargets;
  /** The deadlines of the runs being waited for. */
  readonly #deadlines = new DeadlineList<ParkedCall>((p) => p.expire());
  readonly #options: MrtrOptions;
  /** How long this broker's rounds wait for their barrier (learned of its upstream, shared with replay). */
  readonly #bound: RoundBound;
  /** The sessions parked calls may hold, shared fairly between principals (and with listens, in a wrap). */
  readonly #shares: Shares;
  #closed = false;

  readonly #replay: ReplayRunner | undefined;

  /**
   * `within`, from a wrap: its fair shares of held sessions (default: this broker's own, which
   * only holds each principal to its quota), and which targets may be remembered as pushing or
   * quiet (the upstream's listed ones).
   */
  constructor(options: MrtrOptions = {}, within: { shares?: Shares; listed?: (target: string) => boolean } = {}) {
    this.#options = options;
    this.#bound = new RoundBound(options.collectMs);
    this.#targets = new RememberedTargets(within.listed);
    // On its own, only the quota per principal is shared out: `maxParked` bounds the rest (in `run`).
    this.#shares =
      within.shares ??
      new Shares({
        budget: Number.POSITIVE_INFINITY,
        ...(options.maxParkedPerPrincipal !== undefined ? { parkedPerPrincipal: options.maxParkedPerPrincipal } : {}),
      });
    this.#parked = new InProcessParkedCalls<ParkedCall>(options.maxParked !== undefined ? { max: options.maxParked } : {});
    this.keyring = options.keyring ?? new Keyring();
    this.#replay = options.replay
      ? new ReplayRunner({
          keyring: this.keyring,
          observed: (target, pushed) => this.observed(target, pushed),
          ...(options.now ? { now: options.now } : {}),
          bound: this.#bound,
          ...(options.usedStates ? { used: options.usedStates } : {}),
        })
      : undefined;
  }

  traceOf(requestState: string): string | undefined {
    const handle = openSuspend(requestState, Number.NEGATIVE_INFINITY);
    if (!handle.ok) return replayTrace(this.keyring, requestState);
    const p = this.#parked.get(handle.value.callId);
    return p instanceof Promise ? undefined : p?.trace;
  }

  /** True when calls to `target` run in replay mode. */
  replays(target: string): boolean {
    const r = this.#options.replay;
    if (!r) return false;
    if (r === true) return true;
    const name = target.slice(target.indexOf(':') + 1);
    return r.includes(name);
  }

  /** True when calls to `target` have pushed before (their sessions are then not shared). */
  pushes(target: string): boolean {
    return this.#targets.pushes(target);
  }

  /** True when calls to `target` have finished without pushing, and none has pushed since. */
  quiet(target: string): boolean {
    return this.#targets.quiet(target);
  }

  /** Records how a call to `target` went: it pushed, or it finished without pushing. */
  observed(target: string, pushed: boolean): void {
    this.#targets.observed(target, pushed);
  }

  /** Targets remembered as pushing or as quiet (bounded by what the upstream lists, in a wrap). */
  get remembered(): number {
    return this.#targets.size;
  }

  /** Calls parked right now. */
  get parked(): number {
    return this.#parked.size;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  run(call: PushableCall): Promise<Answer> {
    if (this.#replay && this.replays(call.target)) return this.#replay.run(call);
    const state = call.legacy.envelope.retry?.requestState;
    if (state !== undefined) return this.#resume({ ...call, finishOn: () => call.finish }, state);
    if (this.#parked.full) {
      const maxParked = this.#options.maxParked ?? DEFAULTS.parked;
      return Promise.resolve(limitAnswer(limitRefusal('parked', maxParked, `${maxParked} calls are waiting for input`), call.request.id));
    }
    const p = new ParkedCall(this, call);
    this.#start(p, call.call);
    return this.#serve(p, call);
  }

  #start(p: ParkedCall, run: PushableCall['call']): void {
    p.outcome = undefined;
    run(p).then((outcome) => {
      if (isRecord(outcome) && 'error' in outcome && outcome.error.code === ErrorCode.UrlElicitationRequired) p.rerun = run;
      clearTimeout(p.grace);
      p.outcome = outcome;
      p.wake();
    });
  }

  /**
   * Waits for the call's next event and answers the current request with it. Driven by the call's
   * wake-ups rather than an async loop: a call that finishes without pushing (most) costs one
   * promise here.
   */
  #serve(p: ParkedCall, call: Serving): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const signal = call.ctx.signal;
      p.expired = false;
      const deadline = this.#deadlines.add(p, call.timeoutMs);
      signal.addEventListener('abort', p.onWake, { once: true });
      const end = (): void => {
        p.waiter = undefined;
        this.#deadlines.remove(deadline);
        signal.removeEventListener('abort', p.onWake);
      };
      const movedOn = (): boolean => Boolean(p.outcome || p.capabilityError || signal.aborted);
      const step = (gathered = false): void => {
        try {
          // After a round's gathering, the round is sent unless the call moved on meanwhile.
          const answer = gathered && !movedOn() ? this.#park(p, call) : this.#next(p, call);
          if (answer === COLLECT) {
            // Further pushes of the same round are gathered (up to a barrier, within the round bound).
            p.waiter = undefined;
            void this.#bound
              .gather(
                () => p.ordinal,
                movedOn,
                (s) => call.session.barrier(s),
                (recheck) => (p.waiter = recheck),
              )
              .then(() => {
                p.waiter = undefined;
                step(true);
              });
          } else if (answer === WAIT_FOR_EVENT) p.waiter = step;
          else {
            end();
            resolve(answer);
          }
        } catch (e) {
          end();
          reject(e);
        }
      };
      step();
    });
  }

  /** What the request being served for `p` gets now: an answer, or a wait (for an event, or while a round is gathered). */
  #next(p: ParkedCall, call: Serving): Answer | typeof COLLECT | typeof WAIT_FOR_EVENT {
    const signal = call.ctx.signal;
    if (p.capabilityError) {
      const error = p.capabilityError;
      this.#drop(p, 'the client lacks a capability');
      return missingCapabilityAnswer(call.request.id, error);
    }
    if (p.outcome) {
      const outcome = p.outcome;
      if (p.rerun && 'error' in outcome && !signal.aborted) return this.#park(p, call, outcome.error);
      if (p.ordinal === p.before) this.observed(p.called, false);
      this.#drop(p);
      return call.finish(outcome);
    }
    // A client that went away gets no parked call (nobody could ever resume it), even one whose
    // pushes are being gathered into a round right now.
    if (signal.aborted) {
      this.#drop(p, 'the client went away');
      return errorAnswer(call.request.id, { code: ErrorCode.InternalError, message: 'Request cancelled' });
    }
    if (p.pending && p.pending.size > 0) return COLLECT;
    if (p.expired) {
      this.#drop(p, 'the upstream server did not answer in time');
      return errorAnswer(call.request.id, {
        code: ErrorCode.InternalError,
        message: `Internal error: the upstream server did not answer ${call.request.method} within ${call.timeoutMs} ms`,
      });
    }
    return WAIT_FOR_EVENT;
  }

  /** Parks the call and answers with an `input_required` round. */
  #park(p: ParkedCall, call: Serving, urlError?: WireError): Answer {
    p.round++;
    p.busy = false;
    p.notify = noop;
    const timeoutMs = this.#options.parkTimeoutMs ?? DEFAULTS.parkTimeoutMs;
    if (p.id === '') {
      const admitted = this.#shares.admit(
        'parked',
        p.principal,
        () => this.#drop(p, 'it was released to make room for other callers', true),
        () => !p.busy,
      );
      if (!('end' in admitted)) {
        this.#drop(p, 'too many calls are waiting for input', true);
        return limitAnswer(admitted, call.request.id);
      }
      p.holding = admitted;
      p.id = randomUUID();
      // Parked the first time: `call` is the call's first request.
      p.trace = call.ctx.telemetry?.span.traceparent();
      call.ctx.telemetry?.round(1);
    }
    p.expiresAt = this.#now() + timeoutMs;
    const requestState = suspendState({
      callId: p.id,
      round: p.round,
      expiresAt: p.expiresAt,
      ...(this.#options.replica !== undefined ? { owner: this.#options.replica } : {}),
    });
    this.#parked.put(p.id, p);
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.#drop(p, 'no retry came in time'), timeoutMs);
    p.timer.unref?.();
    const serverInfo = call.session.initializeResult?.serverInfo;
    if (urlError) {
      const converted = urlElicitationToInputRequired(urlError, {
        requestState,
        ...(serverInfo ? { serverInfo } : {}),
        firstOrdinal: p.ordinal + 1,
      });
      if (!converted.ok) {
        this.#drop(p);
        return call.finish({ error: urlError });
      }
      p.ordinal += Object.keys(converted.value.elicitationIds).length;
      return { message: { jsonrpc: '2.0', id: call.request.id, result: converted.value.result }, status: 200 };
    }
    const pushes: KeyedPush[] = [...(p.pending ?? [])].map(([key, pending]) => ({ key, request: pending.push }));
    const result = inputRequiredResult(pushes, { requestState, ...(serverInfo ? { serverInfo } : {}) });
    if (!result.ok) {
      this.#drop(p);
      return errorAnswer(call.request.id, result.error);
    }
    return { message: { jsonrpc: '2.0', id: call.request.id, result: result.value }, status: 200 };
  }

  resume(retry: RetryCall): Promise<Answer> | undefined {
    const state = retry.legacy.envelope.retry?.requestState;
    if (state === undefined || this.replays(retry.target)) return undefined;
    return this.#resume(retry, state);
  }

  async #resume(retry: RetryCall, text: string): Promise<Answer> {
    const id = retry.request.id;
    const opened = openSuspend(text, this.#now());
    if (!opened.ok) return errorAnswer(id, opened.error);
    const p = await this.#parked.get(opened.value.callId);
    // The parked call is what the retry must match: its caller, method, params and round.
    const refused = suspendRefusal(opened.value, p, {
      principal: retry.ctx.principal,
      method: retry.request.method,
      params: retry.request.params,
      owner: this.#options.replica,
    });
    if (refused || !p) return errorAnswer(id, refused ?? stateRefusal('gone'));
    // With nothing awaited since the call was found: another retry with the same state may be
    // resuming it, or it was released.
    if (p.released !== undefined) return errorAnswer(id, stateRefusal('gone'));
    if (p.busy) return errorAnswer(id, stateRefusal('stale-round'));
    const responses = retry.legacy.envelope.retry?.inputResponses ?? {};
    if (!isRecord(responses)) return errorAnswer(id, invalidParams('inputResponses must be an object'));
    const answers: Array<[PendingPush, JsonObject]> = [];
    if (!p.rerun) {
      for (const [key, pending] of p.pending ?? []) {
        if (!(key in responses)) continue;
        const result = inputResponseToResult(pending.method, key, responses[key]);
        if (!result.ok) return errorAnswer(id, result.error);
        answers.push([pending, result.value]);
      }
    }
    p.busy = true;
    clearTimeout(p.timer);
    this.#parked.delete(p.id);
    retry.ctx.telemetry?.continues(p.trace, opened.value.round + 1);
    p.envelope = retry.legacy.envelope;
    p.notify = retry.ctx.notify;
    if (p.rerun) {
      // The call is run again from the start, on the session it holds.
      const rerun = p.rerun;
      p.rerun = undefined;
      this.#start(p, rerun);
    } else {
      for (const [pending, result] of answers) {
        for (const [key, value] of p.pending!) if (value === pending) p.pending!.delete(key);
        pending.resolve({ result });
      }
    }
    return this.#serve(p, {
      request: retry.request,
      ctx: retry.ctx,
      session: p.session,
      finish: retry.finishOn(p.session),
      timeoutMs: retry.timeoutMs,
    });
  }

  /**
   * Releases a call (un-parked, its share given back, its pushes answered, the upstream call
   * cancelled when a `reason` says it was released: see `ParkedCall.end`); `now` when its session
   * is wanted at once (a call released to make room).
   */
  #drop(p: ParkedCall, reason?: string, now = false): void {
    clearTimeout(p.timer);
    this.#parked.delete(p.id);
    p.holding?.end();
    p.end(reason, now);
  }

  /** Releases every parked call. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of [...this.#parked.values()]) this.#drop(p, 'the server is shutting down');
  }
}

function noop(): void {}
