/**
 * The requests a probe sends: `server/discover` in a modern version, and the legacy `initialize`
 * a server silent on `server/discover` is also sent; each with an id of its own.
 */
import { LATEST_LEGACY_VERSION, MetaKey } from '../core/era.ts';
import { type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { ADAPTER_INFO } from '../core/translate/context.ts';

import type { ProbeOptions } from './probeTypes.ts';

let probeIds = 0;

/** An id no other probe request of this process has. */
export function probeId(): string {
  return `mcp-dual-era-probe-${++probeIds}`;
}

export function discoverRequest(id: RequestId, version: string, options: ProbeOptions): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'server/discover',
    params: {
      _meta: {
        [MetaKey.protocolVersion]: version,
        [MetaKey.clientInfo]: options.clientInfo ?? ADAPTER_INFO,
        [MetaKey.clientCapabilities]: {},
      },
    },
  };
}

/** The legacy `initialize` a probe sends (the newest legacy version, no capabilities). */
export function legacyInitializeRequest(id: RequestId, options: ProbeOptions): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: LATEST_LEGACY_VERSION, capabilities: {}, clientInfo: options.clientInfo ?? ADAPTER_INFO },
  };
}
