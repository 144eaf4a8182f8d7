/**
 * Modern results: every result carries `resultType`; the cacheable ones also `ttlMs` and
 * `cacheScope`. The per-method bodies are the legacy ones plus these members.
 */
import * as v from 'valibot';
import { CacheScopeSchema } from './lifecycle.ts';

/** Result types of the core protocol; the tasks extension adds `task`. */
export const CORE_RESULT_TYPES = ['complete', 'input_required'] as const;

/** Methods whose complete results must carry `ttlMs` and `cacheScope`. */
export const CACHEABLE_METHODS = ['server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read'] as const;
/** A method whose complete results carry `ttlMs` and `cacheScope`. */
export type CacheableMethod = (typeof CACHEABLE_METHODS)[number];

/** Whether results of `method` carry caching hints. */
export function isCacheableMethod(method: unknown): method is CacheableMethod {
  return (CACHEABLE_METHODS as readonly unknown[]).includes(method);
}

export const CacheFieldsSchema = v.object({ ttlMs: v.pipe(v.number(), v.integer(), v.minValue(0)), cacheScope: CacheScopeSchema });

export const ResultTypeSchema = v.looseObject({ resultType: v.string() });
