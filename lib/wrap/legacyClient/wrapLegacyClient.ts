/**
 * `wrapLegacyClient(upstream)`: the transport a legacy MCP client (an SDK v1 `Client`, a desktop
 * host) uses to reach a modern-only server. The upstream is a Streamable HTTP URL, a pipe (an
 * in-process server's end of a memory pair, or a `StdioChildTransport` from `mcp-dual-era/server`
 * for a spawned process), or a ready `ModernUpstream`. Runtime-neutral: spawning lives elsewhere.
 * With an OAuth provider, every HTTP request to the server goes through `authorizedFetch`.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { authorizedFetch } from '../../auth/authorizedFetch.ts';
import { AdapterError } from '../../core/errors.ts';
import { ModernHttpUpstream, type ModernHttpUpstreamOptions } from '../../transport/modernHttpUpstream.ts';
import { ModernPipeUpstream, type ModernUpstream } from '../../transport/modernUpstream.ts';
import type { Transport } from '../../transport/transport.ts';
import { LegacyClientBridge, type LegacyClientBridgeOptions } from './legacyClientBridge.ts';

/** Where the modern server is: an HTTP endpoint, a pipe to it, or a ready upstream. */
export type ModernServerTarget = string | URL | ModernHttpUpstreamOptions | Transport | ForeignTransport | ModernUpstream;

/**
 * A transport of the SDKs' own (the v1 SDK's `StdioClientTransport`, `StreamableHTTPClientTransport`
 * and their kin), taken as it is with no cast: its messages are JSON-RPC, as ours are; only their
 * typings differ.
 */
export interface ForeignTransport {
  start(): Promise<void>;
  send(message: never, options?: never): Promise<void>;
  close(): Promise<void>;
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
}

function isUpstream(target: object): target is ModernUpstream {
  return 'legacyPipe' in target && 'request' in target;
}

function isTransport(target: object): target is Transport | ForeignTransport {
  return 'send' in target && 'start' in target && 'close' in target;
}

/** The upstream for a target (a pipe is owned by the upstream made for it). */
export function modernUpstream(target: ModernServerTarget): ModernUpstream {
  if (typeof target === 'string' || target instanceof URL) return new ModernHttpUpstream({ url: target });
  if (isUpstream(target)) return target;
  // A foreign transport's messages are JSON-RPC as ours are: only its typings differ.
  if (isTransport(target)) return new ModernPipeUpstream(target as Transport);
  return new ModernHttpUpstream(target);
}

/** Options of {@link wrapLegacyClient}: the bridge's, and how to authorize to an HTTP server. */
export interface WrapLegacyClientOptions extends LegacyClientBridgeOptions {
  /**
   * An OAuth client provider (SDK v1 `OAuthClientProvider`, e.g. `SignInProvider`) for a server
   * that wants OAuth: every request to it (discover, calls, a relayed legacy session) goes through
   * `authorizedFetch(authProvider, url, { fetch })`, which sends the token, refreshes it, and on a
   * 401 signs in (waiting for it when the provider can, else failing with the SDK's
   * `UnauthorizedError`) and sends the request again. HTTP targets only (a URL or
   * `ModernHttpUpstreamOptions`); given with a pipe or a ready upstream it throws.
   */
  readonly authProvider?: OAuthClientProvider;
}

/** The HTTP target with its fetch authorized by `provider`. */
function authorizedTarget(target: ModernServerTarget, provider: OAuthClientProvider): ModernHttpUpstreamOptions {
  if (typeof target === 'string' || target instanceof URL) return { url: target, fetch: authorizedFetch(provider, target) };
  if (isUpstream(target) || isTransport(target))
    throw new AdapterError(
      'config',
      'authProvider needs an HTTP server (a URL or ModernHttpUpstreamOptions), not a pipe or a ready upstream',
    );
  return { ...target, fetch: authorizedFetch(provider, target.url, target.fetch ? { fetch: target.fetch } : {}) };
}

/**
 * A transport for a legacy client that talks to a modern server: hand it to the client's
 * `connect()`. Closing the transport closes the upstream it made (a `ModernUpstream` passed in is
 * the caller's to close).
 */
export function wrapLegacyClient(upstream: ModernServerTarget, options: WrapLegacyClientOptions = {}): LegacyClientBridge {
  const { authProvider, ...bridge } = options;
  const owns = !(typeof upstream === 'object' && !(upstream instanceof URL) && isUpstream(upstream));
  const target = authProvider ? authorizedTarget(upstream, authProvider) : upstream;
  return new LegacyClientBridge(modernUpstream(target), { ...bridge, ownsUpstream: owns });
}
