/**
 * Modern lifecycle: the per-request `_meta` envelope that replaces `initialize`, and
 * `server/discover`'s result.
 */
import * as v from 'valibot';
import { MetaKey } from '../era.ts';
import { ImplementationSchema, LoggingLevelSchema, ProgressTokenSchema } from '../primitives.ts';
import { ModernClientCapabilitiesSchema, ModernServerCapabilitiesSchema } from './capabilities.ts';

/** `RequestMetaObject`: the required and optional reserved keys of a modern request's `_meta`. */
export const RequestMetaSchema = v.looseObject({
  [MetaKey.protocolVersion]: v.string(),
  [MetaKey.clientCapabilities]: ModernClientCapabilitiesSchema,
  [MetaKey.clientInfo]: v.optional(ImplementationSchema),
  [MetaKey.logLevel]: v.optional(LoggingLevelSchema),
  progressToken: v.optional(ProgressTokenSchema),
  traceparent: v.optional(v.string()),
  tracestate: v.optional(v.string()),
  baggage: v.optional(v.string()),
});
/** The `_meta` every modern request carries: version, client info and capabilities, log level, trace context. */
export type RequestMeta = v.InferOutput<typeof RequestMetaSchema>;

export const CACHE_SCOPES = ['public', 'private'] as const;
export const CacheScopeSchema = v.picklist(CACHE_SCOPES);
/** Who may reuse a cacheable result: `public` or `private`. */
export type CacheScope = v.InferOutput<typeof CacheScopeSchema>;

export const ResultMetaSchema = v.looseObject({ [MetaKey.serverInfo]: v.optional(ImplementationSchema) });

/** Validates a `server/discover` result. */
export const DiscoverResultSchema = v.looseObject({
  resultType: v.literal('complete'),
  supportedVersions: v.array(v.string()),
  capabilities: ModernServerCapabilitiesSchema,
  instructions: v.optional(v.string()),
  ttlMs: v.pipe(v.number(), v.integer()),
  cacheScope: CacheScopeSchema,
  _meta: v.optional(ResultMetaSchema),
});
/** A `server/discover` result: supported versions, capabilities, server info, instructions. */
export type DiscoverResult = v.InferOutput<typeof DiscoverResultSchema>;
