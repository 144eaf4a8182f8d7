/**
 * A bridged session's calls upstream and their `input_required` rounds: each call is stamped,
 * sent, and while the server needs input its input requests are pushed to the legacy client as
 * real requests, their answers sent back in a retry; the call's progress and logs are relayed.
 * Deadlines and cancellation end a call with one answer; the requests of legacy tasks are run
 * the same way (`run`), and a task's input requests pushed alike. A task-augmented call declares
 * the tasks extension, no other. Not local methods (`ping`, subscribe), nor the tasks' polling.
 */
import { ErrorCode, internalError, type WireError } from '../../core/errors.ts';
import {
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../core/jsonrpc.ts';
import { isInputMethod } from '../../core/legacy/inputs.ts';
import type { InputRequests } from '../../core/modern/inputs.ts';
import { isMrtrMethod } from '../../core/modern/methods.ts';
import { fail, ok, type Outcome } from '../../core/outcome.ts';
import { isRecord, type JsonObject } from '../../core/primitives.ts';
import { requestToModern, type LegacySessionView } from '../../core/translate/envelope.ts';
import { declareTasksExtension, withRelatedTask } from '../../core/translate/detailedTasks.ts';
import { upstreamErrorToLegacy } from '../../core/translate/errors.ts';
import {
  inputFailure,
  inputRequestToPush,
  readInputRequired,
  resultToInputResponse,
  retryRequest,
  unanswerableInputs,
} from '../../core/translate/inputRequests.ts';
import { logToLegacy, progressToLegacy } from '../../core/translate/notifications.ts';
import { resultToLegacy } from '../../core/translate/results.ts';
import type { ModernUpstream } from '../../transport/modernUpstream.ts';
import type { BridgeSession } from './bridgeSession.ts';
import type { LearnedTools } from './learnedTools.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { KeyedTable } from '../../util/idTable.ts';

/** What the rounds of a session work with. */
export interface InputRoundsContext {
  readonly upstream: ModernUpstream;
  /** Read at the moment it is needed: the session view, the versions. */
  readonly session: BridgeSession;
  readonly tools: LearnedTools;
  /** Sends to the legacy client (a push or a notification), on behalf of the client's request `related`. */
  readonly emit: (message: JsonRpcMessage, related?: RequestId) => void;
  /** A tool was dropped from a `tools/list` answer. */
  readonly droppedTool: (dropped: { tool: string; reason: string }) => void;
  /** Most `input_required` rounds one call may take (default 8). */
  readonly maxRounds?: number | undefined;
  /** Deadline for one call, input rounds included (default 5 minutes). */
  readonly requestTimeoutMs?: number | undefined;
}

/** How a call or task request ends: a result or a JSON-RPC error. */
export type Answer = { result: JsonObject } | { error: WireError };

/**
 * What a request run by {@link InputRounds.run} works with: its signal (the client's cancel, the
 * deadline, the session's end) and the pushing of input requests to the client, each carrying the
 * `related-task` of `taskId` when one is named.
 */
export interface RoundScope {
  readonly signal: AbortSignal;
  ask(inputs: InputRequests, taskId?: string): Promise<Outcome<Record<string, JsonObject>, string>>;
}

/**
 * How a task-augmented call is sent: with the tasks extension declared, and its answer read by
 * `finish`: the server's final result as it gave it (`resultType` kept: a task, or the call's own
 * result), or what ended the call otherwise (an error, or a tool error in its legacy form).
 */
export interface TaskCallOptions {
  readonly finish: (answer: Answer) => Answer;
}

interface ActiveCall {
  readonly controller: AbortController;
  readonly pushes: Set<RequestId>;
}

interface PendingPush {
  readonly resolve: (answer: Answer) => void;
}

/** The calls of one session in flight upstream, and the requests pushed to the client for them. */
export class InputRounds {
  readonly #ctx: InputRoundsContext;
  /** Not `Map`s: see `KeyedTable`. */
  readonly #calls = new KeyedTable<RequestId, ActiveCall>();
  readonly #pushes = new KeyedTable<RequestId, PendingPush>();
  #pushSeq = 0;

  constructor(ctx: InputRoundsContext) {
    this.#ctx = ctx;
  }

  /**
   * Serves one request upstream, rounds included: its answer, or `undefined` when the client
   * cancelled it (no answer is due). A call past its deadline is cancelled and answered -32603.
   */
  async serve(request: JsonRpcRequest, session: LegacySessionView, task?: TaskCallOptions): Promise<JsonRpcResponse | undefined> {
    if (!task) return this.run(request, (scope) => this.#call(request, session, scope, false));
    return this.run(request, async (scope) => task.finish(await this.#call(request, session, scope, true)));
  }

  /**
   * Runs `work` for the client's `request` as a call is run: cancelled by the client's
   * `notifications/cancelled`, its deadline and the session's end, its pushes withdrawn when it
   * ends; its answer, or `undefined` when the client cancelled it.
   */
  async run(request: JsonRpcRequest, work: (scope: RoundScope) => Promise<Answer>): Promise<JsonRpcResponse | undefined> {
    const controller = new AbortController();
    const call: ActiveCall = { controller, pushes: new Set() };
    this.#calls.set(request.id, call);
    const timeoutMs = this.#ctx.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort('the call timed out');
    }, timeoutMs);
    const late = () =>
      errorResponse(request.id, internalError(`no answer from the upstream server within ${timeoutMs} ms; the call was cancelled`));
    try {
      const scope: RoundScope = { signal: controller.signal, ask: (inputs, taskId) => this.#ask(inputs, request.id, call, taskId) };
      const answer = await work(scope);
      if (controller.signal.aborted) return timedOut ? late() : undefined;
      return 'result' in answer ? { jsonrpc: '2.0', id: request.id, result: answer.result } : errorResponse(request.id, answer.error);
    } catch (e) {
      if (controller.signal.aborted) return timedOut ? late() : undefined;
      return errorResponse(request.id, internalError(e instanceof Error ? e.message : String(e)));
    } finally {
      clearTimeout(timer);
      this.#calls.delete(request.id);
      for (const id of call.pushes) this.#cancelPush(id, 'the call ended');
    }
  }

  /** The client cancelled its request `id` (`notifications/cancelled`). */
  cancel(id: RequestId, reason: string): void {
    this.#calls.get(id)?.controller.abort(reason);
  }

  /** The client answered a pushed request; false when `id` names no push waiting. */
  answered(id: RequestId, answer: Answer): boolean {
    const push = this.#pushes.get(id);
    if (!push) return false;
    this.#pushes.delete(id);
    push.resolve(answer);
    return true;
  }

  /** The session closed: every call is cancelled and every push answered with an error. */
  close(): void {
    for (const call of this.#calls.values()) call.controller.abort('the session closed');
    for (const push of this.#pushes.values()) push.resolve({ error: { code: ErrorCode.InternalError, message: 'the session closed' } });
    this.#pushes.clear();
  }

  /** One call, its rounds included; a task-augmented call's final result is left as the server gave it. */
  async #call(request: JsonRpcRequest, session: LegacySessionView, scope: RoundScope, asTask: boolean): Promise<Answer> {
    const { upstream, tools } = this.#ctx;
    const stamped = requestToModern(request, this.#ctx.session.view ?? session, { modernVersion: this.#ctx.session.modernVersion });
    if (!stamped.ok) return { error: stamped.error };
    // Only a task-augmented call lets the server answer with a task.
    const original = declareTasksExtension(stamped.value, asTask);
    const maxRounds = this.#ctx.maxRounds ?? 8;
    const toolName = request.method === 'tools/call' && isRecord(request.params) ? request.params['name'] : undefined;
    let next = original;
    let relearned = false;
    for (let round = 0; ; round++) {
      const toolSchema = typeof toolName === 'string' ? tools.schemaOf(toolName) : undefined;
      const answer = await upstream.request(next, {
        signal: scope.signal,
        onNotification: (n) => this.#related(n, request.id),
        ...(toolSchema === undefined ? {} : { toolSchema }),
      });
      if ('error' in answer) {
        // Header mismatch on a tool we know nothing of yet: learn the tools (their Mcp-Param-*
        // annotations) and send the call again, once.
        if (answer.error.code === ErrorCode.HeaderMismatch && typeof toolName === 'string' && !relearned && upstream.kind === 'http') {
          relearned = true;
          if (await tools.relearn(upstream, this.#ctx.session.view, this.#ctx.session.modernVersion, scope.signal)) {
            round--;
            continue;
          }
        }
        return upstreamErrorToLegacy(request.method, answer.error);
      }
      const result = answer.result;
      if (result['resultType'] !== 'input_required' || !isMrtrMethod(request.method)) {
        if (asTask) return { result };
        if (request.method === 'tools/list') tools.learn(result);
        const legacy = resultToLegacy(request.method, result);
        if (!legacy.ok) return { error: legacy.error };
        for (const d of legacy.value.droppedTools) this.#ctx.droppedTool(d);
        return { result: legacy.value.result };
      }
      if (round + 1 >= maxRounds)
        return inputFailure(request.method, `The server still needed input after ${maxRounds} rounds; the call was abandoned`);
      const read = readInputRequired(result);
      if (!read.ok) return { error: read.error };
      const responses = await scope.ask(read.value.inputRequests);
      if (!responses.ok) return inputFailure(request.method, responses.error);
      next = retryRequest(original, {
        id: original.id,
        inputResponses: responses.value,
        ...(read.value.requestState === undefined ? {} : { requestState: read.value.requestState }),
      });
    }
  }

  /**
   * Pushes a task's input requests to the client outside any request of the client's (the task
   * was seen waiting while the client polled it): the answers, or why not.
   */
  async askForTask(inputs: InputRequests, taskId: string): Promise<Outcome<Record<string, JsonObject>, string>> {
    const call: ActiveCall = { controller: new AbortController(), pushes: new Set() };
    try {
      return await this.#ask(inputs, undefined, call, taskId);
    } finally {
      for (const id of call.pushes) this.#cancelPush(id, 'the task no longer waits');
    }
  }

  /** Pushes one round's input requests to the client (on behalf of its request `related`, if any), in parallel; all answers, or why not. */
  async #ask(
    inputs: InputRequests,
    related: RequestId | undefined,
    call: ActiveCall,
    taskId?: string,
  ): Promise<Outcome<Record<string, JsonObject>, string>> {
    const missing = unanswerableInputs(inputs, this.#ctx.session.view?.capabilities ?? {});
    if (missing.length > 0) {
      const methods = missing.map((k) => inputs[k]!.method).join(', ');
      return fail(`The server asked for ${methods}, which this client did not declare at initialize`);
    }
    const entries = Object.entries(inputs);
    const answers = await Promise.all(
      entries.map(async ([key, input]) => {
        const id = `mcp-dual-era-${++this.#pushSeq}`;
        const push = inputRequestToPush(key, input, { id, elicitationId: `${String(related ?? taskId)}-${key}-${this.#pushSeq}` });
        if (!push.ok) return { key, failure: push.error.message };
        if (taskId !== undefined) push.value.params = withRelatedTask(isRecord(push.value.params) ? push.value.params : {}, taskId);
        const answer = await new Promise<Answer>((resolve) => {
          this.#pushes.set(id, { resolve });
          call.pushes.add(id);
          this.#ctx.emit(push.value, related);
        });
        call.pushes.delete(id);
        if ('error' in answer) return { key, failure: `The client answered ${input.method} with an error: ${answer.error.message}` };
        if (!isInputMethod(input.method)) return { key, failure: `unknown input request ${input.method}` };
        const response = resultToInputResponse(input.method, key, answer.result);
        return response.ok ? { key, response: response.value } : { key, failure: response.error.message };
      }),
    );
    const out: Record<string, JsonObject> = {};
    for (const a of answers) {
      if ('failure' in a) return fail(a.failure ?? 'input failed');
      out[a.key] = a.response;
    }
    return ok(out);
  }

  #cancelPush(id: RequestId, reason: string): void {
    const push = this.#pushes.get(id);
    if (!push) return;
    this.#pushes.delete(id);
    this.#ctx.emit({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
    push.resolve({ error: { code: ErrorCode.InternalError, message: reason } });
  }

  /** A progress or log notification of a call, on its way to the client. */
  #related(n: JsonRpcNotification, clientId: RequestId): void {
    if (n.method === 'notifications/progress') {
      const out = progressToLegacy(n, { legacyVersion: this.#ctx.session.legacyVersion });
      if (out.ok) this.#ctx.emit(out.value, clientId);
    } else if (n.method === 'notifications/message') {
      const out = logToLegacy(n);
      if (out.ok) this.#ctx.emit(out.value, clientId);
    }
  }
}
