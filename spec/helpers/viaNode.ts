/**
 * Sends a Web `Request` to a real Node HTTP server over a socket (node:http, so any `Host` header can
 * be sent) and returns the answer as a Web `Response` whose body streams. Aborting the request's
 * signal closes the connection, as a client going away does. `keepAlive: false`: a connection per
 * request, closed after it (no idle socket left behind).
 */
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';

export function viaNode(origin: string, options: { keepAlive?: boolean } = {}): (request: Request) => Promise<Response> {
  const base = new URL(origin);
  return async (request) => {
    const url = new URL(request.url);
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    if (body) headers['content-length'] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const req = httpRequest(
        {
          host: base.hostname,
          port: base.port,
          path: url.pathname + url.search,
          method: request.method,
          headers,
          signal: request.signal,
          ...(options.keepAlive === false ? { agent: false } : {}),
        },
        (res) => {
          const out = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) out.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          const status = res.statusCode ?? 0;
          const empty = status === 204 || status === 304;
          if (empty) res.resume();
          resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: out }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}
