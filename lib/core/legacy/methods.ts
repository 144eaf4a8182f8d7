/**
 * The legacy method registry: which methods exist in the legacy era, in which direction, and
 * which of them 2026-07-28 removed.
 */

/** Client→server requests of the legacy era. */
export const LEGACY_CLIENT_REQUESTS = [
  'initialize',
  'ping',
  'logging/setLevel',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
] as const;

/** Server→client requests of the legacy era (MRTR replaces the first three; the rest are answered locally). */
export const LEGACY_SERVER_REQUESTS = [
  'elicitation/create',
  'sampling/createMessage',
  'roots/list',
  'ping',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
] as const;

/** Client→server notifications of the legacy era. */
export const LEGACY_CLIENT_NOTIFICATIONS = [
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
] as const;

/** Server→client notifications of the legacy era. */
export const LEGACY_SERVER_NOTIFICATIONS = [
  'notifications/cancelled',
  'notifications/progress',
  'notifications/message',
  'notifications/resources/updated',
  'notifications/resources/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/elicitation/complete',
  'notifications/tasks/status',
] as const;

/** Client→server requests that 2026-07-28 removed: a modern server answers them with -32601 (HTTP 404). */
export const REMOVED_IN_MODERN = [
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/result',
  'tasks/list',
] as const;

export function isRemovedInModern(method: string): boolean {
  return (REMOVED_IN_MODERN as readonly string[]).includes(method);
}
