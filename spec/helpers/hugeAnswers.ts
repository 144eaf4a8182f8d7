/**
 * Answers larger than a bound, as an HTTP server in a spec writes them: poured in 64 KiB pieces
 * with backpressure (stopping when the client goes), as JSON with or without a declared length, as
 * one SSE event, or as an HTTP error page; the JSON in the v1 SDK's key order (the id last).
 */
import type { ServerResponse } from 'node:http';

export const MiB = 1024 * 1024;
const PIECE = Buffer.alloc(64 * 1024, 'x');

/** Writes `prefix`, then `total` bytes of `x` (respecting backpressure, stopping when the client goes), then `suffix`. */
export async function pour(res: ServerResponse, prefix: string, total: number, suffix: string): Promise<void> {
  res.write(prefix);
  for (let n = 0; n < total && !res.destroyed; n += PIECE.length) {
    if (res.write(PIECE)) continue;
    await new Promise<void>((resolve) => {
      const go = (): void => {
        res.off('drain', go).off('close', go);
        resolve();
      };
      res.on('drain', go).on('close', go);
    });
  }
  if (!res.destroyed) res.end(suffix);
}

/** A v1-SDK-ordered tool result whose text is `total` bytes, id last: its start, size and end. */
export function hugeAnswer(id: unknown, total: number, result: Record<string, unknown> = {}): [string, number, string] {
  const extra = Object.entries(result)
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`)
    .join('');
  return [`{"result":{${extra}"content":[{"type":"text","text":"`, total, `"}]},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`];
}

/**
 * Answers the request `id` the way `kind` says, `total` bytes large (`json-length`, `json-chunked`,
 * `sse`, `error-chunked`); false for any other kind (the caller answers it).
 */
export function answerHuge(
  res: ServerResponse,
  kind: string | undefined,
  id: unknown,
  total: number,
  result: Record<string, unknown> = {},
): boolean {
  const [prefix, size, suffix] = hugeAnswer(id, total, result);
  switch (kind) {
    case 'json-length':
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(prefix) + size + Buffer.byteLength(suffix)),
      });
      void pour(res, prefix, size, suffix);
      return true;
    case 'json-chunked':
      res.writeHead(200, { 'content-type': 'application/json' });
      void pour(res, prefix, size, suffix);
      return true;
    case 'sse':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void pour(res, `event: message\ndata: ${prefix}`, size, `${suffix}\n\n`);
      return true;
    case 'error-chunked':
      res.writeHead(500, { 'content-type': 'text/html' });
      void pour(res, '<html>', size, '</html>');
      return true;
    default:
      return false;
  }
}
