/**
 * `wrapLegacyClient(upstream)`: the transport a legacy MCP client (an SDK v1 `Client`, a desktop
 * host) uses to reach a modern-only server. The upstream is a Streamable HTTP URL, a pipe (an
 * in-process server's end of a memory pair, or a `StdioChildTransport` from `mcp-dual-era/server`
 * for a spawned process), or a ready `ModernUpstream`. Runtime-neutral: spawning lives elsewhere.
 */
import { ModernHttpUpstream, type ModernHttpUpstreamOptions } from '../../transport/modernHttpUpstream.ts';
import { ModernPipeUpstream, type ModernUpstream } from '../../transport/modernUpstream.ts';
import type { Transport } from '../../transport/transport.ts';
import { LegacyClientBridge, type LegacyClientBridgeOptions } from './legacyClientBridge.ts';

/** Where the modern server is: an HTTP endpoint, a pipe to it, or a ready upstream. */
export type ModernServerTarget = string | URL | ModernHttpUpstreamOptions | Transport | ModernUpstream;

function isUpstream(target: object): target is ModernUpstream {
  return 'legacyPipe' in target && 'request' in target;
}

function isTransport(target: object): target is Transport {
  return 'send' in target && 'start' in target && 'close' in target;
}

/** The upstream for a target (a pipe is owned by the upstream made for it). */
export function modernUpstream(target: ModernServerTarget): ModernUpstream {
  if (typeof target === 'string' || target instanceof URL) return new ModernHttpUpstream({ url: target });
  if (isUpstream(target)) return target;
  if (isTransport(target)) return new ModernPipeUpstream(target);
  return new ModernHttpUpstream(target);
}

/**
 * A transport for a legacy client that talks to a modern server: hand it to the client's
 * `connect()`. Closing the transport closes the upstream it made (a `ModernUpstream` passed in is
 * the caller's to close).
 */
export function wrapLegacyClient(upstream: ModernServerTarget, options: LegacyClientBridgeOptions = {}): LegacyClientBridge {
  const owns = !(typeof upstream === 'object' && !(upstream instanceof URL) && isUpstream(upstream));
  return new LegacyClientBridge(modernUpstream(upstream), { ...options, ownsUpstream: owns });
}
