/**
 * What `probe` is asked and answers: the target (a command or an HTTP endpoint), the options, the
 * events it reports, and its result.
 */
import { type ModernVersion } from '../core/era.ts';
import { type Implementation } from '../core/primitives.ts';
import { type Emitter } from '../util/events.ts';
import { StdioChildTransport, type StdioChildOptions } from '../transport/stdioChild.ts';
import { type Verdict, type VerdictCache } from './verdictCache.ts';

/** A server to probe: a command to run over stdio, or an HTTP endpoint. */
export type ProbeTarget = StdioChildOptions | HttpTarget;

/** An MCP endpoint over HTTP. */
export interface HttpTarget {
  readonly url: string | URL;
  /** Extra headers on every request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly fetch?: typeof globalThis.fetch;
}

/** `modern` or `legacy` skips the probe for good; `auto` (default) probes. */
export type EraPin = 'modern' | 'legacy' | 'auto';

/** Where a verdict came from. */
export type VerdictSource = 'probe' | 'cache' | 'prior' | 'pin';

/** The steps of a probe, as events: `probe`, `fallback`, `verdict`, `reprobe`. */
export type ProbeEvents = {
  /** A probe request is about to be sent (`server/discover`, or the legacy `initialize` over HTTP). */
  probe: { target: string; method: string; attempt: number; version: string };
  /** The probe moved on to an older transport or era. */
  fallback: { target: string; from: 'modern' | 'streamable'; to: 'legacy' | 'sse'; reason: string };
  /** The verdict, with how many round trips it cost (`ProbeResult.roundTrips`: 0 when it was known already). */
  verdict: { target: string; verdict: Verdict; source: VerdictSource; roundTrips: number };
  /** A verdict known beforehand proved wrong; the target is probed again. */
  reprobe: { target: string; was: Verdict; reason: string };
  /** The probe is waiting, and for what (a server that has not said a word yet). */
  waiting: { target: string; waitedMs: number; reason: string };
};

/** Options of {@link probe}. */
export interface ProbeOptions {
  /** Skip the probe: `'modern'` or `'legacy'` for good. Default `'auto'`. */
  readonly pin?: EraPin;
  /** A verdict known beforehand (say, from an earlier run): used without probing, and re-probed if it proves wrong. */
  readonly prior?: Verdict;
  /** Where verdicts are kept (default one cache per process); `false` keeps none. */
  readonly cache?: VerdictCache | false;
  /** How long a verdict stays in the cache (default 10 minutes). */
  readonly ttlMs?: number;
  /**
   * How long to wait for an answer to the probe (default 3 s). On stdio, silence from a server that
   * has spoken means legacy; over HTTP it is an error.
   */
  readonly timeoutMs?: number;
  /**
   * stdio: how long a server that has not said a word yet is waited for (default 60 s): it is
   * still starting, which is no era; past this the probe fails (the server did not start).
   */
  readonly startTimeoutMs?: number;
  /** Who is asking, in the probe's `_meta` (default the adapter). */
  readonly clientInfo?: Implementation;
  /** The modern versions to offer, newest preferred (default every modern version this library speaks). */
  readonly versions?: readonly ModernVersion[];
  /** Ignore the cache and probe (the verdict found is cached). */
  readonly force?: boolean;
  readonly events?: Emitter<ProbeEvents>;
  readonly signal?: AbortSignal;
  /** stdio: keep the probed process running and return it (its owner must close it). */
  readonly keepProcess?: boolean;
}

/** The outcome of {@link probe}. */
export interface ProbeResult {
  readonly verdict: Verdict;
  readonly source: VerdictSource;
  /**
   * How many `server/discover` requests the probe sent to learn the era: 1, or 2 after a `-32022`
   * naming a version to ask in; 0 when the verdict was known already (cache, prior, pin). The same
   * on every transport: the `initialize` that follows a legacy verdict is not counted (over stdio it
   * is the caller's, on the probed process; over HTTP the one that tells Streamable HTTP from
   * HTTP+SSE is a `probe` event of its own).
   */
  readonly roundTrips: number;
  /** stdio with `keepProcess`: the running process the probe spoke to, when it is still alive. */
  readonly process?: StdioChildTransport;
}

export function isHttpTarget(target: ProbeTarget): target is HttpTarget {
  return 'url' in target;
}
