/**
 * A poster of request texts to one endpoint over one keep-alive connection, one at a time, each
 * answer decoded (JSON, or the last event of a stream: bench/mrtr/requests.ts) and given a
 * deadline: how the fleet and tasks benches call a `serve`.
 */
import { Agent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import type { JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
import { responseOf } from '../mrtr/requests.ts';

/** Posts a request text with its headers; resolves with the answer, or what went wrong. */
export type Post = (text: string, headers: OutgoingHttpHeaders) => Promise<JsonRpcResponse | string>;

/** A poster to `url` over one keep-alive connection, a request unanswered after `timeoutMs` counting as failed; `close` lets it go. */
export function keepAlivePoster(url: URL, timeoutMs: number): { post: Post; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post: Post = (text, headers) =>
    new Promise((resolve) => {
      const req = httpRequest(
        { agent, hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, timeout: timeoutMs },
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
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (e) => resolve(`request failed: ${e.message}`));
      req.end(text);
    });
  return { post, close: () => agent.destroy() };
}
