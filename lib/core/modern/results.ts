/**
 * Modern results: every result carries `resultType`; the cacheable ones also `ttlMs` and
 * `cacheScope`. The per-method bodies are the legacy ones plus these members.
 */
import * as v from 'valibot';
import { CacheScopeSchema } from './lifecycle.ts';

/** Result types of the core protocol; the tasks extension adds `task`. */
export const CORE_RESULT_TYPES = ['complete', 'input_required'] as const;

export const CacheFieldsSchema = v.object({ ttlMs: v.pipe(v.number(), v.integer(), v.minValue(0)), cacheScope: CacheScopeSchema });

export const ResultTypeSchema = v.looseObject({ resultType: v.string() });
