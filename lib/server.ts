/**
 * `mcp-dual-era/server` (Node): serve an unmodified legacy MCP server to modern and legacy
 * clients alike, over Streamable HTTP and stdio, with its pushes turned into MRTR rounds
 * (`wrapLegacyServer`); serve a modern-only server to legacy clients (`wrapModernServer`); the
 * backends, the serve helpers, the requestState keyring and the options they take. Every export
 * is listed by name; the error class and the revisions are in `mcp-dual-era`. The seams the wraps
 * are built on (the session pool, the MRTR broker, the front's contract, the transports) are for
 * embedders, in `mcp-dual-era/server/advanced`.
 */
export {
  wrapLegacyServer,
  type LegacyServerWrap,
  type WrapEvents,
  type WrapLegacyServerOptions,
  type WrapStats,
} from './wrap/legacyServer/wrapLegacyServer.ts';
export type { HttpFrontOptions } from './fronts/httpRouter.ts';
export type { EdgeLimits, OriginPolicy } from './transport/httpEdge.ts';
export type { LegacySessionLimits } from './fronts/legacySessionTable.ts';
export type { TaskLimits } from './wrap/legacyServer/toolTasks.ts';
export type { SessionKey } from './session/sessionKey.ts';
export type { CacheDefaults, CachePolicy } from './core/translate/context.ts';
export { serveStdio, type RunningStdioFront, type StdioFrontOptions } from './fronts/stdioFront.ts';
export type { MrtrOptions } from './wrap/mrtr/mrtrOptions.ts';
export {
  httpBackend,
  inProcessBackend,
  stdioBackend,
  type Backend,
  type ConnectableServer,
  type HttpBackendOptions,
  type StdioBackendOptions,
} from './session/backend.ts';
export { Keyring, type StateKey } from './state/keyring.ts';
export {
  serveNodeHttp,
  toNodeListener,
  type FetchHandler,
  type HttpHandler,
  type NodeHttpOptions,
  type RunningHttpServer,
} from './transport/nodeHttp.ts';
export { StdioChildTransport, type StdioChildOptions } from './transport/stdioChild.ts';
export type { ServeMetrics } from './observe/serveMetrics.ts';
export type { AccessEntry } from './observe/requestTelemetry.ts';
export {
  wrapModernServer,
  type ModernBackend,
  type ModernServerWrap,
  type WrapModernServerOptions,
} from './wrap/modernServer/wrapModernServer.ts';
