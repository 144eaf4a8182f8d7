/**
 * The era verdicts `probe` has reached, per stdio command line or HTTP endpoint, each kept for a
 * time to live. One cache per process by default; a wrap can be given its own. It stores; it does
 * not probe.
 */
import type { ModernVersion } from '../core/era.ts';
import type { JsonObject } from '../core/primitives.ts';
import type { LegacyHttpMode } from '../transport/legacyHttpClient.ts';

/** What a probe concludes about a server. */
export type Verdict =
  /** A modern server: `version` is the newest modern version both sides speak. */
  | { readonly era: 'modern'; readonly version: ModernVersion; readonly discover?: JsonObject }
  /** A legacy server: `initialize` it. Over HTTP, `http` says which legacy transport answered. */
  | { readonly era: 'legacy'; readonly http?: LegacyHttpMode };

interface Entry {
  readonly verdict: Verdict;
  readonly expires: number;
}

/** Verdicts by target key, with a time to live. */
export class VerdictCache {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** The fresh verdict for `key`, if any (a stale one is dropped). */
  get(key: string): Verdict | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#now() >= entry.expires) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.verdict;
  }

  set(key: string, verdict: Verdict, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.#entries.set(key, { verdict, expires: this.#now() + ttlMs });
  }

  /** Forgets `key` (its verdict proved wrong), or everything. */
  delete(key?: string): void {
    if (key === undefined) this.#entries.clear();
    else this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** The cache `probe` uses unless told otherwise: one per process. */
export const processVerdictCache = new VerdictCache();
