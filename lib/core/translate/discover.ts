/**
 * `InitializeResult` ⇄ `DiscoverResult` (translation table rows 1, 3, 4, 30): supported versions are
 * modern only in discover and legacy only in `initialize`; server info moves between the top level
 * and result `_meta`; instructions pass through.
 */
import * as v from 'valibot';
import {
  isModernVersion,
  LEGACY_VERSIONS,
  MODERN_VERSIONS,
  MetaKey,
  negotiateLegacyVersion,
  type LegacyVersion,
  type ModernVersion,
} from '../era.ts';
import { ErrorCode, internalError, type WireError } from '../errors.ts';
import { describe } from '../jsonrpc.ts';
import { InitializeResultSchema, type InitializeResult } from '../legacy/lifecycle.ts';
import { DiscoverResultSchema, type DiscoverResult } from '../modern/lifecycle.ts';
import { ImplementationSchema, isRecord, omitKeys, type Implementation, type JsonObject } from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';
import { ADAPTER_INFO, cachePolicyFor, type CacheDefaults } from './context.ts';
import { serverCapabilitiesToLegacy, serverCapabilitiesToModern } from './capabilities.ts';

/**
 * A legacy server's `initialize` result → the `server/discover` result the adapter serves.
 * `supportedVersions` lists the adapter's modern versions, never the upstream's legacy one.
 */
export function initializeResultToDiscover(
  result: JsonObject,
  options: { supportedVersions?: readonly ModernVersion[]; cache?: CacheDefaults } = {},
): Outcome<DiscoverResult> {
  const parsed = v.safeParse(InitializeResultSchema, result);
  if (!parsed.success) return fail(internalError(`upstream initialize result: ${describe(parsed.issues)}`));
  const init = result as InitializeResult;
  const policy = cachePolicyFor('server/discover', options.cache);
  const meta: JsonObject = { ...(isRecord(init._meta) ? init._meta : {}), [MetaKey.serverInfo]: init.serverInfo };
  const out: JsonObject = {
    resultType: 'complete',
    supportedVersions: [...(options.supportedVersions ?? MODERN_VERSIONS)],
    capabilities: serverCapabilitiesToModern(init.capabilities),
    _meta: meta,
    ttlMs: policy.ttlMs,
    cacheScope: policy.cacheScope,
  };
  if (typeof init.instructions === 'string') out['instructions'] = init.instructions;
  return ok(out as DiscoverResult);
}

/**
 * A modern server's `server/discover` result → the `initialize` result the adapter answers a
 * legacy client with: the client's version if supported, else the newest legacy one; server info
 * from result `_meta` (synthesised when missing: legacy requires it).
 */
export function discoverToInitializeResult(
  result: JsonObject,
  options: { requestedVersion?: string; supportedLegacyVersions?: readonly LegacyVersion[]; fallbackServerInfo?: Implementation } = {},
): Outcome<InitializeResult> {
  const parsed = v.safeParse(
    v.looseObject({
      capabilities: DiscoverResultSchema.entries.capabilities,
      instructions: v.optional(v.string()),
      _meta: v.optional(v.record(v.string(), v.unknown())),
    }),
    result,
  );
  if (!parsed.success) return fail(internalError(`upstream discover result: ${describe(parsed.issues)}`));
  const meta = isRecord(result['_meta']) ? result['_meta'] : {};
  const info = meta[MetaKey.serverInfo];
  const serverInfo = v.is(ImplementationSchema, info) ? info : (options.fallbackServerInfo ?? ADAPTER_INFO);
  const out: JsonObject = {
    protocolVersion: negotiateLegacyVersion(options.requestedVersion, options.supportedLegacyVersions),
    capabilities: serverCapabilitiesToLegacy(result['capabilities'] as JsonObject),
    serverInfo,
  };
  if (typeof result['instructions'] === 'string') out['instructions'] = result['instructions'];
  const rest = omitKeys(meta, [MetaKey.serverInfo]);
  if (Object.keys(rest).length > 0) out['_meta'] = rest;
  return ok(out as InitializeResult);
}

/**
 * The error a legacy client gets for its `initialize` when a modern upstream refuses us: no shared
 * version (`-32022`, naming what the server supports), or an HTTP status such as 401/403.
 */
export function refusalToInitializeError(refusal: { error: WireError } | { status: number; detail?: string }): WireError {
  if ('status' in refusal) {
    const why =
      refusal.status === 401
        ? 'requires authorization (HTTP 401)'
        : refusal.status === 403
          ? 'refused access (HTTP 403)'
          : `answered HTTP ${refusal.status}`;
    return {
      code: ErrorCode.InternalError,
      message: `The upstream MCP server ${why}${refusal.detail ? `: ${refusal.detail}` : ''}`,
      data: { httpStatus: refusal.status },
    };
  }
  const error = refusal.error;
  if (error.code === ErrorCode.UnsupportedProtocolVersion) {
    const data = isRecord(error.data) ? error.data : {};
    const supported = Array.isArray(data['supported']) ? data['supported'].map(String) : [];
    const modern = supported.filter((s) => isModernVersion(s));
    return {
      code: ErrorCode.InvalidParams,
      message: `Unsupported protocol version: the upstream MCP server supports ${supported.length > 0 ? supported.join(', ') : 'no version we know'}, and shares no modern version with this adapter${modern.length === 0 && supported.some((s) => (LEGACY_VERSIONS as readonly string[]).includes(s)) ? ' (it offers only legacy versions)' : ''}`,
      data: { supported, requested: data['requested'] ?? null, upstreamCode: error.code },
    };
  }
  return {
    code: ErrorCode.InternalError,
    message: `The upstream MCP server refused the connection: ${error.message}`,
    data: { upstreamCode: error.code },
  };
}
