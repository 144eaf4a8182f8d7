/**
 * MRTR in replay mode (opt-in, per target or for all): nothing is parked. Each retry re-runs the
 * call from the start on any upstream session and answers its pushes in order — earlier ones from
 * the answers already given, carried encrypted in `requestState` with a digest of the push each
 * answers, the newest from `inputResponses`. Each state is used once (`UsedStates`). A retry can land on another process or replica that
 * holds the key. A replayed push that differs from the recorded one ends the call with an error.
 * Caveat: whatever the server does before its first push runs again on every round.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ErrorCode, invalidParams, missingCapability } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import type { InputMethod } from '../../core/legacy/inputs.ts';
import { isRecord, omitKeys, type JsonObject } from '../../core/primitives.ts';
import { checkInputCapability, inputKeyOf, inputRequiredResult, inputResponseToResult, pushToInputRequest, type KeyedPush } from '../../core/translate/inputRequests.ts';
import { canonicalJson } from '../../session/pool.ts';
import type { RpcOutcome } from '../../session/upstreamSession.ts';
import type { Keyring } from '../../state/keyring.ts';
import { InProcessUsedStates, type UsedStates } from '../../state/usedStates.ts';
import { errorAnswer, streamHooks, type Answer, type PushableCall } from '../legacyServer/modernDispatch.ts';
import { scope } from '../../signals.ts';

/** One answered push: its key, the digest of the push, the result given upstream. */
interface Recorded {
  readonly k: string;
  readonly h: string;
  readonly r: JsonObject;
}

interface ReplayState {
  readonly v: 'replay';
  /** This state's own id: it is used once. */
  readonly i: string;
  readonly p: string;
  readonly m: string;
  readonly d: string;
  readonly e: number;
  /** Answers so far, by key. */
  readonly a: readonly Recorded[];
  /** The pushes asked in the last round: key → digest. */
  readonly q: Readonly<Record<string, string>>;
}

const AAD = 'replayState';

function tag(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** What identifies a push across runs: its method and params, without `_meta`. */
export function pushDigest(push: Pick<JsonRpcRequest, 'method' | 'params'>): string {
  const params = isRecord(push.params) ? omitKeys(push.params, ['_meta']) : {};
  return tag(`${push.method}\u0000${canonicalJson(params)}`);
}

function paramsDigest(params: JsonObject | undefined): string {
  return tag(canonicalJson(params ? omitKeys(params, ['_meta', 'inputResponses', 'requestState']) : {}));
}

export interface ReplayOptions {
  readonly keyring: Keyring;
  /** How long a round's state stays valid (default 10 minutes). */
  readonly stateTtlMs?: number;
  /** Window for collecting concurrent pushes into one round (default 15 ms). */
  readonly collectMs?: number;
  readonly now?: () => number;
  /** Told how each call went: it pushed, or it finished without pushing. */
  readonly observed?: (target: string, pushed: boolean) => void;
  /** The states used already (default: this process's own): each is taken once. */
  readonly used?: UsedStates;
}

/** Runs MRTR-eligible calls in replay mode. */
export class ReplayRunner {
  readonly #options: ReplayOptions;
  readonly #used: UsedStates;

  constructor(options: ReplayOptions) {
    this.#options = options;
    this.#used = options.used ?? new InProcessUsedStates(options.now ? { now: options.now } : {});
  }

  async run(call: PushableCall): Promise<Answer> {
    const id = call.request.id;
    const now = (this.#options.now ?? Date.now)();
    let recorded: Recorded[] = [];
    let asked: Readonly<Record<string, string>> = {};
    const sealed = call.legacy.retry?.requestState;
    if (sealed !== undefined) {
      const opened = this.#options.keyring.open(sealed, AAD);
      if (!opened.ok) return errorAnswer(id, invalidParams(opened.error === 'unknown-key' ? 'requestState was sealed under a key this server no longer holds' : 'requestState is not valid: it was altered or is not ours'));
      let state: ReplayState;
      try {
        state = JSON.parse(new TextDecoder().decode(opened.value)) as ReplayState;
      } catch {
        return errorAnswer(id, invalidParams('requestState is not valid'));
      }
      if (state.v !== 'replay') return errorAnswer(id, invalidParams('requestState is not valid'));
      if (state.e < now) return errorAnswer(id, invalidParams('requestState has expired; start the request again without it'));
      if (state.p !== tag(call.ctx.principal)) return errorAnswer(id, invalidParams('requestState belongs to another caller'));
      if (state.m !== call.request.method || state.d !== paramsDigest(call.request.params)) return errorAnswer(id, invalidParams('requestState was issued for a different request'));
      // Single use: of concurrent retries with one state, the first runs the call and the others are refused.
      if (typeof state.i !== 'string' || !(await this.#used.claim(state.i, state.e))) return errorAnswer(id, invalidParams('requestState was already used'));
      recorded = [...state.a];
      asked = state.q;
    }
    const responses = call.legacy.retry?.inputResponses ?? {};
    const run = scope([call.ctx.signal], call.timeoutMs);
    const controller = { abort: () => run.abort() };
    const signal = run.signal;
    const fresh: Array<{ key: string; push: JsonRpcRequest; digest: string; resolve: (o: RpcOutcome) => void }> = [];
    let failure: Answer | undefined;
    let ordinal = 0;
    let wake = () => {};
    const onPush = async (push: JsonRpcRequest): Promise<RpcOutcome> => {
      this.#options.observed?.(call.target, true);
      const input = pushToInputRequest(push);
      if (!input.ok) return { error: input.error };
      const key = inputKeyOf(push, ++ordinal);
      const digest = pushDigest(push);
      const earlier = recorded.find((r) => r.k === key);
      if (earlier) {
        if (earlier.h === digest) return { result: earlier.r };
        failure ??= errorAnswer(id, { code: ErrorCode.InternalError, message: `Internal error: on replay the server asked ${push.method} (${key}) where it had asked something else before; the call cannot be replayed` });
        wake();
        return { error: { code: ErrorCode.InternalError, message: 'replay diverged' } };
      }
      const allowed = checkInputCapability(input.value, call.legacy.envelope.clientCapabilities);
      if (!allowed.ok) {
        failure ??= errorAnswer(id, { ...missingCapability((allowed.error.data as { requiredCapabilities: JsonObject }).requiredCapabilities, allowed.error.message), status: 400 });
        wake();
        return { error: { code: ErrorCode.InternalError, message: `The client did not declare the capability ${push.method} needs` } };
      }
      if (asked[key] === digest && key in responses) {
        const result = inputResponseToResult(push.method as InputMethod, key, responses[key]);
        if (!result.ok) {
          failure ??= errorAnswer(id, result.error);
          wake();
          return { error: result.error };
        }
        recorded.push({ k: key, h: digest, r: result.value });
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
        await new Promise((r) => setTimeout(r, this.#options.collectMs ?? 15));
        if (outcome || failure) continue;
        break;
      }
      if (signal.aborted) {
        controller.abort();
        return errorAnswer(id, { code: ErrorCode.InternalError, message: run.timedOut ? `Internal error: the upstream server did not answer ${call.request.method} within ${call.timeoutMs} ms` : 'Request cancelled' });
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
    const state: ReplayState = {
      v: 'replay',
      i: randomUUID(),
      p: tag(call.ctx.principal),
      m: call.request.method,
      d: paramsDigest(call.request.params),
      e: now + (this.#options.stateTtlMs ?? 10 * 60_000),
      a: recorded,
      q: Object.fromEntries(fresh.map((f) => [f.key, f.digest])),
    };
    const requestState = this.#options.keyring.seal(new TextEncoder().encode(JSON.stringify(state)), AAD);
    const serverInfo = call.session.initializeResult?.serverInfo;
    const pushes: KeyedPush[] = fresh.map((f) => ({ key: f.key, request: f.push }));
    const result = inputRequiredResult(pushes, { requestState, ...(serverInfo ? { serverInfo } : {}) });
    if (!result.ok) return errorAnswer(id, result.error);
    return { message: { jsonrpc: '2.0', id, result: result.value }, status: 200 };
  }
}
