/**
 * `probe`: which era a server speaks. On stdio it sends `server/discover` first on the process it
 * spawned (and can hand that process over, so nothing is spawned twice); over HTTP it POSTs a
 * modern `server/discover`, then a legacy `initialize` (Streamable HTTP, then HTTP+SSE). Verdicts
 * are cached per command line or endpoint, can be given as a prior or pinned, and every step is
 * reported as an event. It decides; it does not translate.
 */
import { MODERN_VERSIONS } from '../core/era.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { createEmitter, type Emitter } from '../util/events.ts';
import { probeHttp } from './probeHttp.ts';
import { probeStdio } from './probeStdio.ts';
import { isHttpTarget, type ProbeEvents, type ProbeOptions, type ProbeResult, type ProbeTarget, type VerdictSource } from './probeTypes.ts';
import { processVerdictCache, type Verdict } from './verdictCache.ts';

const DEFAULT_TTL_MS = DEFAULTS.verdictTtlMs;

/** The cache key and human-readable name of a target: the command line, or the endpoint without query. */
export function targetKey(target: ProbeTarget): string {
  if (isHttpTarget(target)) {
    const url = new URL(target.url);
    return `http ${url.origin}${url.pathname}`;
  }
  return `stdio ${JSON.stringify([target.command, ...(target.args ?? []), target.cwd ?? ''])}`;
}

export function describeTarget(target: ProbeTarget): string {
  return isHttpTarget(target) ? new URL(target.url).href : [target.command, ...(target.args ?? [])].join(' ');
}

/**
 * Finds out which era a server speaks. stdio: `server/discover` on a spawned process (a
 * DiscoverResult sharing a version → modern; `-32022` naming a shared version → one retry; any other
 * error, an answer to `initialize`, the process exiting, or silence for `timeoutMs` after it has
 * spoken → legacy; a process that has said nothing yet is waited for, up to `startTimeoutMs`, and
 * also sent `initialize`, so a server that ignores `server/discover` is known by its answer). HTTP: see the module header;
 * 401/403, 5xx, redirects and network or TLS errors throw instead of falling back.
 */
export async function probe(target: ProbeTarget, options: ProbeOptions = {}): Promise<ProbeResult> {
  const name = describeTarget(target);
  const key = targetKey(target);
  const events = options.events;
  const cache = options.cache === false ? undefined : (options.cache ?? processVerdictCache);
  const known = (verdict: Verdict, source: VerdictSource): ProbeResult => {
    events?.emit('verdict', { target: name, verdict, source, roundTrips: 0 });
    return { verdict, source, roundTrips: 0 };
  };
  const versions = options.versions ?? MODERN_VERSIONS;
  if (options.pin === 'modern') return known({ era: 'modern', version: versions[0]! }, 'pin');
  if (options.pin === 'legacy') return known({ era: 'legacy' }, 'pin');
  if (!options.force) {
    const cached = cache?.get(key);
    if (cached) return known(cached, 'cache');
    if (options.prior) return known(options.prior, 'prior');
  }
  const found = isHttpTarget(target) ? await probeHttp(target, name, options, versions) : await probeStdio(target, name, options, versions);
  cache?.set(key, found.verdict, options.ttlMs ?? DEFAULT_TTL_MS);
  events?.emit('verdict', { target: name, verdict: found.verdict, source: 'probe', roundTrips: found.roundTrips });
  return found;
}

/** A typed emitter for probe events. */
export function createProbeEvents(): Emitter<ProbeEvents> {
  return createEmitter<ProbeEvents>();
}
