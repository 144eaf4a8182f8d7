/**
 * Tools the legacy server runs as tasks (2025-11-25 core tasks), served to modern callers: the
 * table of the wrap's tasks (`ToolTasks`). For a caller that declares the tasks extension, a call
 * becomes a task of the wrap's own id (`start`), followed upstream by a `ToolTask`
 * (`upstreamTask.ts`); `tasks/get`, `tasks/update` and `tasks/cancel` are served from here. A task
 * is its creator's alone, and is kept until it ends and is fetched, or its ttl runs out. The table
 * is bounded: running tasks per caller, and tasks in all.
 * Which calls run as tasks, and a call run as a task to its end for a caller without the
 * extension, are `taskCalls.ts`'s; the field mapping is the core's.
 */
import { randomUUID } from 'node:crypto';
import { invalidParams } from '../../core/errors.ts';
import { resultResponse, type JsonRpcNotification, type JsonRpcRequest } from '../../core/jsonrpc.ts';
import { isRecord, type Implementation, type JsonObject } from '../../core/primitives.ts';
import { readLegacyTask } from '../../core/translate/tasks.ts';
import { errorAnswer, type Answer } from '../../fronts/served.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { limitAnswer, limitRefusal, type LimitRefusal } from '../../util/limits.ts';
import { ToolTask } from './upstreamTask.ts';

/**
 * The tasks a wrap keeps: live ones per caller and tasks in all (finished ones are forgotten first);
 * and what a caller without the tasks extension gets from a tool the server runs only as a task.
 */
export interface TaskLimits {
  /** Tasks one caller may have running at once (default 16): beyond, a new one is refused (`-32005`, 429). */
  readonly perPrincipal?: number;
  /** Tasks kept in all, running or finished and not yet expired (default 1024): beyond, the oldest finished is forgotten, or a new one refused (503). */
  readonly max?: number;
  /** The longest a task is kept, whatever ttl its server gave it (default one hour). */
  readonly keptMs?: number;
  /**
   * How long a draining wrap (`drain()`, a fleet replica told SIGTERM) waits for its tasks to end and
   * their ends to be read, serving their `tasks/*` meanwhile (default 30 s); a task still running
   * then is lost to its caller (on a fleet, told so by the other replicas).
   */
  readonly drainMs?: number;
  /**
   * A call to a tool the server runs only as a task (`required`) from a caller that does not declare
   * the tasks extension: `'run'` (default) runs the task to its end and answers the call with its
   * result, what the task asks being MRTR rounds of the call (such a caller cannot poll a task);
   * `'refuse'` answers `-32021` naming the extension (`data.requiredCapabilities`), the extension's
   * strict reading, which its conformance scenario checks.
   */
  readonly withoutExtension?: 'run' | 'refuse';
}

/** Where a task the server created for a call is the caller's: the call, its caller, its session. */
export interface TaskOrigin {
  readonly request: JsonRpcRequest;
  readonly principal: string;
  readonly session: UpstreamSession;
  readonly serverInfo: Implementation | undefined;
}

/**
 * Who hears of a task's changes (`notifications/tasks`): the caller's listens that name it
 * (`subscriptions/listen` with `taskIds`).
 */
export interface TaskWatch {
  /** Whether a listen of `principal` names the task `taskId`. */
  watches(principal: string, taskId: string): boolean;
  /** Delivers a task's `notifications/tasks` to the listens of `principal` that name it. */
  deliver(principal: string, notification: JsonRpcNotification): void;
}

/** The tasks of the wrap's callers, by the ids the callers know them by. */
export class ToolTasks {
  readonly #newId: () => string;
  readonly #perPrincipal: number;
  readonly #max: number;
  readonly #keptMs: number;
  readonly #refusesWithoutExtension: boolean;
  readonly #byId = new Map<string, ToolTask>();
  /** Running (or being created) tasks per caller. */
  readonly #running = new Map<string, number>();
  #watch: TaskWatch | undefined;
  #detailMs: number = DEFAULTS.requestTimeoutMs;
  #offered = false;

  /**
   * `newId` makes the ids callers know tasks by (default a random UUID; on a fleet, one that names
   * this replica, so that another forwards a task's requests here).
   */
  constructor(limits: TaskLimits = {}, newId: () => string = randomUUID) {
    this.#newId = newId;
    this.#perPrincipal = limits.perPrincipal ?? DEFAULTS.tasksPerCaller;
    this.#max = limits.max ?? DEFAULTS.tasks;
    this.#keptMs = limits.keptMs ?? DEFAULTS.taskKeptMs;
    this.#refusesWithoutExtension = limits.withoutExtension === 'refuse';
  }

  /** A caller without the extension is refused a `required` tool (`-32021`) rather than served its result (`TaskLimits.withoutExtension`). */
  get refusesWithoutExtension(): boolean {
    return this.#refusesWithoutExtension;
  }

  /** Tasks kept (running or finished). */
  get size(): number {
    return this.#byId.size;
  }

  /** Tasks whose callers are still owed something: running, or ended with their end not read yet. */
  get unsettled(): number {
    let n = 0;
    for (const task of this.#byId.values()) if (!task.settled) n++;
    return n;
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

  /**
   * Tells `watch` of each change of a task it watches, as the task's detail (what `tasks/get`
   * answers), each detail once; `detailMs` bounds the reading of one.
   */
  watchWith(watch: TaskWatch, detailMs: number): void {
    this.#watch = watch;
    this.#detailMs = detailMs;
  }

  /** Whether `taskId` is a task of `principal`'s kept here. */
  owns(principal: string, taskId: string): boolean {
    return this.#byId.get(taskId)?.principal === principal;
  }

  /**
   * Tells the listens watching task `taskId` (if `principal`'s) what it is now, even when told
   * already: a listen that was just granted it learns what changed before it opened.
   */
  retell(principal: string, taskId: string): void {
    const task = this.#byId.get(taskId);
    if (task?.principal !== principal) return;
    task.told.text = '';
    void this.#tell(taskId);
  }

  /** The server told a task's status on `session` (`notifications/tasks/status`, its `params`). */
  heard(session: UpstreamSession, params: JsonObject | undefined): void {
    const upstreamId = params?.['taskId'];
    if (typeof upstreamId !== 'string') return;
    for (const task of this.#byId.values()) if (task.upstreamId === upstreamId && task.runsOn(session)) task.heard();
  }

  /** The refusal a new task of `principal` would get now, if any (nothing is counted). */
  refusal(principal: string): LimitRefusal | undefined {
    if ((this.#running.get(principal) ?? 0) >= this.#perPrincipal)
      return limitRefusal('tasks-per-caller', this.#perPrincipal, `this caller has ${this.#perPrincipal} tasks running`);
    return undefined;
  }

  /**
   * Makes the task the server created for a call (its `CreateTaskResult`, `created`) the caller's,
   * and answers the call with it: the extension's task under an id of the wrap's. A task past a
   * bound is cancelled upstream and the call refused.
   */
  adopt(created: JsonObject, origin: TaskOrigin): Answer {
    const read = readLegacyTask(created['task']);
    if (!read.ok) return errorAnswer(origin.request.id, read.error);
    const refusal = this.#admit(origin.principal);
    if (refusal) {
      void origin.session.call('tasks/cancel', { taskId: read.value.taskId }, { pushable: false }).catch(() => undefined);
      return limitAnswer(refusal, origin.request.id);
    }
    const id = this.#newId();
    const task = new ToolTask(id, origin.principal, origin.session, created['task'] as JsonObject, origin.serverInfo, {
      ended: () => this.#done(origin.principal),
      changed: () => void this.#tell(id),
    });
    this.#byId.set(task.id, task);
    const ttl = read.value.ttl;
    task.expireIn(Math.min(ttl ?? this.#keptMs, this.#keptMs), () => this.#forget(task));
    return { message: resultResponse(origin.request.id, task.created), status: 200 };
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

  /**
   * Tells the listens watching task `id` what it is now, when that differs from what they were
   * told last. Changes that come while its detail is read are told after, as one.
   */
  async #tell(id: string): Promise<void> {
    const task = this.#byId.get(id);
    const watch = this.#watch;
    if (!task || !watch?.watches(task.principal, id)) return;
    const told = task.told;
    if (told.reading) {
      told.again = true;
      return;
    }
    told.reading = true;
    try {
      do {
        told.again = false;
        const detail = await task.detail(this.#detailMs).catch(() => undefined);
        if (!detail?.ok || !this.#byId.has(id)) return;
        const text = JSON.stringify(detail.value);
        if (text === told.text) continue;
        told.text = text;
        watch.deliver(task.principal, { jsonrpc: '2.0', method: 'notifications/tasks', params: detail.value });
      } while (told.again);
    } finally {
      told.reading = false;
    }
  }

  /** Counts a task about to be created, or says which limit refuses it. */
  #admit(principal: string): LimitRefusal | undefined {
    const refused = this.refusal(principal);
    if (refused) return refused;
    if (this.#byId.size >= this.#max) {
      const oldestFinished = [...this.#byId.values()].find((t) => t.finished);
      if (!oldestFinished) return limitRefusal('tasks', this.#max, `${this.#max} tasks are running`);
      this.#forget(oldestFinished);
    }
    this.#running.set(principal, (this.#running.get(principal) ?? 0) + 1);
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
