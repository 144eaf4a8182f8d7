/**
 * Pushes become MRTR rounds (suspend mode): while a modern client's call runs upstream, the legacy
 * server's own `elicitation/create`, `sampling/createMessage` and `roots/list` requests are collected
 * into one `input_required` round, the call is parked, and a sealed `requestState` (AES-256-GCM,
 * bound to the call, principal, method, params digest, round and expiry; single use) lets the retry
 * answer the parked pushes and resume the call. Parked calls that are never resumed are released.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ErrorCode, invalidParams, missingCapability, type WireError } from '../../core/errors.ts';
import type { JsonRpcRequest, RequestId } from '../../core/jsonrpc.ts';
import type { InputMethod } from '../../core/legacy/inputs.ts';
import { isRecord, omitKeys, type JsonObject } from '../../core/primitives.ts';
import type { Envelope } from '../../core/translate/envelope.ts';
import { checkInputCapability, inputKeyOf, inputRequiredResult, inputResponseToResult, pushToInputRequest, urlElicitationToInputRequired, type KeyedPush } from '../../core/translate/inputRequests.ts';
import { canonicalJson } from '../../session/pool.ts';
import type { CallHooks, RpcOutcome } from '../../session/upstreamSession.ts';
import { Keyring } from '../../state/keyring.ts';
import { Shares, type Holding } from '../../session/shares.ts';
import { DeadlineList } from '../../signals.ts';
import { ReplayRunner } from './replay.ts';
import { deliverLog, deliverProgress, errorAnswer, refusedAnswer, type Answer, type InputBroker, type ModernContext, type PushableCall } from '../legacyServer/modernDispatch.ts';
import { limitRefusal } from '../../core/limits.ts';

export interface MrtrOptions {
  /** Seals `requestState`; default a random key per process (retries cannot cross processes). */
  readonly keyring?: Keyring;
  /** How long a parked call waits for its retry before it is released (default 5 minutes). */
  readonly parkTimeoutMs?: number;
  /** How long to wait for further pushes after the first, to put concurrent ones in one round (default 15 ms). */
  readonly collectMs?: number;
  /** Most calls parked at once (default 10,000; in a wrap, also within the sessions it may hold). */
  readonly maxParked?: number;
  /**
   * Calls one principal may have parked at once (default 16): when one more of its calls parks,
   * its oldest parked call is released (its pushes are answered `cancel`, the call is cancelled
   * upstream), so calls a client abandoned give way to the ones it is answering.
   */
  readonly maxParkedPerPrincipal?: number;
  /** Clock (ms); default `Date.now`. */
  readonly now?: () => number;
  /**
   * Replay mode instead of suspend mode, for every call (`true`) or for these targets (tool or
   * prompt names, resource URIs): stateless, nothing parked, every round re-runs the call.
   */
  readonly replay?: boolean | readonly string[];
}

interface PendingPush {
  readonly push: JsonRpcRequest;
  readonly method: InputMethod;
  readonly resolve: (outcome: RpcOutcome) => void;
}

/**
 * One call that may push, from its first request until it finishes or is released. It is also the
 * hooks object of its upstream call (no closures per call: most calls never push).
 */
class Parked implements CallHooks {
  /** Assigned when the call is first parked (most calls never are). */
  id = '';
  /** The params digest the state binds; computed when the call is first parked. */
  digest = '';
  /** Cancels the upstream call (set once it is sent); `cancelled` if that was asked for before. */
  cancel: (() => void) | undefined;
  cancelled = false;
  /** Pushes waiting for the client's answers, by input key (created on the first push). */
  pending: Map<string, PendingPush> | undefined;
  round = 0;
  ordinal = 0;
  busy = true;
  outcome: RpcOutcome | undefined;
  capabilityError: WireError | undefined;
  /** URL elicitation required (-32042): the call is re-run from the start on the retry. */
  rerun: PushableCall['call'] | undefined;
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
  /** False for a target known to finish without pushing (see `CallHooks.mayPush`). */
  readonly mayPush: boolean;
  /** Where progress and logs go: the request being served now. */
  envelope: Envelope;
  notify: ModernContext['notify'];
  readonly broker: MrtrBroker;
  readonly principal: string;
  readonly method: string;
  readonly params: JsonObject | undefined;
  readonly release: () => void;
  readonly called: string;

  constructor(broker: MrtrBroker, call: PushableCall) {
    this.broker = broker;
    this.principal = call.ctx.principal;
    this.method = call.request.method;
    this.params = call.request.params;
    this.release = call.session.hold();
    this.envelope = call.legacy.envelope;
    this.notify = call.ctx.notify;
    this.called = call.target;
    this.mayPush = !broker.quiet(call.target);
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

  onPush(push: JsonRpcRequest): Promise<RpcOutcome> {
    return this.broker.pushed(this, push);
  }

  onPushCancelled(pushId: RequestId): void {
    if (!this.pending) return;
    for (const [key, pending] of this.pending) if (pending.push.id === pushId) this.pending.delete(key);
  }
}

interface StatePayload {
  readonly c: string;
  readonly p: string;
  readonly m: string;
  readonly d: string;
  readonly r: number;
  readonly e: number;
}

const AAD = 'requestState';

/** `#next`: gather the round's pushes for a moment, then park. */
const COLLECT = Symbol('collect');
/** `#next`: nothing to answer yet. */
const WAIT_FOR_EVENT = Symbol('wait');

/** How long a released call whose pushes were answered may take to finish before it is cancelled. */
const RELEASE_GRACE_MS = 5_000;

/** What a push of a released call is answered with: elicitation `cancel`, an error otherwise. */
function releasedAnswer(method: InputMethod, reason: string): RpcOutcome {
  return method === 'elicitation/create' ? { result: { action: 'cancel' } } : { error: { code: ErrorCode.InternalError, message: `The client did not answer: ${reason}` } };
}

function digestOf(params: JsonObject | undefined): string {
  const rest = params ? omitKeys(params, ['_meta', 'inputResponses', 'requestState']) : {};
  return createHash('sha256').update(canonicalJson(rest)).digest('base64url');
}

function principalTag(principal: string): string {
  return createHash('sha256').update(principal).digest('base64url').slice(0, 22);
}

function stateError(id: RequestId, detail: string): Answer {
  return errorAnswer(id, invalidParams(`requestState ${detail}`));
}

/** The MRTR broker: suspend mode, with replay mode for the targets configured for it. */
export class MrtrBroker implements InputBroker {
  readonly keyring: Keyring;
  readonly #parked = new Map<string, Parked>();
  readonly #pushy = new Set<string>();
  readonly #quiet = new Set<string>();
  /** The deadlines of the runs being waited for. */
  readonly #deadlines = new DeadlineList<Parked>(expire);
  readonly #options: MrtrOptions;
  /** The sessions parked calls may hold, shared fairly between principals (and with listens, in a wrap). */
  readonly #shares: Shares;
  #closed = false;

  readonly #replay: ReplayRunner | undefined;

  /** What only remembered targets pass: by default any (within a bound); in a wrap, what the upstream lists. */
  readonly #listed: (target: string) => boolean;

  /**
   * `within`, from a wrap: its fair shares of held sessions (default: this broker's own, which
   * only holds each principal to its quota), and which targets may be remembered as pushing or
   * quiet (the upstream's listed ones).
   */
  constructor(options: MrtrOptions = {}, within: { shares?: Shares; listed?: (target: string) => boolean } = {}) {
    this.#options = options;
    this.#listed = within.listed ?? (() => true);
    // On its own, only the quota per principal is shared out: `maxParked` bounds the rest (in `run`).
    this.#shares = within.shares ?? new Shares({ budget: Number.POSITIVE_INFINITY, ...(options.maxParkedPerPrincipal !== undefined ? { parkedPerPrincipal: options.maxParkedPerPrincipal } : {}) });
    this.keyring = options.keyring ?? new Keyring();
    this.#replay = options.replay
      ? new ReplayRunner({ keyring: this.keyring, observed: (target, pushed) => this.observed(target, pushed), ...(options.now ? { now: options.now } : {}), ...(options.collectMs !== undefined ? { collectMs: options.collectMs } : {}) })
      : undefined;
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
    return this.#pushy.has(target);
  }

  /** True when calls to `target` have finished without pushing, and none has pushed since. */
  quiet(target: string): boolean {
    return this.#quiet.has(target) && !this.#pushy.has(target);
  }

  /** Records how a call to `target` went: it pushed, or it finished without pushing. */
  observed(target: string, pushed: boolean): void {
    if (!this.#listed(target)) return;
    if (pushed) {
      if (this.#pushy.size < 10_000) this.#pushy.add(target);
      this.#quiet.delete(target);
    } else if (!this.#pushy.has(target) && this.#quiet.size < 10_000) this.#quiet.add(target);
  }

  /** Targets remembered as pushing or as quiet (bounded by what the upstream lists, in a wrap). */
  get remembered(): number {
    return this.#pushy.size + this.#quiet.size;
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
    const state = call.legacy.retry?.requestState;
    if (state !== undefined) return this.#resume(call, state);
    const maxParked = this.#options.maxParked ?? 10_000;
    if (this.#parked.size >= maxParked) return Promise.resolve(refusedAnswer(call.request.id, limitRefusal('parked', maxParked, `${maxParked} calls are waiting for input`)));
    const p = new Parked(this, call);
    this.#start(p, call.call);
    return this.#serve(p, call);
  }

  #start(p: Parked, run: PushableCall['call']): void {
    p.outcome = undefined;
    run(p).then((outcome) => {
      if (isRecord(outcome) && 'error' in outcome && outcome.error.code === ErrorCode.UrlElicitationRequired) p.rerun = run;
      clearTimeout(p.grace);
      p.outcome = outcome;
      p.wake();
    });
  }

  /** A push of `p`'s call: collected for the next round (or answered at once when it cannot be). */
  pushed(p: Parked, push: JsonRpcRequest): Promise<RpcOutcome> {
    const input = pushToInputRequest(push);
    if (!input.ok) return Promise.resolve({ error: input.error });
    if (p.released !== undefined) return Promise.resolve(releasedAnswer(push.method as InputMethod, p.released));
    const allowed = checkInputCapability(input.value, p.envelope.clientCapabilities);
    if (!allowed.ok) {
      p.capabilityError ??= allowed.error;
      p.wake();
      return Promise.resolve({ error: { code: ErrorCode.InternalError, message: `The client did not declare the capability ${push.method} needs` } });
    }
    this.observed(p.called, true);
    const key = inputKeyOf(push, ++p.ordinal);
    return new Promise<RpcOutcome>((resolve) => {
      (p.pending ??= new Map()).set(key, { push, method: push.method as InputMethod, resolve });
      p.wake();
    });
  }

  /**
   * Waits for the call's next event and answers the current request with it. Driven by the call's
   * wake-ups rather than an async loop: a call that finishes without pushing (most) costs one
   * promise here.
   */
  #serve(p: Parked, call: PushableCall): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const signal = call.ctx.signal;
      p.expired = false;
      const deadline = this.#deadlines.add(p, call.timeoutMs);
      signal.addEventListener('abort', p.onWake, { once: true });
      let collecting = false;
      const end = (): void => {
        p.waiter = undefined;
        this.#deadlines.remove(deadline);
        signal.removeEventListener('abort', p.onWake);
      };
      const step = (gathered = false): void => {
        if (collecting) return;
        try {
          // After a round's gathering moment, the round is sent unless the call moved on meanwhile.
          const answer = gathered && !(p.outcome || p.capabilityError || signal.aborted) ? this.#park(p, call) : this.#next(p, call);
          if (answer === COLLECT) {
            // Further pushes of the same round are gathered for a moment before the round is sent.
            collecting = true;
            p.waiter = undefined;
            setTimeout(() => {
              collecting = false;
              step(true);
            }, this.#options.collectMs ?? 15);
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
  #next(p: Parked, call: PushableCall): Answer | typeof COLLECT | typeof WAIT_FOR_EVENT {
    const signal = call.ctx.signal;
    if (p.capabilityError) {
      const error = p.capabilityError;
      this.#drop(p, 'the client lacks a capability');
      return errorAnswer(call.request.id, { ...missingCapability((error.data as { requiredCapabilities: JsonObject }).requiredCapabilities, error.message), status: 400 });
    }
    if (p.outcome) {
      const outcome = p.outcome;
      if (p.rerun && 'error' in outcome && !signal.aborted) return this.#park(p, call, outcome.error);
      if (p.ordinal === 0) this.observed(p.called, false);
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
      return errorAnswer(call.request.id, { code: ErrorCode.InternalError, message: `Internal error: the upstream server did not answer ${call.request.method} within ${call.timeoutMs} ms` });
    }
    return WAIT_FOR_EVENT;
  }

  /** Parks the call and answers with an `input_required` round. */
  #park(p: Parked, call: PushableCall, urlError?: WireError): Answer {
    p.round++;
    p.busy = false;
    p.notify = noop;
    const timeoutMs = this.#options.parkTimeoutMs ?? 5 * 60_000;
    if (p.id === '') {
      const admitted = this.#shares.admit('parked', p.principal, () => this.#drop(p, 'it was released to make room for other callers', true), () => !p.busy);
      if (!('end' in admitted)) {
        this.#drop(p, 'too many calls are waiting for input', true);
        return refusedAnswer(call.request.id, admitted);
      }
      p.holding = admitted;
      p.id = randomUUID();
      p.digest = digestOf(p.params);
    }
    const payload: StatePayload = { c: p.id, p: principalTag(p.principal), m: p.method, d: p.digest, r: p.round, e: this.#now() + timeoutMs };
    const requestState = this.keyring.seal(new TextEncoder().encode(JSON.stringify(payload)), AAD);
    this.#parked.set(p.id, p);
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.#drop(p, 'no retry came in time'), timeoutMs);
    p.timer.unref?.();
    const serverInfo = call.session.initializeResult?.serverInfo;
    if (urlError) {
      const converted = urlElicitationToInputRequired(urlError, { requestState, ...(serverInfo ? { serverInfo } : {}), firstOrdinal: p.ordinal + 1 });
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

  async #resume(call: PushableCall, sealed: string): Promise<Answer> {
    const id = call.request.id;
    const opened = this.keyring.open(sealed, AAD);
    if (!opened.ok) return stateError(id, opened.error === 'unknown-key' ? 'was sealed under a key this server no longer holds' : 'is not valid: it was altered or is not ours');
    let payload: StatePayload;
    try {
      payload = JSON.parse(new TextDecoder().decode(opened.value)) as StatePayload;
    } catch {
      return stateError(id, 'is not valid');
    }
    if (payload.e < this.#now()) return stateError(id, 'has expired; start the request again without it');
    if (payload.p !== principalTag(call.ctx.principal)) return stateError(id, 'belongs to another caller');
    if (payload.m !== call.request.method || payload.d !== digestOf(call.request.params)) return stateError(id, 'was issued for a different request');
    const p = this.#parked.get(payload.c);
    if (!p) return stateError(id, 'refers to a call that is no longer waiting (finished, released or on another server)');
    if (p.round !== payload.r || p.busy) return stateError(id, 'was already used');
    const responses = call.legacy.retry?.inputResponses ?? {};
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
    p.envelope = call.legacy.envelope;
    p.notify = call.ctx.notify;
    if (p.rerun) {
      const rerun = p.rerun;
      p.rerun = undefined;
      this.#start(p, call.call ?? rerun);
    } else {
      for (const [pending, result] of answers) {
        for (const [key, value] of p.pending!) if (value === pending) p.pending!.delete(key);
        pending.resolve({ result });
      }
    }
    return this.#serve(p, call);
  }

  /**
   * Releases a call: its pushes are answered (elicitation: cancel) and the upstream call is
   * cancelled; when pushes were answered, the server first gets a grace period to act on the
   * answers and finish (cancelling at once would overtake the answers it is waiting for), unless
   * its session is wanted `now` (a call released to make room).
   */
  #drop(p: Parked, reason?: string, now = false): void {
    clearTimeout(p.timer);
    this.#parked.delete(p.id);
    p.holding?.end();
    p.released = reason ?? 'the call ended';
    const answered = p.pending !== undefined && p.pending.size > 0;
    if (p.pending) for (const pending of p.pending.values()) pending.resolve(releasedAnswer(pending.method, p.released));
    p.pending?.clear();
    if (reason !== undefined && !p.outcome) {
      if (!answered || now) cancelCall(p);
      else {
        p.grace = setTimeout(() => cancelCall(p), RELEASE_GRACE_MS);
        p.grace.unref?.();
      }
    }
    p.release();
  }

  /** Releases every parked call. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of [...this.#parked.values()]) this.#drop(p, 'the server is shutting down');
  }
}

function noop(): void {}

function expire(p: Parked): void {
  p.expired = true;
  p.wake();
}

function cancelCall(p: Parked): void {
  p.cancelled = true;
  p.cancel?.();
}
