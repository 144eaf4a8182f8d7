/**
 * Modern subscriptions and notifications: `subscriptions/listen` with its filter, the
 * acknowledgement, the graceful listen result, and the cancellation notification (`requestId`
 * required in 2026-07-28).
 */
import * as v from 'valibot';
import { notArray } from '../primitives.ts';

const Id = v.union([v.string(), v.number()]);
const Meta = v.optional(v.record(v.string(), v.unknown()));

/** Validates the filter of a `subscriptions/listen` request. */
export const SubscriptionFilterSchema = notArray(
  v.looseObject({
    toolsListChanged: v.optional(v.boolean()),
    promptsListChanged: v.optional(v.boolean()),
    resourcesListChanged: v.optional(v.boolean()),
    resourceSubscriptions: v.optional(v.array(v.string())),
    taskIds: v.optional(v.array(v.string())),
  }),
);
/** What a `subscriptions/listen` stream carries: list changes and the resources subscribed to. */
export type SubscriptionFilter = v.InferOutput<typeof SubscriptionFilterSchema>;

export const ListenParamsSchema = v.looseObject({ notifications: SubscriptionFilterSchema, _meta: v.record(v.string(), v.unknown()) });
export const AcknowledgedParamsSchema = v.looseObject({ notifications: SubscriptionFilterSchema, _meta: Meta });
export const ModernCancelledParamsSchema = v.looseObject({ requestId: Id, reason: v.optional(v.string()), _meta: Meta });
