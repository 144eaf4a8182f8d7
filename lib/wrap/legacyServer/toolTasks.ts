/**
 * Tools the legacy server runs as tasks (2025-11-25 core tasks), served to modern callers. For a
 * caller that declares the tasks extension, a call becomes a task of the wrap's own id (`start`):
 * `tasks/get` asks the upstream `tasks/get` on the session the task runs on and, once the task is
 * terminal, carries its payload (fetched with the blocking `tasks/result`, kept open upstream from
 * the start: the server's pushes for the task arrive on it and become the task's `inputRequests`,
 * answered by `tasks/update` once each); `tasks/cancel` is the upstream `tasks/cancel`. A task is
 * its creator's alone, and holds its session open until it ends and is fetched, or its ttl runs out.
 * For a caller without the extension the call runs as a task to its end (`runToEnd`), its pushes
 * those of an ordinary call. The tables are bounded: running tasks per caller, tasks in all, and
 * the inputs one task asks.
 * Which calls run as tasks is the modern dispatch's choice; the field mapping is the core's.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, internalError, invalidParams, type WireError } from '../../core/errors.ts';
import { MetaKey } from '../../core/era.ts';
import { resultResponse, type JsonRpcRequest } from '../../core/jsonrpc.ts';
import { isInputMethod, type InputMethod } from '../../core/legacy/inputs.ts';
import type { InputRequest } from '../../core/modern/inputs.ts';
import { isRecord, omitKeys, type Implementation, type JsonObject } from '../../core/primitives.ts';
import { errorToModern } from '../../core/translate/errors.ts';
import { inputKeyOf, inputResponseToResult, pushToInputRequest } from '../../core/translate/inputRequests.ts';
import { resultToModern } from '../../core/translate/results.ts';
import { readLegacyTask, taskToModern } from '../../core/translate/tasks.ts';
import { fail, ok, type Outcome } from '../../core/outcome.ts';
import { errorAnswer, type Answer } from '../../fronts/served.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { limitAnswer, limitRefusal, type LimitRefusal } from '../../util/limits.ts';
import { scope } from '../../util/signals.ts';

/** The tasks a wrap keeps: live ones per caller and tasks in all (finished ones are forgotten first). */
export interface TaskLimits {
  /** Tasks one caller may have running at once (default 16): beyond, a new one is refused (`-32005`, 429). */
  readonly perPrincipal?: number;
  /** Tasks kept in all, running or finished and not yet expired (default 1024): beyond, the oldest finished is forgotten, or a new one refused (503). */
  readonly max?: number;
  /** The longest a task is kept, whatever ttl its server gave it (default one hour). */
  readonly keptMs?: number;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Inputs one task may ask over its life (each key once): past them, its pushes are refused. */
const MAX_INPUTS = 256;

/** A push of the task waiting for its answer through `tasks/update`. */
interface Asked {
  readonly method: InputMethod;
  readonly request: InputRequest;
  readonly answer: (outcome: RpcOutcome) => void;
}

/** A result without the `related-task` mark its server put on it. */
function unmarked(result: JsonObject): JsonObject {
  const meta = result['_meta'];
  if (!isRecord(meta) || !(MetaKey.relatedTask in meta)) return result;
  const rest = omitKeys(meta, [MetaKey.relatedTask]);
  return Object.keys(rest).length > 0 ? { ...result, _meta: rest } : omitKeys(result, ['_meta']);
}

/** The task's payload in the extension's terms: `completed` with the tool's result (`isError` included), or `failed` with a JSON-RPC error. */
function payloadOf(outcome: RpcOutcome, serverInfo: Implementation | undefined): JsonObject {
  if ('error' in outcome) return { status: 'failed', error: errorToModern(outcome.error, { method: 'tools/call' }) };
  const translated = resultToModern('tools/call', unmarked(outcome.result), serverInfo ? { serverInfo } : {});
  if (!translated.ok) return { status: 'failed', error: translated.error };
  return { status: 'completed', result: translated.value.result };
}

/** One task a modern caller runs on the legacy server. */
class ToolTask {
  /** The id the caller knows it by (the server's own stays upstream). */
  readonly id = randomUUID();
  readonly principal: string;
  readonly #upstreamId: string;
  readonly #session: UpstreamSession;
  readonly #serverInfo: Implementation | undefined;
  /** Lets go of the session, once. */
  readonly #release: () => void;
  /** Ends the `tasks/result` call kept open upstream. */
  readonly #stop = new AbortController();
  /** The `tasks/result` answer: the task's payload. */
  readonly #payload: Promise<RpcOutcome>;
  readonly #asked = new Map<string, Asked>();
  readonly #used = new Set<string>();
  #pushes = 0;
  /** The task as last seen (the extension's fields, the caller's id). */
  #task: JsonObject;
  /** The detailed task once it ended and its payload came: answered from here from then on. */
  #final: JsonObject | undefined;
  #expiry: ReturnType<typeof setTimeout> | undefined;
  /** Told once, when the task ends. */
  readonly #ended: () => void;

  constructor(principal: string, session: UpstreamSession, task: JsonObject, serverInfo: Implementation | undefined, ended: () => void) {
    this.principal = principal;
    this.#ended = ended;
    this.#session = session;
    this.#serverInfo = serverInfo;
    this.#upstreamId = task['taskId'] as string;
    this.#task = { ...taskToModern(task), taskId: this.id };
    this.#release = session.hold();
    this.#payload = session.call(
      'tasks/result',
      { taskId: this.#upstreamId },
      { signal: this.#stop.signal, pushable: true, onPush: (push) => this.#ask(push) },
    );
  }

  /** The task as the call's answer: `resultType: "task"`. */
  get created(): JsonObject {
    return { resultType: 'task', ...this.#task };
  }

  get finished(): boolean {
    return this.#final !== undefined;
  }

  /** Forgets the task after `ms` (at most what it was given). */
  expireIn(ms: number, forget: () => void): void {
    clearTimeout(this.#expiry);
    this.#expiry = setTimeout(forget, ms);
    this.#expiry.unref?.();
  }

  /** A push of the server for the task: an input request until `tasks/update` answers it. */
  #ask(push: JsonRpcRequest): Promise<RpcOutcome> {
    if (!isInputMethod(push.method))
      return Promise.resolve({ error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method}` } });
    const input = pushToInputRequest(push);
    if (!input.ok) return Promise.resolve({ error: input.error });
    const key = inputKeyOf(push, ++this.#pushes);
    if (this.#used.has(key) || this.#used.size >= MAX_INPUTS)
      return Promise.resolve({ error: invalidParams(`input ${key} cannot be asked of the caller again`) });
    this.#used.add(key);
    const method = push.method;
    return new Promise((answer) => this.#asked.set(key, { method, request: input.value, answer }));
  }

  /** Answers the pushes `responses` names that are waiting (others are ignored); a malformed response refuses them all. */
  update(responses: JsonObject): WireError | undefined {
    const answers: Array<[string, Asked, JsonObject]> = [];
    for (const [key, response] of Object.entries(responses)) {
      const asked = this.#asked.get(key);
      if (!asked) continue;
      const result = inputResponseToResult(asked.method, key, response);
      if (!result.ok) return result.error;
      answers.push([key, asked, result.value]);
    }
    for (const [key, asked, result] of answers) {
      this.#asked.delete(key);
      asked.answer({ result });
    }
    return undefined;
  }

  /** The detailed task now: asked of the server, with its payload once it ended. */
  async detail(timeoutMs: number): Promise<Outcome<JsonObject>> {
    if (this.#final) return ok(this.#final);
    if (this.#session.closed)
      return ok(this.#end({ status: 'failed', error: internalError('the upstream server the task ran on is gone') }));
    const deadline = scope([], timeoutMs);
    try {
      const got = await this.#session.call('tasks/get', { taskId: this.#upstreamId }, { signal: deadline.signal, pushable: false });
      if ('error' in got) return fail(errorToModern(got.error, { method: 'tasks/get' }));
      const task = readLegacyTask(got.result);
      if (!task.ok) return task;
      this.#task = { ...taskToModern(omitKeys(task.value, ['_meta'])), taskId: this.id };
      if (task.value.status === 'cancelled') return ok(this.#end({ status: 'cancelled' }));
      if (TERMINAL.has(task.value.status)) {
        const payload = await Promise.race([
          this.#payload,
          new Promise<undefined>((r) => deadline.signal.addEventListener('abort', () => r(undefined), { once: true })),
        ]);
        if (payload === undefined) return fail(internalError(`the upstream server did not give the task's payload within ${timeoutMs} ms`));
        return ok(this.#end(payloadOf(payload, this.#serverInfo)));
      }
      if (this.#asked.size === 0) return ok({ ...this.#task, status: 'working' });
      const inputRequests: JsonObject = {};
      for (const [key, asked] of this.#asked) inputRequests[key] = asked.request;
      return ok({ ...this.#task, status: 'input_required', inputRequests });
    } finally {
      deadline.dispose();
    }
  }

  /** The task ended: what it ended with is kept (the first time it is seen), the session let go. */
  #end(outcome: JsonObject): JsonObject {
    if (this.#final) return this.#final;
    this.#final = { ...this.#task, ...outcome };
    this.close();
    this.#ended();
    return this.#final;
  }

  /**
   * Asks the server to cancel the task (cooperative: it may still end otherwise); pushes waiting are
   * refused. A task the server says it cancelled has ended.
   */
  async cancel(): Promise<void> {
    if (this.#final) return;
    this.#refuseAsked('the task was cancelled');
    const answer = await this.#session.call('tasks/cancel', { taskId: this.#upstreamId }, { pushable: false });
    const task = 'result' in answer ? readLegacyTask(answer.result) : undefined;
    if (!task?.ok || task.value.status !== 'cancelled' || this.#final) return;
    this.#task = { ...taskToModern(omitKeys(task.value, ['_meta'])), taskId: this.id };
    this.#end({ status: 'cancelled' });
  }

  #refuseAsked(why: string): void {
    for (const asked of this.#asked.values()) asked.answer({ error: internalError(why) });
    this.#asked.clear();
  }

  /** Lets go of what the task holds upstream (its session, the `tasks/result` call, pushes waiting). */
  close(): void {
    this.#refuseAsked('the task is no longer followed');
    this.#stop.abort();
    this.#release();
  }

  /** Forgets the task for good. */
  dispose(): void {
    clearTimeout(this.#expiry);
    this.close();
  }
}

/** What starting a task takes: the call that creates it upstream, and how its other outcomes are answered. */
export interface TaskStart {
  readonly request: JsonRpcRequest;
  readonly principal: string;
  readonly session: UpstreamSession;
  /** Sends the `tools/call` upstream with `params.task`. */
  readonly create: (hooks: CallHooks) => Promise<RpcOutcome>;
  /** The answer to an upstream outcome that is no task (an error, or a server that answered at once). */
  readonly finish: (outcome: RpcOutcome) => Answer;
  readonly timeoutMs: number;
  readonly serverInfo: Implementation | undefined;
}

/** The tasks of the wrap's callers, by the ids the callers know them by. */
export class ToolTasks {
  readonly #perPrincipal: number;
  readonly #max: number;
  readonly #keptMs: number;
  readonly #byId = new Map<string, ToolTask>();
  /** Running (or being created) tasks per caller. */
  readonly #running = new Map<string, number>();
  #offered = false;

  constructor(limits: TaskLimits = {}) {
    this.#perPrincipal = limits.perPrincipal ?? DEFAULTS.tasksPerCaller;
    this.#max = limits.max ?? DEFAULTS.tasks;
    this.#keptMs = limits.keptMs ?? DEFAULTS.taskKeptMs;
  }

  /** Tasks kept (running or finished). */
  get size(): number {
    return this.#byId.size;
  }

  /**
   * Whether the server was seen to run `tools/call` as tasks (a session of it declared so): until
   * then no task can have been made, and `tasks/*` are what they were to a server without tasks.
   */
  get offered(): boolean {
    return this.#offered;
  }

  /** The server declared task-run `tools/call` (to a session of the wrap's). */
  offer(): void {
    this.#offered = true;
  }

  /** Runs a call as a task: answers with the task, or the refusal of a limit, or what the server answered that is no task. */
  async start(start: TaskStart): Promise<Answer> {
    const refusal = this.#admit(start.principal);
    if (refusal) return limitAnswer(refusal, start.request.id);
    let created: RpcOutcome;
    const deadline = scope([], start.timeoutMs);
    try {
      created = await start.create({ signal: deadline.signal });
    } finally {
      deadline.dispose();
    }
    if ('error' in created || !isRecord(created.result['task'])) {
      this.#done(start.principal);
      return start.finish(created);
    }
    const read = readLegacyTask(created.result['task']);
    if (!read.ok) {
      this.#done(start.principal);
      return errorAnswer(start.request.id, read.error);
    }
    const task = new ToolTask(start.principal, start.session, created.result['task'], start.serverInfo, () => this.#done(start.principal));
    this.#byId.set(task.id, task);
    const ttl = read.value.ttl;
    task.expireIn(Math.min(ttl ?? this.#keptMs, this.#keptMs), () => this.#forget(task));
    return { message: resultResponse(start.request.id, task.created), status: 200 };
  }

  /** Serves `tasks/get`, `tasks/update` and `tasks/cancel`: another caller's task is as unknown as one that never was. */
  async serve(request: JsonRpcRequest, principal: string, timeoutMs: number): Promise<Answer> {
    const params = request.params ?? {};
    const id = params['taskId'];
    const task = typeof id === 'string' ? this.#byId.get(id) : undefined;
    if (!task || task.principal !== principal) return errorAnswer(request.id, invalidParams(`Task not found: ${String(id)}`));
    if (request.method === 'tasks/update') {
      const responses = params['inputResponses'];
      if (!isRecord(responses)) return errorAnswer(request.id, invalidParams('tasks/update needs inputResponses'));
      const refused = task.update(responses);
      return refused ? errorAnswer(request.id, refused) : { message: resultResponse(request.id, { resultType: 'complete' }), status: 200 };
    }
    if (request.method === 'tasks/cancel') {
      await task.cancel();
      return { message: resultResponse(request.id, { resultType: 'complete' }), status: 200 };
    }
    const detail = await task.detail(timeoutMs);
    if (!detail.ok) return errorAnswer(request.id, detail.error);
    return { message: resultResponse(request.id, { resultType: 'complete', ...detail.value }), status: 200 };
  }

  /** Lets go of every task (the wrap closes). */
  closeAll(): void {
    for (const task of this.#byId.values()) task.dispose();
    this.#byId.clear();
    this.#running.clear();
  }

  /** Counts a task about to be created, or says which limit refuses it. */
  #admit(principal: string): LimitRefusal | undefined {
    const running = this.#running.get(principal) ?? 0;
    if (running >= this.#perPrincipal)
      return limitRefusal('tasks-per-caller', this.#perPrincipal, `this caller has ${this.#perPrincipal} tasks running`);
    if (this.#byId.size >= this.#max) {
      const oldestFinished = [...this.#byId.values()].find((t) => t.finished);
      if (!oldestFinished) return limitRefusal('tasks', this.#max, `${this.#max} tasks are running`);
      this.#forget(oldestFinished);
    }
    this.#running.set(principal, running + 1);
    return undefined;
  }

  /** A caller's task stopped running (ended, forgotten running, or never created). */
  #done(principal: string): void {
    const left = (this.#running.get(principal) ?? 1) - 1;
    if (left > 0) this.#running.set(principal, left);
    else this.#running.delete(principal);
  }

  #forget(task: ToolTask): void {
    if (!this.#byId.delete(task.id)) return;
    if (!task.finished) this.#done(task.principal);
    task.dispose();
  }
}

/**
 * A call to a tool the server runs only as a task, for a caller without the tasks extension: the
 * task is created (`create`, with `params.task`) and followed to its end with `tasks/result`, whose
 * answer is the call's; the server's pushes for the task are the call's own (MRTR rounds), and a
 * call cancelled cancels the task.
 */
export function runToEnd(
  session: UpstreamSession,
  create: (hooks: CallHooks) => Promise<RpcOutcome>,
): (hooks: CallHooks) => Promise<RpcOutcome> {
  return async (hooks) => {
    let cancelled = hooks.signal?.aborted ?? false;
    let taskId: string | undefined;
    let current: (() => void) | undefined;
    const cancelTask = (): void => {
      cancelled = true;
      current?.();
      if (taskId !== undefined) void session.call('tasks/cancel', { taskId }, { pushable: false });
    };
    hooks.signal?.addEventListener('abort', cancelTask, { once: true });
    hooks.onCancel?.(cancelTask);
    const through: CallHooks = {
      pushable: true,
      onCancel: (cancel) => {
        current = cancel;
        if (cancelled) cancel();
      },
      ...(hooks.onProgress ? { onProgress: (params: JsonObject) => hooks.onProgress!(params) } : {}),
      ...(hooks.onLog ? { onLog: (params: JsonObject) => hooks.onLog!(params) } : {}),
      ...(hooks.onPush ? { onPush: (push: JsonRpcRequest, before?: boolean) => hooks.onPush!(push, before) } : {}),
      ...(hooks.onPushCancelled ? { onPushCancelled: (id: string | number) => hooks.onPushCancelled!(id) } : {}),
    };
    try {
      const created = await create(through);
      if ('error' in created || !isRecord(created.result['task'])) return created;
      const task = readLegacyTask(created.result['task']);
      if (!task.ok) return { error: task.error };
      taskId = task.value.taskId;
      if (cancelled) {
        cancelTask();
        return { error: { code: ErrorCode.InternalError, message: 'Request cancelled' } };
      }
      const outcome = await session.call('tasks/result', { taskId }, through);
      return 'result' in outcome ? { result: unmarked(outcome.result) } : outcome;
    } finally {
      hooks.signal?.removeEventListener('abort', cancelTask);
    }
  };
}
