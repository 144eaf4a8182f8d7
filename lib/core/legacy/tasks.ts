/**
 * Legacy (2025-11-25, experimental core) tasks: the `Task` object with `ttl`/`pollInterval` and
 * `CreateTaskResult { task }`.
 */
import * as v from 'valibot';

export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

export const LegacyTaskSchema = v.looseObject({
  taskId: v.string(),
  status: v.picklist(TASK_STATUSES),
  statusMessage: v.optional(v.string()),
  createdAt: v.string(),
  lastUpdatedAt: v.string(),
  ttl: v.nullable(v.number()),
  pollInterval: v.optional(v.number()),
});
export type LegacyTask = v.InferOutput<typeof LegacyTaskSchema>;

export const LegacyCreateTaskResultSchema = v.looseObject({ task: LegacyTaskSchema, _meta: v.optional(v.record(v.string(), v.unknown())) });
