/**
 * Legacy core tasks ⇄ the tasks extension (translation table rows 25, 26, 28): `CreateTaskResult
 * {task}` ⇄ `resultType: "task"` with a flattened task, `ttl`/`pollInterval` ⇄ `ttlMs`/`pollIntervalMs`,
 * and `Tool.execution.taskSupport`, which has no modern place.
 */
import * as v from 'valibot';
import { internalError } from '../errors.ts';
import { describe } from '../jsonrpc.ts';
import { LegacyCreateTaskResultSchema, LegacyTaskSchema, type LegacyTask } from '../legacy/tasks.ts';
import { ModernTaskSchema, type ModernTask } from '../modern/tasks.ts';
import { isRecord, omitKeys, type Implementation, type JsonObject } from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';
import { stampServerInfo } from './meta.ts';

/** A legacy task → the extension's task (field renames only). */
export function taskToModern(task: LegacyTask | JsonObject): ModernTask {
  const out = omitKeys(task, ['ttl', 'pollInterval']);
  out['ttlMs'] = task['ttl'] ?? null;
  if (task['pollInterval'] !== undefined) out['pollIntervalMs'] = task['pollInterval'];
  return out as ModernTask;
}

/** The extension's task → a legacy task. */
export function taskToLegacy(task: ModernTask | JsonObject): LegacyTask {
  const out = omitKeys(task, ['ttlMs', 'pollIntervalMs', 'resultType', '_meta']);
  out['ttl'] = task['ttlMs'] ?? null;
  if (task['pollIntervalMs'] !== undefined) out['pollInterval'] = task['pollIntervalMs'];
  return out as LegacyTask;
}

/** Legacy `CreateTaskResult { task }` → `{ resultType: "task", …task }`. */
export function createTaskResultToModern(result: JsonObject, options: { serverInfo?: Implementation } = {}): Outcome<JsonObject> {
  const parsed = v.safeParse(LegacyCreateTaskResultSchema, result);
  if (!parsed.success) return fail(internalError(`upstream task result: ${describe(parsed.issues)}`));
  const out: JsonObject = { resultType: 'task', ...taskToModern(result['task'] as JsonObject) };
  const meta = stampServerInfo(result['_meta'], options.serverInfo);
  if (meta) out['_meta'] = meta;
  return ok(out);
}

/** `{ resultType: "task", …task }` → legacy `CreateTaskResult { task }`. */
export function createTaskResultToLegacy(result: JsonObject): Outcome<JsonObject> {
  if (result['resultType'] !== 'task') return fail(internalError('not a task result'));
  const parsed = v.safeParse(ModernTaskSchema, result);
  if (!parsed.success) return fail(internalError(`upstream task result: ${describe(parsed.issues)}`));
  return ok({ task: taskToLegacy(result) });
}

/** A legacy tool definition → modern: `execution.taskSupport` has no modern place and is removed. */
export function toolToModern(tool: JsonObject): JsonObject {
  const execution = tool['execution'];
  if (!isRecord(execution) || !('taskSupport' in execution)) return tool;
  const rest = omitKeys(execution, ['taskSupport']);
  const out = omitKeys(tool, ['execution']);
  if (Object.keys(rest).length > 0) out['execution'] = rest;
  return out;
}

/** Reads a legacy task (for status mapping by the tasks layer). */
export function readLegacyTask(value: unknown): Outcome<LegacyTask> {
  const parsed = v.safeParse(LegacyTaskSchema, value);
  return parsed.success ? ok(parsed.output) : fail(internalError(`task: ${describe(parsed.issues)}`));
}
