/**
 * Capability maps both ways (translation table rows 27–29): legacy `roots.listChanged` ⇄ modern
 * `roots: {}`, legacy `tasks` ⇄ the tasks extension (the server's own declaration carried beside
 * it, so it comes back whole), `extensions` and unknown keys passed through.
 */
import { isRecord, omitKeys, type JsonObject } from '../primitives.ts';
import type { LegacyClientCapabilities, LegacyServerCapabilities } from '../legacy/capabilities.ts';
import { TASKS_EXTENSION, type ModernClientCapabilities, type ModernServerCapabilities } from '../modern/capabilities.ts';

/**
 * Where a modern server capability set made from a legacy one carries the legacy server's own
 * `tasks` declaration: `tasks.list` (and `tasks.cancel` without task-run tools) has no place in the
 * tasks extension, and a legacy client reached through two adapters should see what the server said.
 */
export const LEGACY_TASKS_KEY = 'mcp-dual-era/legacy-tasks';

const TASK_KEYS = [TASKS_EXTENSION, LEGACY_TASKS_KEY];

function withoutTasksExtension(extensions: unknown): JsonObject | undefined {
  if (!isRecord(extensions)) return undefined;
  if (!(TASKS_EXTENSION in extensions) && !(LEGACY_TASKS_KEY in extensions)) return extensions;
  const rest = omitKeys(extensions, TASK_KEYS);
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function withTasksExtension(extensions: unknown): JsonObject {
  return { ...(isRecord(extensions) ? extensions : {}), [TASKS_EXTENSION]: {} };
}

/**
 * Legacy client capabilities (from `initialize`) → modern per-request capabilities.
 * `roots.listChanged` has no modern meaning; legacy `tasks` becomes the tasks extension
 * (client-hosted task details are dropped).
 */
export function clientCapabilitiesToModern(caps: LegacyClientCapabilities | JsonObject): ModernClientCapabilities {
  const out: JsonObject = omitKeys(caps, ['roots', 'tasks']);
  if (isRecord(caps['roots'])) out['roots'] = {};
  if (isRecord(caps['tasks'])) out['extensions'] = withTasksExtension(caps['extensions']);
  return out as ModernClientCapabilities;
}

/** How {@link clientCapabilitiesToLegacy} declares `roots` upstream. */
export interface RootsDeclaration {
  /**
   * Declare `roots.listChanged`. Some legacy servers (fastmcp) ask for `roots/list` only when the
   * client declares it; the declaration allows the notification, it does not oblige the client to send it.
   */
  readonly rootsListChanged?: boolean;
  /** The adapter has roots of its own to answer with: declare `roots` even when the client did not. */
  readonly ownRoots?: boolean;
}

/**
 * Modern per-request capabilities → legacy `initialize` capabilities. The tasks extension is not
 * offered upstream: a legacy server would answer with client-hosted task requests that cannot
 * travel over MRTR.
 */
export function clientCapabilitiesToLegacy(
  caps: ModernClientCapabilities | JsonObject,
  options: RootsDeclaration = {},
): LegacyClientCapabilities {
  const out: JsonObject = omitKeys(caps, ['roots', 'extensions', 'tasks']);
  if (isRecord(caps['roots']) || options.ownRoots) out['roots'] = options.rootsListChanged ? { listChanged: true } : {};
  const extensions = withoutTasksExtension(caps['extensions']);
  if (extensions) out['extensions'] = extensions;
  return out as LegacyClientCapabilities;
}

/**
 * Legacy server capabilities → modern: `tasks` → the tasks extension when the server runs
 * `tools/call` as tasks, and the declaration itself under {@link LEGACY_TASKS_KEY} in `extensions`.
 */
export function serverCapabilitiesToModern(caps: LegacyServerCapabilities | JsonObject): ModernServerCapabilities {
  const out: JsonObject = omitKeys(caps, ['tasks']);
  const tasks = caps['tasks'];
  if (!isRecord(tasks)) return out as ModernServerCapabilities;
  const toolTasks = isRecord(tasks['requests']) && isRecord(tasks['requests']['tools']) && isRecord(tasks['requests']['tools']['call']);
  out['extensions'] = {
    ...(toolTasks ? withTasksExtension(caps['extensions']) : isRecord(caps['extensions']) ? caps['extensions'] : {}),
    [LEGACY_TASKS_KEY]: tasks,
  };
  return out as ModernServerCapabilities;
}

/**
 * Modern server capabilities (from `server/discover`) → legacy (`initialize` result): a legacy
 * server's declaration carried under {@link LEGACY_TASKS_KEY} comes back as it was; the tasks
 * extension alone becomes task-run `tools/call` and `tasks/cancel`.
 */
export function serverCapabilitiesToLegacy(caps: ModernServerCapabilities | JsonObject): LegacyServerCapabilities {
  const out: JsonObject = omitKeys(caps, ['extensions']);
  const ext = caps['extensions'];
  if (isRecord(ext) && isRecord(ext[LEGACY_TASKS_KEY])) out['tasks'] = ext[LEGACY_TASKS_KEY];
  else if (isRecord(ext) && TASKS_EXTENSION in ext) out['tasks'] = { cancel: {}, requests: { tools: { call: {} } } };
  const rest = withoutTasksExtension(ext);
  if (rest) out['extensions'] = rest;
  return out as LegacyServerCapabilities;
}
