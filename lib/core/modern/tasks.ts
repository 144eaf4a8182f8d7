/**
 * The modern tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a flattened task with
 * `ttlMs`/`pollIntervalMs`, returned as `resultType: "task"`.
 */
import * as v from 'valibot';
import { TASK_STATUSES } from '../legacy/tasks.ts';

export const ModernTaskSchema = v.looseObject({
  taskId: v.string(),
  status: v.picklist(TASK_STATUSES),
  statusMessage: v.optional(v.string()),
  createdAt: v.string(),
  lastUpdatedAt: v.string(),
  ttlMs: v.nullable(v.number()),
  pollIntervalMs: v.optional(v.number()),
});
export type ModernTask = v.InferOutput<typeof ModernTaskSchema>;

export const ModernCreateTaskResultSchema = v.looseObject({ ...ModernTaskSchema.entries, resultType: v.literal('task') });
