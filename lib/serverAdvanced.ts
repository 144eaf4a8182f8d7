/**
 * `mcp-dual-era/server/advanced` (Node): the seams `wrapLegacyServer` and `wrapModernServer` are
 * built on, for embedders who replace or observe one of them: the session pool and its upstream
 * sessions, the MRTR broker behind which a legacy server's pushes become rounds (and the contract a
 * broker of one's own keeps), the contract a wrap hands to a front (`Served`, what a request gets,
 * the fleet's forwarding), and what is observed of a request. These follow the wraps' needs: a minor
 * release may change them, which it never does to `mcp-dual-era/server`. The transports are in
 * `mcp-dual-era` (the shape, the in-memory pair) and `mcp-dual-era/client` (the HTTP and stdio ones).
 */
export type { SessionPool } from './session/pool.ts';
export type { AcquireOptions, SessionPoolOptions } from './session/poolOptions.ts';
export type { UpstreamSession } from './session/upstreamSession.ts';
export type { CallHooks, RpcOutcome } from './session/callHooks.ts';
export type { ConnectContext } from './session/backend.ts';
export { MrtrBroker } from './wrap/mrtr/suspend.ts';
export type { InputBroker, PushableCall, RetryCall } from './wrap/mrtr/broker.ts';
export type { Answer, Forwarding, ModernContext, Served, SessionSource } from './fronts/served.ts';
export type { UsedStates } from './state/usedStates.ts';
export type { RequestTelemetry } from './observe/requestTelemetry.ts';
