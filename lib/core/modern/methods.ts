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

const REGISTRY = {
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
} as const satisfies Record<string, ModernMethodInfo>;

/** Every client→server method of the modern era, by name. */
export const MODERN_CLIENT_REQUESTS: Readonly<Record<string, ModernMethodInfo>> = REGISTRY;

type Registry = typeof REGISTRY;
/** The methods the registry marks with `flag`. */
type MarkedWith<F extends 'mrtr' | 'cacheable'> = { [K in keyof Registry]: Registry[K][F] extends true ? K : never }[keyof Registry];

function markedWith<F extends 'mrtr' | 'cacheable'>(flag: F): readonly MarkedWith<F>[] {
  return (Object.keys(REGISTRY) as Array<keyof Registry>).filter((m) => REGISTRY[m][flag]) as MarkedWith<F>[];
}

/** A method whose result may be `input_required` (and whose params may carry `inputResponses`). */
export type MrtrMethod = MarkedWith<'mrtr'>;
/** The methods whose results may be `input_required`: the registry's, in its order. */
export const MRTR_METHODS: readonly MrtrMethod[] = markedWith('mrtr');

/** Whether `method` may be answered with `input_required`. */
export function isMrtrMethod(method: unknown): method is MrtrMethod {
  return typeof method === 'string' && modernMethod(method)?.mrtr === true;
}

/** Whether `method` is one of the tasks extension's requests about a task (`tasks/get`, `tasks/update`, `tasks/cancel`). */
export function isTaskMethod(method: string): boolean {
  return modernMethod(method)?.nameParam === 'taskId';
}

/** A method whose complete results carry `ttlMs` and `cacheScope`. */
export type CacheableMethod = MarkedWith<'cacheable'>;
/** Methods whose complete results must carry `ttlMs` and `cacheScope`: the registry's, in its order. */
export const CACHEABLE_METHODS: readonly CacheableMethod[] = markedWith('cacheable');

/** Whether results of `method` carry caching hints. */
export function isCacheableMethod(method: unknown): method is CacheableMethod {
  return typeof method === 'string' && modernMethod(method)?.cacheable === true;
}

/** What the registry says of `method`; `undefined` for a method it does not know. */
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
