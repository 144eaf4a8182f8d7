/**
 * ModernHttpUpstream against a small node:http server: an answer past `maxMessageBytes`, as JSON
 * (with and without content-length) or as one SSE event, resolves the call with -32603 naming the
 * bound at once, without reading it whole; a small answer still comes through.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ModernHttpUpstream } from '../../lib/transport/modernHttpUpstream.ts';
import { answerHuge, MiB } from '../helpers/hugeAnswers.ts';
import { modernRequest } from '../helpers/messages.ts';

const u = suite('ModernHttpUpstream');

u('should resolve a call whose JSON or SSE answer is past maxMessageBytes with -32603 naming the bound', async () => {
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const body = JSON.parse(text) as { id: unknown; params: { name?: string } };
      if (answerHuge(res, body.params.name, body.id, 5 * MiB, { resultType: 'complete' })) return;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', content: [] } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const upstream = new ModernHttpUpstream({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, maxMessageBytes: MiB });
  try {
    for (const [i, name] of ['json-length', 'json-chunked', 'sse'].entries()) {
      const started = Date.now();
      const answer = await upstream.request(modernRequest('tools/call', { name, arguments: {} }, {}, i + 1));
      assert.ok(Date.now() - started < 2000, `${name}: promptly`);
      assert.is(
        JSON.stringify(answer),
        JSON.stringify({
          jsonrpc: '2.0',
          id: i + 1,
          error: { code: -32603, message: `Internal error: the server's answer is larger than ${MiB} bytes` },
        }),
        name,
      );
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
