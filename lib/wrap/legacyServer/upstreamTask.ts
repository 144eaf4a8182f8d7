/**
 * One task a modern caller runs on the legacy server, as it lives upstream (`ToolTask`): the blocking
 * `tasks/result` kept open from the start (the server's pushes for the task arrive on it and become
 * the task's `inputRequests`, answered by `tasks/update` once each, at most 256 over its life), the
 * upstream `tasks/get` that details it (with its payload once it is terminal), the upstream
 * `tasks/cancel`. It holds its session open until it ends. The table of tasks is `toolTasks.ts`.
 */
import { ErrorCode, internalError, invalidParams, type WireError } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import { isInputMethod, type InputMethod } from '../../core/legacy/inputs.ts';
import type { InputRequest } from '../../core/modern/inputs.ts';
import { omitKeys, type Implementation, type JsonObject } from '../../core/primitives.ts';
import { errorToModern } from '../../core/translate/errors.ts';
import { inputKeyOf, inputResponseToResult, pushToInputRequest } from '../../core/translate/inputRequests.ts';
import { readLegacyTask, taskToModern } from '../../core/translate/tasks.ts';
import { fail, ok, type Outcome } from '../../core/outcome.ts';
import type { RpcOutcome } from '../../session/callHooks.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { scope } from '../../util/signals.ts';
import { payloadOf } from './taskResults.ts';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Inputs one task may ask over its life (each key once): past them, its pushes are refused. */
const MAX_INPUTS = 256;

/** A push of the task waiting for its answer through `tasks/update`. */
interface Asked {
  readonly method: InputMethod;
  readonly request: InputRequest;
  readonly answer: (outcome: RpcOutcome) => void;
}

/** What the listens watching a task were told of it lately: its detail's text, and whether another change came while it was read. */
export interface Told {
  text: string;
  reading: boolean;
  again: boolean;
}

/** One task a modern caller runs on the legacy server. */
export class ToolTask {
  /** The id the caller knows it by (the server's own stays upstream). */
  readonly id: string;
  readonly principal: string;
  /** What its watchers were told of it lately (kept by the table of tasks, which tells them). */
  readonly told: Told = { text: '', reading: false, again: false };
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
  #settled = false;
  /** Told once, when the task ends. */
  readonly #ended: () => void;
  /** Told each time the task may have changed (a question asked or answered, a status heard, its payload come, its end). */
  readonly #changed: () => void;

  constructor(
    id: string,
    principal: string,
    session: UpstreamSession,
    task: JsonObject,
    serverInfo: Implementation | undefined,
    told: { readonly ended: () => void; readonly changed: () => void },
  ) {
    this.id = id;
    this.principal = principal;
    this.#ended = told.ended;
    this.#changed = told.changed;
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
    void this.#payload.then(
      () => this.#changed(),
      () => undefined,
    );
  }

  /** The task's id on its server. */
  get upstreamId(): string {
    return this.#upstreamId;
  }

  /** Whether the task runs on `session`. */
  runsOn(session: UpstreamSession): boolean {
    return this.#session === session;
  }

  /** The server told the task's status (`notifications/tasks/status`). */
  heard(): void {
    if (!this.#final) this.#changed();
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
    const asked = new Promise<RpcOutcome>((answer) => this.#asked.set(key, { method, request: input.value, answer }));
    this.#changed();
    return asked;
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
    if (answers.length > 0) this.#changed();
    return undefined;
  }

  /** Whether the task ended and its end was read (by a `tasks/get`, or told to a listen): nothing more is owed its caller. */
  get settled(): boolean {
    return this.#settled;
  }

  /** The detailed task now: asked of the server, with its payload once it ended (which settles it). */
  async detail(timeoutMs: number): Promise<Outcome<JsonObject>> {
    const detail = await this.#detail(timeoutMs);
    if (detail.ok && detail.value === this.#final) this.#settled = true;
    return detail;
  }

  async #detail(timeoutMs: number): Promise<Outcome<JsonObject>> {
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
    this.#changed();
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
