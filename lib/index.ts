/**
 * mcp-dual-era: make the legacy (2024-11-05 … 2025-11-25) and modern (2026-07-28) eras of the
 * Model Context Protocol work together. This entry point is the product for any runtime (nothing
 * here reaches `node:*`): `wrapLegacyClient` and the modern upstreams it reaches, the transport
 * shape, the error class and table, the revisions and the JSON-RPC message types. Node-only pieces
 * are `mcp-dual-era/server` and `mcp-dual-era/client`; the translator is `mcp-dual-era/core`.
 */
export {
  type Era,
  type KnownVersion,
  LATEST_LEGACY_VERSION,
  LATEST_MODERN_VERSION,
  LEGACY_VERSIONS,
  type LegacyVersion,
  MODERN_VERSIONS,
  type ModernVersion,
} from './core/era.ts';
export { AdapterError, type AdapterErrorCode, ErrorCode, type ErrorCodeName, type WireError } from './core/errors.ts';
export type { UpstreamFailure } from './util/upstreamFailure.ts';
export type {
  JsonRpcError,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcResult,
  RequestId,
} from './core/jsonrpc.ts';
export type { Implementation, LoggingLevel } from './core/primitives.ts';
export {
  DiscoverCache,
  LegacyClientBridge,
  type LegacyClientBridgeEvents,
  type LegacyClientBridgeOptions,
} from './wrap/legacyClient/legacyClientBridge.ts';
export {
  type ForeignTransport,
  type ModernServerTarget,
  type WrapLegacyClientOptions,
  wrapLegacyClient,
} from './wrap/legacyClient/wrapLegacyClient.ts';
export {
  authorizedFetch,
  type AuthorizationResponse,
  type AuthorizedFetchOptions,
  type InteractiveOAuthClientProvider,
} from './auth/authorizedFetch.ts';
export { ModernHttpUpstream, type ModernHttpUpstreamOptions } from './transport/modernHttpUpstream.ts';
export { ModernPipeUpstream, type ModernUpstream, type UpstreamCallOptions, UpstreamHttpError } from './transport/modernUpstream.ts';
export { createMemoryPair } from './transport/memory.ts';
export type { MessageExtra, SdkTransport, Transport, TransportMessage } from './transport/transport.ts';
