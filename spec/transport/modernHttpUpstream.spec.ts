/**
 * ModernHttpUpstream against a small node:http server: an answer past `maxMessageBytes`, as JSON
 * (with and without content-length) or as one SSE event, resolves the call with -32603 naming the
 * bound at once, without reading it whole; a small answer still comes through.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ModernHttpUpstream } from '../../lib/transport/modernHttpUpstream.ts';
import { modernRequest } from '../helpers/messages.ts';

const MiB = 1024 * 1024;
const PIECE = Buffer.alloc(64 * 1024, 'x');

async function pour(res: ServerResponse, prefix: string, total: number, suffix: string): Promise<void> {
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

const u = suite('ModernHttpUpstream');

u('should resolve a call whose JSON or SSE answer is past maxMessageBytes with -32603 naming the bound', async () => {
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const body = JSON.parse(text) as { id: unknown; params: { name?: string } };
      const name = body.params.name;
      const prefix = '{"result":{"resultType":"complete","content":[{"type":"text","text":"';
      const suffix = `"}]},"jsonrpc":"2.0","id":${JSON.stringify(body.id)}}`;
      if (name === 'json-length') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(prefix.length + 5 * MiB + suffix.length) });
        return void pour(res, prefix, 5 * MiB, suffix);
      }
      if (name === 'json-chunked') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void pour(res, prefix, 5 * MiB, suffix);
      }
      if (name === 'sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void pour(res, `data: ${prefix}`, 5 * MiB, `${suffix}\n\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', content: [] } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const upstream = new ModernHttpUpstream({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, maxMessageBytes: MiB });
  try {
    for (const [i, name] of ['json-length', 'json-chunked', 'sse'].entries()) {
      const started = Date.now();
      const answer = await upstream.request(modernRequest('tools/call', { name, arguments: {} }, {}, i + 1));
      assert.ok(Date.now() - started < 2000, `${name}: promptly`);
      assert.is(JSON.stringify(answer), JSON.stringify({ jsonrpc: '2.0', id: i + 1, error: { code: -32603, message: `Internal error: the server's answer is larger than ${MiB} bytes` } }), name);
    }
    const fine = await upstream.request(modernRequest('tools/call', { name: 'fine', arguments: {} }, {}, 9));
    assert.equal(fine, { jsonrpc: '2.0', id: 9, result: { resultType: 'complete', content: [] } });
  } finally {
    await upstream.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

u.run();
