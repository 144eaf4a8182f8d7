/**
 * `mcp-dual-era/server` (Node): serve an unmodified legacy MCP server to modern and legacy
 * clients alike, over Streamable HTTP and stdio, with its pushes turned into MRTR rounds.
 */
export { wrapLegacyServer, type LegacyServerWrap, type WrapEvents, type WrapLegacyServerOptions } from './wrap/legacyServer/wrapLegacyServer.ts';
export { serveStdio, type RunningStdioFront, type StdioFrontOptions } from './fronts/stdioFront.ts';
export { MrtrBroker, type MrtrOptions } from './wrap/mrtr/suspend.ts';
export type { Answer, InputBroker, ModernContext, PushableCall } from './wrap/legacyServer/modernDispatch.ts';
export { httpBackend, inProcessBackend, stdioBackend, type Backend, type ConnectableServer } from './session/backend.ts';
export { Keyring, type StateKey } from './state/keyring.ts';
export { serveNodeHttp, toNodeListener, type NodeHttpOptions, type RunningHttpServer } from './transport/nodeHttp.ts';
export { createMemoryPair } from './transport/memory.ts';
export { StdioChildTransport, type StdioChildOptions } from './transport/stdioChild.ts';
export { LegacyHttpClientTransport, type LegacyHttpClientOptions } from './transport/legacyHttpClient.ts';
export type { MessageExtra, Transport } from './transport/transport.ts';
export { wrapModernServer, type ModernBackend, type ModernServerWrap, type WrapModernServerOptions } from './wrap/modernServer/wrapModernServer.ts';
