/**
 * One JSON-RPC POST as load specs send it: Node's own HTTP client on a kept-alive agent (no Web
 * `fetch` per call), the answer read whole, as JSON or as an event stream's last message. Never
 * rejects: a connection that failed or an answer that is not JSON comes back with `json` undefined
 * (and status 0 when nothing came).
 */
import { request as httpRequest, type Agent } from 'node:http';

/** What came back: the HTTP status and the JSON-RPC message (an event stream's last one). */
export interface Posted {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
}

/** POSTs `body` to `url` with `headers` on `agent`. */
export function rawPost(agent: Agent, url: URL, body: unknown, headers: Record<string, string>): Promise<Posted> {
  return new Promise((resolve) => {
    const text = JSON.stringify(body);
    const req = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(text),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          try {
            if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
              const data = raw
                .split('\n')
                .filter((l) => l.startsWith('data: '))
                .map((l) => JSON.parse(l.slice(6)));
              resolve({ status, json: data.at(-1) });
            } else resolve({ status, json: raw === '' ? undefined : JSON.parse(raw) });
          } catch {
            resolve({ status, json: undefined });
          }
        });
        res.on('error', () => resolve({ status: 0, json: undefined }));
      },
    );
    req.on('error', () => resolve({ status: 0, json: undefined }));
    req.end(text);
  });
}
