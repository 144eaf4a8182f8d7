/**
 * Result `_meta` helpers: stamping the server's identity (2026-07-28 servers SHOULD put it on
 * every result).
 */
import { MetaKey } from '../era.ts';
import { extend, isRecord, type Implementation, type JsonObject } from '../primitives.ts';

/** Result `_meta` with the server info stamped in (other keys kept); `undefined` when there is nothing. */
export function stampServerInfo(meta: unknown, serverInfo: Implementation | undefined): JsonObject | undefined {
  if (!serverInfo) return isRecord(meta) ? meta : undefined;
  return extend(isRecord(meta) ? meta : undefined, { [MetaKey.serverInfo]: serverInfo });
}
