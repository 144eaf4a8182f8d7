/**
 * A bridged session's legacy core tasks (2025-11-25) served by a modern server's tasks extension:
 * a `tools/call` with `params.task` goes up declaring the extension and its task comes back as
 * `CreateTaskResult` (a server that answers at once gets a task of the adapter's own, already
 * ended, holding the answer); `tasks/get` asks the server; the blocking `tasks/result` polls
 * `tasks/get` at the server's interval until the task ends. A task seen waiting (by either) has its
 * input requests pushed to the client, tagged with `related-task`, and their answers sent with
 * `tasks/update`, each key once. `tasks/cancel` is the server's cancel, then its final state;
 * `tasks/list` is this session's own record; listed tools say they may run as tasks. Status changes
 * seen on the way are told with `notifications/tasks/status`. A task is its session's: any other
 * id is not found. Not the calls' input rounds: inputRounds.ts runs them.
 */
import { ErrorCode, internalError, invalidParams } from '../../core/errors.ts';
import { errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../core/jsonrpc.ts';
import type { LegacyTask } from '../../core/legacy/tasks.ts';
import { declaresTasksExtension } from '../../core/modern/capabilities.ts';
import type { InputRequests } from '../../core/modern/inputs.ts';
import { isRecord, type JsonObject } from '../../core/primitives.ts';
import {
  declareTasksExtension,
  detailedTaskPayload,
  detailedTaskToLegacy,
  isTerminalStatus,
  withRelatedTask,
} from '../../core/translate/detailedTasks.ts';
import { requestToModern } from '../../core/translate/envelope.ts';
import { upstreamErrorToLegacy } from '../../core/translate/errors.ts';
import { resultToLegacy } from '../../core/translate/results.ts';
import type { ModernUpstream } from '../../transport/modernUpstream.ts';
import type { BridgeSession } from './bridgeSession.ts';
import type { Answer, InputRounds, RoundScope } from './inputRounds.ts';

/** The legacy `tasks` capability the adapter serves when the server offers the extension. */
export const BRIDGED_TASKS_CAPABILITY: JsonObject = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** Whether a modern server's capabilities (from `server/discover`) offer the tasks extension. */
export function offersTasks(capabilities: JsonObject): boolean {
  return declaresTasksExtension(capabilities);
}

/**
 * A legacy `tools/list` result with every tool marked `execution.taskSupport: "optional"` (a tool
 * that says otherwise keeps its word): over the extension any call may be made a task, and the
 * adapter answers a task-augmented call of any tool with one. Legacy clients run a tool as a task
 * only when its declaration allows it.
 */
export function withTaskSupport(result: JsonObject): JsonObject {
  if (!Array.isArray(result['tools'])) return result;
  const tools = result['tools'].map((tool: unknown) => {
    if (!isRecord(tool)) return tool;
    const execution = isRecord(tool['execution']) ? tool['execution'] : {};
    return 'taskSupport' in execution ? tool : { ...tool, execution: { ...execution, taskSupport: 'optional' } };
  });
  return { ...result, tools } as JsonObject;
}

/** Most tasks one session keeps a record of; the oldest is forgotten first. */
const MAX_TASKS = 1000;
/** Most input requests one task may have pushed to the client over its life. */
const MAX_TASK_INPUTS = 256;
/** Tasks in one page of `tasks/list`. */
const PAGE_SIZE = 50;
/** Bounds on the wait between two polls of `tasks/get`, whatever the server asks, in ms. */
const MIN_POLL_MS = 10;
const MAX_POLL_MS = 5000;
const DEFAULT_POLL_MS = 500;

interface TaskRecord {
  /** The task as last seen, in its legacy form. */
  task: LegacyTask;
  /** A task of the adapter's own (the server answered without one): its answer. */
  readonly held?: Answer;
  /** The keys of the input requests already pushed to the client. */
  readonly asked: Set<string>;
}

/** What the tasks of a session work with. */
export interface BridgeTasksContext {
  readonly upstream: ModernUpstream;
  readonly session: BridgeSession;
  readonly rounds: InputRounds;
  /** Sends a notification to the legacy client. */
  readonly notify: (notification: { jsonrpc: '2.0'; method: string; params: JsonObject }) => void;
}

/** The legacy tasks of one bridged session. */
export class BridgeTasks {
  readonly #ctx: BridgeTasksContext;
  /**
   * A `Map` for its order (the oldest is forgotten first, and `tasks/list` pages in creation
   * order); records live as long as their tasks, not one call, and are bounded.
   */
  readonly #records = new Map<string, TaskRecord>();
  #seq = 0;

  constructor(ctx: BridgeTasksContext) {
    this.#ctx = ctx;
  }

  /** The legacy methods served here. */
  static serves(method: string): boolean {
    return method === 'tasks/get' || method === 'tasks/result' || method === 'tasks/list' || method === 'tasks/cancel';
  }

  /** Whether `request` is a task-augmented call this session serves as a task. */
  isTaskCall(request: JsonRpcRequest): boolean {
    return request.method === 'tools/call' && isRecord(request.params) && isRecord(request.params['task']);
  }

  /** Whether the server offers the extension (learnt at `initialize`). */
  get offered(): boolean {
    return offersTasks(this.#ctx.session.capabilities);
  }

  /** A task-augmented `tools/call`: its `CreateTaskResult`. */
  async call(request: JsonRpcRequest): Promise<JsonRpcResponse | undefined> {
    const view = this.#ctx.session.view!;
    const ttl = isRecord(request.params) && isRecord(request.params['task']) ? request.params['task']['ttl'] : undefined;
    return this.#ctx.rounds.serve(request, view, {
      finish: (answer) => {
        if ('error' in answer) return answer;
        const result = answer.result;
        if (result['resultType'] === 'task') {
          const task = detailedTaskToLegacy(result);
          if (!task.ok) return { error: task.error };
          this.#remember(task.value.taskId, { task: task.value, asked: new Set() });
          return { result: { task: task.value } };
        }
        // The server alone decides (or the call ended before it could, a tool error); a task-augmented
        // request still gets a task: one already ended, holding the answer.
        const legacy = resultToLegacy('tools/call', result);
        if (!legacy.ok) return { error: legacy.error };
        const now = new Date().toISOString();
        const task: LegacyTask = {
          taskId: `mcp-dual-era-${globalThis.crypto.randomUUID()}`,
          status: legacy.value.result['isError'] === true ? 'failed' : 'completed',
          createdAt: now,
          lastUpdatedAt: now,
          ttl: typeof ttl === 'number' ? ttl : null,
        };
        this.#remember(task.taskId, { task, held: { result: legacy.value.result }, asked: new Set() });
        return { result: { task } };
      },
    });
  }

  /** `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel`. */
  async serve(request: JsonRpcRequest): Promise<JsonRpcResponse | undefined> {
    if (request.method === 'tasks/list') return this.#list(request);
    const taskId = isRecord(request.params) ? request.params['taskId'] : undefined;
    if (typeof taskId !== 'string') return errorResponse(request.id, invalidParams('taskId must be a string'));
    const record = this.#records.get(taskId);
    if (!record) return errorResponse(request.id, invalidParams(`task ${taskId} not found`));
    return this.#ctx.rounds.run(request, async (scope) => {
      switch (request.method) {
        case 'tasks/get':
          return this.#get(taskId, record, scope);
        case 'tasks/result':
          return this.#result(taskId, record, scope);
        default:
          return this.#cancel(taskId, record, scope);
      }
    });
  }

  /**
   * `tasks/get`. A task seen waiting for input has its input requests pushed to the client at once
   * (answered in the background): a client may poll `tasks/get` until the task ends rather than
   * wait in `tasks/result`.
   */
  async #get(taskId: string, record: TaskRecord, scope: RoundScope): Promise<Answer> {
    if (record.held) return { result: record.task };
    const detailed = await this.#detailed(taskId, record, scope);
    if ('error' in detailed) return detailed;
    const inputs = detailed.result['inputRequests'];
    // A failure leaves the task waiting, which the client sees in its next `tasks/get`.
    if (record.task.status === 'input_required' && isRecord(inputs))
      void this.#answerInputs(taskId, record, inputs as InputRequests).catch(() => undefined);
    return { result: record.task };
  }

  /** Polls until the task ends, answering its input requests on the way. */
  async #result(taskId: string, record: TaskRecord, scope: RoundScope): Promise<Answer> {
    if (record.held) return 'result' in record.held ? { result: withRelatedTask(record.held.result, taskId) } : record.held;
    for (;;) {
      const detailed = await this.#detailed(taskId, record, scope);
      if ('error' in detailed) return detailed;
      const status = detailed.result['status'] as string;
      if (isTerminalStatus(status)) return detailedTaskPayload(detailed.result);
      if (status === 'input_required' && isRecord(detailed.result['inputRequests'])) {
        const failure = await this.#answerInputs(taskId, record, detailed.result['inputRequests'] as InputRequests, scope);
        if (failure) return failure;
      }
      const asked = detailed.result['pollIntervalMs'];
      const wait = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, typeof asked === 'number' ? asked : DEFAULT_POLL_MS));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        scope.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      if (scope.signal.aborted) return { error: { code: ErrorCode.InternalError, message: String(scope.signal.reason) } };
    }
  }

  /**
   * Pushes the input requests not asked yet (each once: a key is never pushed again, and at most
   * 256 over the task's life), on behalf of the client's waiting `tasks/result` when there is one,
   * and sends their answers with `tasks/update`.
   */
  async #answerInputs(taskId: string, record: TaskRecord, inputs: InputRequests, scope?: RoundScope): Promise<Answer | undefined> {
    const fresh = Object.fromEntries(Object.entries(inputs).filter(([key]) => !record.asked.has(key)));
    if (Object.keys(fresh).length === 0) return undefined;
    if (record.asked.size + Object.keys(fresh).length > MAX_TASK_INPUTS)
      return { error: internalError(`task ${taskId} asks for more than ${MAX_TASK_INPUTS} inputs; they are not passed to the client`) };
    for (const key of Object.keys(fresh)) record.asked.add(key);
    const responses = scope ? await scope.ask(fresh, taskId) : await this.#ctx.rounds.askForTask(fresh, taskId);
    if (!responses.ok) return { error: { code: ErrorCode.InternalError, message: responses.error } };
    const sent = await this.#upstream('tasks/update', { taskId, inputResponses: responses.value }, scope?.signal);
    return 'error' in sent ? sent : undefined;
  }

  /** `tasks/cancel`: an ended task is `-32602`; else the server's cancel, then the task as it is after it. */
  async #cancel(taskId: string, record: TaskRecord, scope: RoundScope): Promise<Answer> {
    const terminal = { error: invalidParams(`task ${taskId} has already ended (${record.task.status}); it cannot be cancelled`) };
    if (record.held) return terminal;
    const before = await this.#detailed(taskId, record, scope);
    if ('error' in before) return before;
    if (isTerminalStatus(record.task.status)) return terminal;
    const cancelled = await this.#upstream('tasks/cancel', { taskId }, scope.signal);
    if ('error' in cancelled) return cancelled;
    const after = await this.#detailed(taskId, record, scope);
    return 'error' in after ? after : { result: record.task };
  }

  /** `tasks/list` from this session's record, in creation order, a page at a time. */
  #list(request: JsonRpcRequest): JsonRpcResponse {
    const cursor = isRecord(request.params) ? request.params['cursor'] : undefined;
    const start = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(start) || start < 0) return errorResponse(request.id, invalidParams('unknown cursor'));
    const all = [...this.#records.values()];
    const page = all.slice(start, start + PAGE_SIZE).map((r) => r.task);
    const result: JsonObject = { tasks: page as unknown as JsonObject[] };
    if (start + PAGE_SIZE < all.length) result['nextCursor'] = String(start + PAGE_SIZE);
    return { jsonrpc: '2.0', id: request.id, result };
  }

  /** The server's `tasks/get`, the record updated from it (and a status change told to the client). */
  async #detailed(taskId: string, record: TaskRecord, scope: RoundScope): Promise<Answer> {
    const answer = await this.#upstream('tasks/get', { taskId }, scope.signal);
    if ('error' in answer) return answer;
    const task = detailedTaskToLegacy(answer.result);
    if (!task.ok) return { error: task.error };
    const changed = task.value.status !== record.task.status;
    record.task = task.value;
    if (changed) this.#ctx.notify({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task.value });
    return answer;
  }

  /** One request of the extension, stamped with the session and declaring the extension. */
  async #upstream(method: string, params: JsonObject, signal: AbortSignal | undefined): Promise<Answer> {
    const { session, upstream } = this.#ctx;
    const stamped = requestToModern({ jsonrpc: '2.0', id: `mcp-dual-era-task-${++this.#seq}`, method, params }, session.view!, {
      modernVersion: session.modernVersion,
    });
    if (!stamped.ok) return { error: stamped.error };
    const answer = await upstream.request(declareTasksExtension(stamped.value, true), signal ? { signal } : {});
    return 'error' in answer ? upstreamErrorToLegacy(method, answer.error) : { result: answer.result };
  }

  #remember(taskId: string, record: TaskRecord): void {
    this.#records.set(taskId, record);
    for (const oldest of this.#records.keys()) {
      if (this.#records.size <= MAX_TASKS) break;
      this.#records.delete(oldest);
    }
  }
}
