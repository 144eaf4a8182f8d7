/**
 * The modern method registry: each client→server method of 2026-07-28 (and the tasks extension)
 * with where its `Mcp-Name` comes from, whether it may return `input_required`, and whether its
 * complete result is cacheable.
 */

export interface ModernMethodInfo {
  /** The params member mirrored in the `Mcp-Name` header, if any. */
  readonly nameParam?: 'name' | 'uri' | 'taskId';
  /** May return `input_required` (and accept `inputResponses`/`requestState`). */
  readonly mrtr: boolean;
  /** A complete result carries `ttlMs`/`cacheScope`. */
  readonly cacheable: boolean;
  /** Belongs to an extension rather than the core. */
  readonly extension?: string;
}

export const MODERN_CLIENT_REQUESTS: Readonly<Record<string, ModernMethodInfo>> = {
  'server/discover': { mrtr: false, cacheable: true },
  'tools/list': { mrtr: false, cacheable: true },
  'tools/call': { nameParam: 'name', mrtr: true, cacheable: false },
  'prompts/list': { mrtr: false, cacheable: true },
  'prompts/get': { nameParam: 'name', mrtr: true, cacheable: false },
  'resources/list': { mrtr: false, cacheable: true },
  'resources/templates/list': { mrtr: false, cacheable: true },
  'resources/read': { nameParam: 'uri', mrtr: true, cacheable: true },
  'completion/complete': { mrtr: false, cacheable: false },
  'subscriptions/listen': { mrtr: false, cacheable: false },
  'tasks/get': { nameParam: 'taskId', mrtr: false, cacheable: false, extension: 'io.modelcontextprotocol/tasks' },
  'tasks/update': { nameParam: 'taskId', mrtr: false, cacheable: false, extension: 'io.modelcontextprotocol/tasks' },
  'tasks/cancel': { nameParam: 'taskId', mrtr: false, cacheable: false, extension: 'io.modelcontextprotocol/tasks' },
};

export function modernMethod(method: string): ModernMethodInfo | undefined {
  return Object.hasOwn(MODERN_CLIENT_REQUESTS, method) ? MODERN_CLIENT_REQUESTS[method] : undefined;
}

/** Server→client notifications of the modern era. */
export const MODERN_SERVER_NOTIFICATIONS = [
  'notifications/progress',
  'notifications/message',
  'notifications/subscriptions/acknowledged',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/cancelled',
  'notifications/tasks',
] as const;
