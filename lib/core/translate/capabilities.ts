/**
 * Capability maps both ways (translation table rows 27–29): legacy `roots.listChanged` ⇄ modern
 * `roots: {}`, a legacy server's task-run `tools/call` ⇄ the tasks extension, `extensions` and
 * unknown keys passed through. Only what an adapter serves is declared: a legacy client's `tasks`
 * (client-hosted tasks) has no modern place, and the extension maps to no legacy `tasks` here (a
 * legacy client's bridge that emulates `tasks/result` and `tasks/list` over it declares them itself,
 * wrap/legacyClient/handshake.ts).
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

/** Whether a legacy server's `tasks` declaration runs `tools/call` as tasks. */
export function runsToolTasks(caps: LegacyServerCapabilities | JsonObject | undefined): boolean {
  const tasks = caps?.['tasks'];
  return (
    isRecord(tasks) && isRecord(tasks['requests']) && isRecord(tasks['requests']['tools']) && isRecord(tasks['requests']['tools']['call'])
  );
}

/**
 * Legacy client capabilities (from `initialize`) → modern per-request capabilities.
 * `roots.listChanged` has no modern meaning; legacy `tasks` (client-hosted tasks) is dropped: the
 * tasks extension is not declared for a legacy client, which cannot poll an extension task, so a
 * modern server answers its calls without one.
 */
export function clientCapabilitiesToModern(caps: LegacyClientCapabilities | JsonObject): ModernClientCapabilities {
  const out: JsonObject = omitKeys(caps, ['roots', 'tasks']);
  if (isRecord(caps['roots'])) out['roots'] = {};
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
 * Legacy server capabilities → modern: `tasks` becomes the tasks extension when the server runs
 * `tools/call` as tasks (what the wrap serves of it); its other task capabilities (`tasks.list`,
 * client-side task requests) have no modern place.
 */
export function serverCapabilitiesToModern(caps: LegacyServerCapabilities | JsonObject): ModernServerCapabilities {
  const out: JsonObject = omitKeys(caps, ['tasks']);
  if (runsToolTasks(caps)) out['extensions'] = { ...(isRecord(caps['extensions']) ? caps['extensions'] : {}), [TASKS_EXTENSION]: {} };
  return out as ModernServerCapabilities;
}

/**
 * Modern server capabilities (from `server/discover`) → legacy (`initialize` result): the tasks
 * extension is dropped, legacy `tasks` not declared (a legacy client would call `tasks/result` and
 * `tasks/list`, which have no modern form: an adapter that serves them declares them itself);
 * other extensions pass through.
 */
export function serverCapabilitiesToLegacy(caps: ModernServerCapabilities | JsonObject): LegacyServerCapabilities {
  const out: JsonObject = omitKeys(caps, ['extensions']);
  const rest = withoutTasksExtension(caps['extensions']);
  if (rest) out['extensions'] = rest;
  return out as LegacyServerCapabilities;
}
