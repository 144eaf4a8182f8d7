/**
 * `serve --limit <name>=<n>`: every limit of the served endpoint by one name, its default and what
 * it bounds, read in one place for `serve` and `serve --modern` and shown by `--help`. Only names
 * and numbers: which option of which wrap each one sets is said where the wrap is built.
 */
import { defaultOpenings } from '../session/gate.ts';
import { DEFAULTS } from '../util/defaults.ts';

/** One settable limit. */
interface LimitSpec {
  readonly default: number;
  readonly min: number;
  readonly what: string;
  /** Applies to `serve --modern` too (the others bound what only a legacy server's wrap has). */
  readonly modern?: boolean;
}

/** Every limit `--limit` sets, by name. */
export const LIMITS = {
  sessions: { default: DEFAULTS.sessions, min: 1, what: 'upstream sessions in all' },
  'sessions-per-caller': { default: DEFAULTS.sessionsPerCaller, min: 1, what: 'upstream sessions one caller may have' },
  'sessions-per-capabilities': {
    default: DEFAULTS.sessionsPerCaller,
    min: 1,
    what: 'upstream sessions one caller may have for one capability set',
  },
  reserve: { default: DEFAULTS.sessionReserve, min: 0, what: 'upstream sessions kept for callers with none busy' },
  'session-wait-ms': {
    default: DEFAULTS.sessionWaitMs,
    min: 0,
    what: 'how long a request waits for an upstream session before it is refused',
  },
  'session-idle-ms': { default: DEFAULTS.sessionIdleMs, min: 1000, what: 'idle time before an upstream session is closed' },
  'sessions-opening': {
    default: defaultOpenings(),
    min: 1,
    what: 'upstream connections opened at once, each booting a server (half the cores; 16 with --upstream)',
  },
  'parked-per-caller': {
    default: DEFAULTS.parkedPerCaller,
    min: 1,
    what: 'calls one caller may have waiting for input (its oldest gives way)',
  },
  'park-timeout-ms': { default: DEFAULTS.parkTimeoutMs, min: 1000, what: 'how long a call waits for its retry before it is released' },
  'listens-per-caller': { default: DEFAULTS.listensPerCaller, min: 1, what: 'subscriptions/listen streams one caller may have open' },
  'tasks-per-caller': { default: DEFAULTS.tasksPerCaller, min: 1, what: 'tasks one caller may have running at once' },
  tasks: { default: DEFAULTS.tasks, min: 1, what: 'tasks kept in all, running or finished (the oldest finished give way)' },
  'task-drain-ms': {
    default: DEFAULTS.taskDrainMs,
    min: 0,
    what: 'how long a draining replica waits for its tasks to end and their ends to be read',
  },
  'request-timeout-ms': { default: DEFAULTS.requestTimeoutMs, min: 1000, what: 'how long one upstream call may take' },
  'legacy-sessions': { default: DEFAULTS.legacySessions, min: 1, what: 'legacy client sessions in all', modern: true },
  'legacy-sessions-per-caller': {
    default: DEFAULTS.legacySessionsPerCaller,
    min: 1,
    what: 'legacy client sessions one caller may have',
    modern: true,
  },
  'legacy-idle-ms': {
    default: DEFAULTS.legacyIdleMs,
    min: 0,
    what: 'idle time before a legacy client session is closed (0: never)',
    modern: true,
  },
  'body-bytes': { default: DEFAULTS.bodyBytes, min: 1, what: 'largest accepted request body', modern: true },
  'message-bytes': { default: DEFAULTS.messageBytes, min: 1024, what: 'largest accepted message from the upstream server', modern: true },
  connections: { default: DEFAULTS.connections, min: 1, what: 'HTTP connections open at once', modern: true },
  'headers-timeout-ms': {
    default: DEFAULTS.headersTimeoutMs,
    min: 1000,
    what: 'how long a client may take to send request headers',
    modern: true,
  },
  'http-request-timeout-ms': {
    default: DEFAULTS.httpRequestTimeoutMs,
    min: 1000,
    what: 'how long a client may take to send a whole request',
    modern: true,
  },
} as const satisfies Record<string, LimitSpec>;

export type LimitKey = keyof typeof LIMITS;

/** The limits as set: every name, with its default where not given. */
export type Limits = { readonly [K in LimitKey]: number };

/** Reads `--limit name=n` values (repeatable); `modern` refuses the names `serve --modern` has no use for. */
export function readLimits(
  list: readonly string[] | undefined,
  options: { modern?: boolean } = {},
): { ok: true; value: Limits; given: ReadonlySet<LimitKey> } | { ok: false; message: string } {
  const value: Record<string, number> = {};
  const given = new Set<LimitKey>();
  for (const [name, spec] of Object.entries(LIMITS)) value[name] = spec.default;
  for (const item of list ?? []) {
    const eq = item.indexOf('=');
    const name = (eq === -1 ? item : item.slice(0, eq)).trim();
    if (!(name in LIMITS)) return { ok: false, message: `--limit: no limit named ${name} (known: ${Object.keys(LIMITS).join(', ')})` };
    const spec: LimitSpec = LIMITS[name as LimitKey];
    if (options.modern && !spec.modern) return { ok: false, message: `--limit ${name} does not apply to serve --modern` };
    const text = eq === -1 ? '' : item.slice(eq + 1).trim();
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < spec.min)
      return { ok: false, message: `--limit ${name} must be a whole number of at least ${spec.min}, not ${text || '(nothing)'}` };
    value[name] = n;
    given.add(name as LimitKey);
  }
  if (value['headers-timeout-ms']! > value['http-request-timeout-ms']!)
    return { ok: false, message: '--limit headers-timeout-ms must not be above http-request-timeout-ms' };
  return { ok: true, value: value as Limits, given };
}

/** The `--help` lines of the limits: name, default, what it bounds. */
export function limitsUsage(): string {
  const width = Math.max(...Object.keys(LIMITS).map((n) => n.length));
  return Object.entries(LIMITS)
    .map(
      ([name, spec]) =>
        `  ${name.padEnd(width)}  ${String(spec.default).padStart(9)}  ${spec.what}${'modern' in spec && spec.modern ? ' (also --modern)' : ''}`,
    )
    .join('\n');
}

/** The Node listener's options from the limits (`serveNodeHttp`). */
export function listenerLimits(limits: Limits): { maxConnections: number; headersTimeoutMs: number; requestTimeoutMs: number } {
  return {
    maxConnections: limits.connections,
    headersTimeoutMs: limits['headers-timeout-ms'],
    requestTimeoutMs: limits['http-request-timeout-ms'],
  };
}
