/**
 * Legacy notifications and the subscription requests: logs (session-wide level), progress,
 * cancellation (`requestId` optional), list changes and resource updates pushed without opt-in,
 * `resources/subscribe|unsubscribe`.
 */
import * as v from 'valibot';
import { LoggingLevelSchema, ProgressTokenSchema } from '../primitives.ts';

const Id = v.union([v.string(), v.number()]);
const Meta = v.optional(v.record(v.string(), v.unknown()));

export const LogMessageParamsSchema = v.looseObject({
  level: LoggingLevelSchema,
  logger: v.optional(v.string()),
  data: v.unknown(),
  _meta: Meta,
});
export const ProgressParamsSchema = v.looseObject({
  progressToken: ProgressTokenSchema,
  progress: v.number(),
  total: v.optional(v.number()),
  message: v.optional(v.string()),
  _meta: Meta,
});
export type ProgressParams = v.InferOutput<typeof ProgressParamsSchema>;
export const LegacyCancelledParamsSchema = v.looseObject({ requestId: v.optional(Id), reason: v.optional(v.string()), _meta: Meta });
export const ResourceUpdatedParamsSchema = v.looseObject({ uri: v.string(), _meta: Meta });
export const SubscribeParamsSchema = v.looseObject({ uri: v.string(), _meta: Meta });

/** Legacy notifications that announce a change without any opt-in. */
export const LIST_CHANGED_NOTIFICATIONS = [
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
] as const;
