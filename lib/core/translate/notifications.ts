/**
 * Notifications both ways (translation table rows 11, 12, 16, 17, 19, 20): logs filtered by the
 * request's level, progress (the `message` member is newer than 2024-11-05), cancellation
 * (`requestId` required in 2026-07-28), and the legacy-only notifications a modern peer never sees.
 */
import * as v from 'valibot';
import { invalidParams } from '../errors.ts';
import { describe, type JsonRpcNotification } from '../jsonrpc.ts';
import { LegacyCancelledParamsSchema, LogMessageParamsSchema, ProgressParamsSchema } from '../legacy/notifications.ts';
import { ModernCancelledParamsSchema } from '../modern/notifications.ts';
import type { LegacyVersion } from '../era.ts';
import { isRecord, levelRank, omitKeys, type LoggingLevel } from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';

/** True when a log at `level` may be sent to a request that asked for `threshold` (none asked → never). */
export function logAllowed(level: LoggingLevel, threshold: LoggingLevel | undefined): boolean {
  return threshold !== undefined && levelRank(level) >= levelRank(threshold);
}

/**
 * A legacy `notifications/message` → what a modern request with log level `threshold` may receive:
 * the same notification, or `undefined` when it is below the level or the request asked for none.
 */
export function logToModern(message: JsonRpcNotification, threshold: LoggingLevel | undefined): Outcome<JsonRpcNotification | undefined> {
  const parsed = v.safeParse(LogMessageParamsSchema, message.params);
  if (!parsed.success) return fail(invalidParams(`notifications/message: ${describe(parsed.issues)}`));
  return ok(logAllowed(parsed.output.level, threshold) ? message : undefined);
}

/** A modern request-scoped `notifications/message` → legacy (unchanged, checked). */
export function logToLegacy(message: JsonRpcNotification): Outcome<JsonRpcNotification> {
  const parsed = v.safeParse(LogMessageParamsSchema, message.params);
  return parsed.success ? ok(message) : fail(invalidParams(`notifications/message: ${describe(parsed.issues)}`));
}

/** `notifications/progress` → modern (unchanged, checked; the token is mapped by the session layer). */
export function progressToModern(progress: JsonRpcNotification): Outcome<JsonRpcNotification> {
  const parsed = v.safeParse(ProgressParamsSchema, progress.params);
  return parsed.success ? ok(progress) : fail(invalidParams(`notifications/progress: ${describe(parsed.issues)}`));
}

/** `notifications/progress` → legacy; a 2024-11-05 peer gets no `message` (it did not exist yet). */
export function progressToLegacy(
  progress: JsonRpcNotification,
  options: { legacyVersion?: LegacyVersion } = {},
): Outcome<JsonRpcNotification> {
  const parsed = v.safeParse(ProgressParamsSchema, progress.params);
  if (!parsed.success) return fail(invalidParams(`notifications/progress: ${describe(parsed.issues)}`));
  if (options.legacyVersion === '2024-11-05' && isRecord(progress.params) && 'message' in progress.params) {
    return ok({ jsonrpc: '2.0', method: progress.method, params: omitKeys(progress.params, ['message']) });
  }
  return ok(progress);
}

/** A legacy cancellation → modern; fails without `requestId`, which 2026-07-28 requires. */
export function cancelToModern(cancel: JsonRpcNotification): Outcome<JsonRpcNotification> {
  const parsed = v.safeParse(ModernCancelledParamsSchema, cancel.params);
  return parsed.success ? ok(cancel) : fail(invalidParams(`notifications/cancelled: ${describe(parsed.issues)}`));
}

/** A modern cancellation → legacy (unchanged, checked). */
export function cancelToLegacy(cancel: JsonRpcNotification): Outcome<JsonRpcNotification> {
  const parsed = v.safeParse(LegacyCancelledParamsSchema, cancel.params);
  return parsed.success ? ok(cancel) : fail(invalidParams(`notifications/cancelled: ${describe(parsed.issues)}`));
}

/**
 * Notifications with no modern counterpart, which an adapter consumes instead of forwarding:
 * `notifications/initialized` (the adapter sends its own), `notifications/roots/list_changed` (roots
 * travel per request), `notifications/elicitation/complete` (the retry carries completion).
 */
export function isLegacyOnlyNotification(method: string): boolean {
  return (
    method === 'notifications/initialized' ||
    method === 'notifications/roots/list_changed' ||
    method === 'notifications/elicitation/complete' ||
    method === 'notifications/tasks/status'
  );
}
