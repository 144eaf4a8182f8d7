/**
 * Capability maps both ways (translation table rows 27–29): legacy `roots.listChanged` ⇄ modern
 * `roots: {}`, legacy `tasks` ⇄ the tasks extension, `extensions` and unknown keys passed through.
 */
import { isRecord, omitKeys, type JsonObject } from '../primitives.ts';
import type { LegacyClientCapabilities, LegacyServerCapabilities } from '../legacy/capabilities.ts';
import { TASKS_EXTENSION, type ModernClientCapabilities, type ModernServerCapabilities } from '../modern/capabilities.ts';

function withoutTasksExtension(extensions: unknown): JsonObject | undefined {
  if (!isRecord(extensions)) return undefined;
  if (!(TASKS_EXTENSION in extensions)) return extensions;
  const rest = omitKeys(extensions, [TASKS_EXTENSION]);
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
export function clientCapabilitiesToLegacy(caps: ModernClientCapabilities | JsonObject, options: RootsDeclaration = {}): LegacyClientCapabilities {
  const out: JsonObject = omitKeys(caps, ['roots', 'extensions', 'tasks']);
  if (isRecord(caps['roots']) || options.ownRoots) out['roots'] = options.rootsListChanged ? { listChanged: true } : {};
  const extensions = withoutTasksExtension(caps['extensions']);
  if (extensions) out['extensions'] = extensions;
  return out as LegacyClientCapabilities;
}

/** Legacy server capabilities → modern (`tasks` → the tasks extension when the server runs `tools/call` as tasks). */
export function serverCapabilitiesToModern(caps: LegacyServerCapabilities | JsonObject): ModernServerCapabilities {
  const out: JsonObject = omitKeys(caps, ['tasks']);
  const tasks = caps['tasks'];
  const toolTasks = isRecord(tasks) && isRecord(tasks['requests']) && isRecord(tasks['requests']['tools']) && isRecord(tasks['requests']['tools']['call']);
  if (toolTasks) out['extensions'] = withTasksExtension(caps['extensions']);
  return out as ModernServerCapabilities;
}

/** Modern server capabilities (from `server/discover`) → legacy (`initialize` result). */
export function serverCapabilitiesToLegacy(caps: ModernServerCapabilities | JsonObject): LegacyServerCapabilities {
  const out: JsonObject = omitKeys(caps, ['extensions']);
  const ext = caps['extensions'];
  if (isRecord(ext) && TASKS_EXTENSION in ext) out['tasks'] = { cancel: {}, requests: { tools: { call: {} } } };
  const rest = withoutTasksExtension(ext);
  if (rest) out['extensions'] = rest;
  return out as LegacyServerCapabilities;
}
