/**
 * `mcp-dual-era/client` (Node): reach any MCP server from code written for the modern wire.
 * `wrapModernClient` probes the server (stdio or HTTP) and translates when it is legacy; `probe`
 * gives the era verdict on its own; `inspectServer` says what a server is and who can use it (what
 * `mcp-dual-era probe` prints). Every export is listed by name; the legacy-client wrap, the error
 * class and the revisions are in `mcp-dual-era`.
 */
export { wrapModernClient, type ModernClientTransport, type WrapModernClientOptions } from './wrap/modernClient/wrapModernClient.ts';
export { SignInProvider, type SignInProviderOptions } from './auth/signInProvider.ts';
export { checkAuthorizationUrl, MAX_AUTHORIZATION_URL_LENGTH } from './auth/authorizationUrl.ts';
export { defaultOAuthDir } from './auth/oauthStore.ts';
export { createProbeEvents, probe } from './probe/probe.ts';
export type { EraPin, HttpTarget, ProbeEvents, ProbeOptions, ProbeResult, ProbeTarget, VerdictSource } from './probe/probeTypes.ts';
export { inspectServer, type InspectOptions, type Reach, type ServerKind, type ServerReport } from './probe/inspect.ts';
export { VerdictCache, type Verdict } from './probe/verdictCache.ts';
export { ModernHttpClientTransport, type ModernHttpClientOptions } from './transport/modernHttpClient.ts';
export { LegacyHttpClientTransport, type LegacyHttpClientOptions } from './transport/legacyHttpClient.ts';
export { StdioChildTransport, type StdioChildOptions } from './transport/stdioChild.ts';
export type { MessageExtra, Transport } from './transport/transport.ts';
