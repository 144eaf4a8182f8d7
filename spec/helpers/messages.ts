/** Small builders for test messages of both eras. */
import type { JsonRpcRequest } from '../../lib/core/jsonrpc.ts';

export const CLIENT = { name: 'spec-client', version: '1.0.0' };
export const SERVER = { name: 'spec-server', version: '2.0.0' };

/** A modern `_meta` envelope, with overrides (a key set to `undefined` is removed). */
export function modernMeta(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': CLIENT,
    'io.modelcontextprotocol/clientCapabilities': {},
    ...overrides,
  };
  for (const k of Object.keys(meta)) if (meta[k] === undefined) delete meta[k];
  return meta;
}

/** A modern request with a full envelope. */
export function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
  id: string | number = 1,
): JsonRpcRequest {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(meta) } };
}
