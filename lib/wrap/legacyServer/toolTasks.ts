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
import { resultResponse, type JsonRpcRequest } from '../../core/jsonrpc.ts';
import { isRecord, type Implementation } from '../../core/primitives.ts';
import { readLegacyTask } from '../../core/translate/tasks.ts';
import { errorAnswer, type Answer } from '../../fronts/served.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { limitAnswer, limitRefusal, type LimitRefusal } from '../../util/limits.ts';
import { scope } from '../../util/signals.ts';
import { ToolTask } from './upstreamTask.ts';

/** The tasks a wrap keeps: live ones per caller and tasks in all (finished ones are forgotten first). */
export interface TaskLimits {
  /** Tasks one caller may have running at once (default 16): beyond, a new one is refused (`-32005`, 429). */
  readonly perPrincipal?: number;
  /** Tasks kept in all, running or finished and not yet expired (default 1024): beyond, the oldest finished is forgotten, or a new one refused (503). */
  readonly max?: number;
  /** The longest a task is kept, whatever ttl its server gave it (default one hour). */
  readonly keptMs?: number;
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
  readonly #newId: () => string;
  readonly #perPrincipal: number;
  readonly #max: number;
  readonly #keptMs: number;
  readonly #byId = new Map<string, ToolTask>();
  /** Running (or being created) tasks per caller. */
  readonly #running = new Map<string, number>();
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
    const task = new ToolTask(this.#newId(), start.principal, start.session, created.result['task'], start.serverInfo, () =>
      this.#done(start.principal),
    );
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
