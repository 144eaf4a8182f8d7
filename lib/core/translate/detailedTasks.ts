/**
 * The tasks extension read by a legacy (2025-11-25) client: the extension's `DetailedTask` (what
 * `tasks/get` answers) → the legacy `Task` (a tool error is legacy `failed`) and → what a legacy
 * `tasks/result` answers (the result tagged with its `related-task`, or the JSON-RPC error); the
 * `_meta` a push made for a task carries; and the extension's declaration in one modern request's
 * `clientCapabilities`. The field renames are tasks.ts; nothing here sends or waits.
 */
import { internalError, type WireError } from '../errors.ts';
import { MetaKey } from '../era.ts';
import type { JsonRpcRequest } from '../jsonrpc.ts';
import { LegacyTaskSchema, type LegacyTask } from '../legacy/tasks.ts';
import { TASKS_EXTENSION } from '../modern/capabilities.ts';
import { fail, ok, type Outcome } from '../outcome.ts';
import { isRecord, omitKeys, type JsonObject } from '../primitives.ts';
import { describe } from '../jsonrpc.ts';
import * as v from 'valibot';
import { resultToLegacy } from './results.ts';

/** The statuses after which a task no longer changes. */
export function isTerminalStatus(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** `_meta` naming the task a message belongs to (`io.modelcontextprotocol/related-task`). */
export function relatedTaskMeta(taskId: string): JsonObject {
  return { [MetaKey.relatedTask]: { taskId } };
}

/**
 * A `DetailedTask` (or the flat task of `resultType: "task"`) → the legacy `Task`: the task's own
 * fields renamed (`ttl`, `pollInterval`), the payload left out, and a completed task whose result
 * is a tool error reported `failed`, as legacy tasks count it.
 */
export function detailedTaskToLegacy(detailed: JsonObject): Outcome<LegacyTask> {
  const out: JsonObject = {
    taskId: detailed['taskId'] as string,
    status: detailed['status'] as string,
    createdAt: detailed['createdAt'] as string,
    lastUpdatedAt: detailed['lastUpdatedAt'] as string,
    ttl: detailed['ttlMs'] ?? null,
  };
  if (typeof detailed['statusMessage'] === 'string') out['statusMessage'] = detailed['statusMessage'];
  if (typeof detailed['pollIntervalMs'] === 'number') out['pollInterval'] = detailed['pollIntervalMs'];
  if (out['status'] === 'completed' && isRecord(detailed['result']) && detailed['result']['isError'] === true) out['status'] = 'failed';
  const parsed = v.safeParse(LegacyTaskSchema, out);
  return parsed.success ? ok(parsed.output) : fail(internalError(`upstream task: ${describe(parsed.issues)}`));
}

/**
 * A terminal `DetailedTask` → the answer of a legacy `tasks/result`: the tool's result in its legacy
 * form with `_meta["io.modelcontextprotocol/related-task"]`, or the task's JSON-RPC error (a
 * cancelled task, which has neither, is an error saying so).
 */
export function detailedTaskPayload(detailed: JsonObject): { result: JsonObject } | { error: WireError } {
  const taskId = String(detailed['taskId']);
  if (detailed['status'] === 'completed' && isRecord(detailed['result'])) {
    const legacy = resultToLegacy('tools/call', omitKeys(detailed['result'], ['resultType']));
    if (!legacy.ok) return { error: legacy.error };
    return { result: withRelatedTask(legacy.value.result, taskId) };
  }
  if (detailed['status'] === 'failed' && isRecord(detailed['error'])) return { error: detailed['error'] as unknown as WireError };
  return { error: internalError(`task ${taskId} ended ${String(detailed['status'])} without a result`) };
}

/** A result tagged with the task it belongs to (its own `_meta` kept). */
export function withRelatedTask(result: JsonObject, taskId: string): JsonObject {
  return { ...result, _meta: { ...(isRecord(result['_meta']) ? result['_meta'] : {}), ...relatedTaskMeta(taskId) } };
}

/**
 * A stamped modern request with the tasks extension declared in (`on`) or taken out of its
 * `clientCapabilities`: the server may answer with a task only when this request declared it.
 */
export function declareTasksExtension(request: JsonRpcRequest, on: boolean): JsonRpcRequest {
  const params = isRecord(request.params) ? request.params : {};
  const meta = isRecord(params['_meta']) ? params['_meta'] : {};
  const declared = meta[MetaKey.clientCapabilities];
  const caps = isRecord(declared) ? declared : {};
  const extensions = isRecord(caps['extensions']) ? caps['extensions'] : {};
  if (on === TASKS_EXTENSION in extensions) return request;
  const nextExtensions = on ? { ...extensions, [TASKS_EXTENSION]: {} } : omitKeys(extensions, [TASKS_EXTENSION]);
  const nextCaps = omitKeys(caps, ['extensions']);
  if (Object.keys(nextExtensions).length > 0) nextCaps['extensions'] = nextExtensions;
  return { ...request, params: { ...params, _meta: { ...meta, [MetaKey.clientCapabilities]: nextCaps } } };
}
