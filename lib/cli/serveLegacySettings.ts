/**
 * What `serve` reads for a legacy upstream: the context every mode is given, the legacy mode's own
 * settings and its fleet's, the upstream's backend, and the wrap's options made from them.
 */
import type { CacheDefaults } from '../core/translate/context.ts';
import { httpBackend, stdioBackend, type Backend } from '../session/backend.ts';
import { startAhead } from '../transport/spawnChild.ts';
import type { WrapLegacyServerOptions } from '../wrap/legacyServer/wrapLegacyServer.ts';
import type { AccessEntry } from '../observe/requestTelemetry.ts';
import { readHttpUrl, readRoots, serverProcess } from './options.ts';
import type { Fleet } from '../fleet/fleet.ts';
import { fleetNameProblem } from '../fleet/fleetKeys.ts';
import type { ServeValues } from './serveUsage.ts';
import type { LimitKey, Limits } from './limits.ts';
import type { Log } from './log.ts';
import { readStateKey, type StateKey } from './stateKey.ts';
import { tracingFetch, upstreamTrace } from './trace.ts';

/** What a program that runs `serve` itself (`npm start`) is told. */
export interface ServeHooks {
  /** The HTTP endpoint is listening (and its upstream answered) at `url`. */
  readonly onListening?: (url: string) => void;
}

/** What `serve.ts` has read for every mode. */
export interface ServeContext {
  readonly command: readonly string[];
  readonly values: ServeValues;
  readonly env: Readonly<Record<string, string>>;
  readonly limits: Limits;
  /** The limits given on the command line (the others are the defaults). */
  readonly limitsGiven: ReadonlySet<LimitKey>;
  readonly port: number;
  /** What the command says (`--quiet`, `--log-format`), its `--verbose` trace, where the upstream's stderr goes. */
  readonly log: Log;
  readonly usage: (message: string) => number;
  readonly hooks: ServeHooks;
}

/** The options only the legacy mode reads. */
export interface LegacySettings {
  readonly replay: boolean;
  readonly cache: CacheDefaults | undefined;
  readonly spares: number;
  readonly roots: ReadonlyArray<{ uri: string; name?: string }>;
  /** `--tasks-without-extension`: what a modern client without the tasks extension gets from a task-only tool. */
  readonly withoutExtension: 'run' | 'refuse';
  readonly key: StateKey;
  /** `--fleet`: the fleet's Redis, its name, and the address to advertise (default the listen address). */
  readonly fleet?: { readonly redis: string; readonly name?: string; readonly advertise?: string };
}

export function readSettings(values: ServeValues): { ok: true; value: LegacySettings } | { ok: false; message: string } {
  if (values.mrtr !== undefined && values.mrtr !== 'suspend' && values.mrtr !== 'replay')
    return { ok: false, message: `--mrtr is suspend or replay, not ${values.mrtr}` };
  const withoutExtension = values['tasks-without-extension'] ?? 'run';
  if (withoutExtension !== 'run' && withoutExtension !== 'refuse')
    return { ok: false, message: `--tasks-without-extension is run or refuse, not ${withoutExtension}` };
  const ttl = values['cache-ttl'] === undefined ? 0 : Number(values['cache-ttl']);
  if (!Number.isInteger(ttl) || ttl < 0)
    return { ok: false, message: `--cache-ttl must be a whole number of milliseconds, not ${values['cache-ttl']}` };
  const scope = values['cache-scope'] ?? 'private';
  if (scope !== 'private' && scope !== 'public') return { ok: false, message: `--cache-scope is private or public, not ${scope}` };
  const spares = values.spares === undefined ? (values.stdio ? 0 : 1) : Number(values.spares);
  if (!Number.isInteger(spares) || spares < 0 || spares > 16)
    return { ok: false, message: `--spares must be a whole number from 0 to 16, not ${values.spares}` };
  const roots = readRoots(values.roots);
  if (!roots.ok) return roots;
  const key = readStateKey(values);
  if (!key.ok) return key;
  const fleet = readFleet(values);
  if (!fleet.ok) return fleet;
  const cache: CacheDefaults | undefined =
    ttl > 0 || scope !== 'private' ? { default: { ttlMs: ttl, cacheScope: scope as 'private' | 'public' } } : undefined;
  return {
    ok: true,
    value: {
      replay: values.mrtr === 'replay',
      cache,
      spares,
      roots: roots.value,
      withoutExtension,
      key: key.value,
      ...(fleet.value ? { fleet: fleet.value } : {}),
    },
  };
}

export function readFleet(values: ServeValues): { ok: true; value: LegacySettings['fleet'] } | { ok: false; message: string } {
  if (values.fleet === undefined) {
    if (values.advertise !== undefined || values['fleet-name'] !== undefined)
      return { ok: false, message: '--advertise and --fleet-name go with --fleet' };
    return { ok: true, value: undefined };
  }
  if (values.stdio) return { ok: false, message: '--fleet serves over HTTP: it does not go with --stdio' };
  let url: URL;
  try {
    url = new URL(values.fleet);
  } catch {
    return { ok: false, message: `--fleet takes a Redis URL (redis://host:port), not ${values.fleet}` };
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    return { ok: false, message: `--fleet takes a redis:// or rediss:// URL, not ${values.fleet}` };
  const nameProblem = values['fleet-name'] === undefined ? undefined : fleetNameProblem(values['fleet-name']);
  if (nameProblem) return { ok: false, message: `--fleet-name: ${nameProblem}` };
  if (values.advertise !== undefined) {
    const advertised = readHttpUrl(values.advertise, '--advertise');
    if (!advertised.ok) return advertised;
  }
  return {
    ok: true,
    value: {
      redis: values.fleet,
      ...(values['fleet-name'] !== undefined ? { name: values['fleet-name'] } : {}),
      ...(values.advertise !== undefined ? { advertise: values.advertise.replace(/\/+$/, '') } : {}),
    },
  };
}

/** The legacy server: over stdio it boots now, while the rest loads, and the first session takes the process over. */
export function legacyBackend(context: ServeContext, spares: number): Backend {
  const { values, limits } = context;
  const trace = context.log.trace;
  if (values.upstream) {
    return httpBackend({
      url: values.upstream,
      maxMessageBytes: limits['message-bytes'],
      ...(values['pass-authorization'] ? { passAuthorization: true } : {}),
      ...(trace ? { fetch: tracingFetch('us', 'server', trace) } : {}),
    });
  }
  const child = {
    ...serverProcess(context.command, context.env, values.cwd, values),
    maxMessageBytes: limits['message-bytes'],
    stderr: context.log.serverStderr,
    shutdownGraceMs: 500,
    ...(trace ? { trace: upstreamTrace(trace) } : {}),
  };
  // The command line (lib/cli/main.ts) started it already when serving on stdio.
  if (values.stdio) startAhead(child);
  return stdioBackend(child, { spares });
}

export function wrapOptions(
  backend: Backend,
  settings: LegacySettings,
  context: ServeContext,
  fleet: Fleet | undefined,
): WrapLegacyServerOptions {
  const { values, limits } = context;
  return {
    upstream: backend,
    mrtr: {
      keyring: settings.key.keyring,
      replay: settings.replay,
      maxParkedPerPrincipal: limits['parked-per-caller'],
      parkTimeoutMs: limits['park-timeout-ms'],
    },
    ...(fleet ? { fleet } : {}),
    roots: settings.roots,
    ...(settings.cache ? { cache: settings.cache } : {}),
    sessions: {
      max: limits.sessions,
      perPrincipal: limits['sessions-per-caller'],
      perKey: limits['sessions-per-capabilities'],
      reserve: limits.reserve,
      waitMs: limits['session-wait-ms'],
      idleMs: limits['session-idle-ms'],
      // Unless given, the wrap's own: half the cores for a server it boots, more for one reached over HTTP.
      ...(context.limitsGiven.has('sessions-opening') ? { opening: limits['sessions-opening'] } : {}),
    },
    listens: { perPrincipal: limits['listens-per-caller'] },
    tasks: {
      perPrincipal: limits['tasks-per-caller'],
      max: limits.tasks,
      drainMs: limits['task-drain-ms'],
      withoutExtension: settings.withoutExtension,
    },
    ...(values['share-sessions'] ? { shareSessions: true } : {}),
    legacySessions: {
      max: limits['legacy-sessions'],
      perPrincipal: limits['legacy-sessions-per-caller'],
      idleMs: limits['legacy-idle-ms'],
    },
    requestTimeoutMs: limits['request-timeout-ms'],
    health: true,
    ...(values.metrics ? { metrics: true } : {}),
    // With JSON logs, an access line per request served (one JSON object, as every line).
    ...(values['log-format'] === 'json' ? { accessLog: (e: AccessEntry) => context.log.info('request', accessFields(e)) } : {}),
    http: {
      ...(values.path ? { path: values.path } : {}),
      maxBodyBytes: limits['body-bytes'],
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
      ...(values['public-url'] !== undefined ? { publicUrl: values['public-url'] } : {}),
    },
  };
}

/** An access entry as the JSON log's fields (snake case, as the log's `trace_id`). */
function accessFields(e: AccessEntry): Record<string, unknown> {
  return {
    method: e.method,
    ...(e.name !== undefined ? { name: e.name } : {}),
    era: e.era,
    outcome: e.outcome,
    ...(e.code !== undefined ? { code: e.code } : {}),
    duration_ms: e.durationMs,
    ...(e.traceId ? { trace_id: e.traceId } : {}),
    principal: e.principal,
  };
}
