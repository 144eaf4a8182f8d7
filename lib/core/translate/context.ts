/**
 * What the translator needs from outside, passed in rather than reached for: the server identity
 * to stamp, caching policy, versions, and (for the few functions that mint values) an id source.
 * The translator itself has no clock, no randomness and no I/O.
 */
import type { LegacyVersion, ModernVersion } from '../era.ts';
import type { CacheScope } from '../modern/lifecycle.ts';
import type { CacheableMethod } from '../modern/methods.ts';
import type { Implementation } from '../primitives.ts';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.ts';

/** A caching hint for one method's complete results. */
export interface CachePolicy {
  readonly ttlMs: number;
  readonly cacheScope: CacheScope;
}

/** Caching hints per cacheable method, with a fallback. */
export type CacheDefaults = Partial<Record<CacheableMethod, CachePolicy>> & { readonly default?: CachePolicy };

/** The safe default: immediately stale, private to the caller's authorization context. */
export const NO_CACHING: CachePolicy = { ttlMs: 0, cacheScope: 'private' };

/** The policy for a method under the given defaults. */
export function cachePolicyFor(method: CacheableMethod, defaults: CacheDefaults | undefined): CachePolicy {
  return defaults?.[method] ?? defaults?.default ?? NO_CACHING;
}

/** Options shared by translators that produce modern messages. */
export interface ToModernOptions {
  /** Stamped as `_meta["io.modelcontextprotocol/serverInfo"]` on every result. */
  readonly serverInfo?: Implementation | undefined;
  /** Caching hints for cacheable results; default none (`ttlMs: 0`, `private`). */
  readonly cache?: CacheDefaults | undefined;
  /** The modern version this adapter speaks on the modern side. */
  readonly modernVersion?: ModernVersion;
}

/** Options shared by translators that produce legacy messages. */
export interface ToLegacyOptions {
  /** The legacy version negotiated with the legacy peer (shapes that changed between revisions follow it). */
  readonly legacyVersion?: LegacyVersion;
}

/** The identity the adapter uses when a peer gave none and the protocol needs one. */
export const ADAPTER_INFO: Implementation = { name: PACKAGE_NAME, version: PACKAGE_VERSION };
