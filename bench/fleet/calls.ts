/**
 * How the fleet bench calls a `serve`: modern `tools/call` POSTs (the MRTR bench's request texts:
 * bench/mrtr/requests.ts) over one keep-alive connection per endpoint, one call at a time, each
 * answer decoded (JSON, or the last event of a stream) and given a deadline.
 */
import { Agent, request as httpRequest } from 'node:http';
import type { JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
import { responseOf, toolCallHeaders } from '../mrtr/requests.ts';

/** Sends a request text naming tool `name`; resolves with the answer, or what went wrong. */
export type Call = (text: string, name: string) => Promise<JsonRpcResponse | string>;

/** How long one call may take before it counts as unanswered. */
const CALL_TIMEOUT_MS = 30_000;

/** A caller of the endpoint `url` over one keep-alive connection; `close` lets it go. */
export function endpointCaller(url: URL): { call: Call; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call: Call = (text, name) =>
    new Promise((resolve) => {
      const headers = toolCallHeaders(text, name);
      const req = httpRequest(
        { agent, hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, timeout: CALL_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            try {
              resolve(responseOf(res.headers['content-type'], body) ?? `HTTP ${res.statusCode}: an event stream with no message`);
            } catch {
              resolve(`HTTP ${res.statusCode}: ${body.slice(0, 200)}`);
            }
          });
          res.on('error', (e) => resolve(`response failed: ${e.message}`));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)));
      req.on('error', (e) => resolve(`request failed: ${e.message}`));
      req.end(text);
    });
  return { call, close: () => agent.destroy() };
}

/** The answer as the checks of bench/mrtr/requests.ts take it: a failed call is no answer. */
export const answerOf = (a: JsonRpcResponse | string): JsonRpcResponse | undefined => (typeof a === 'string' ? undefined : a);
