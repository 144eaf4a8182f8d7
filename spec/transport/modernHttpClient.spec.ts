/**
 * ModernHttpClientTransport against small node:http servers: the routing headers (with
 * `Mcp-Param-*` learned from `tools/list`), JSON and SSE answers, HTTP errors with and without a
 * JSON-RPC body, a broken stream, a network error, and cancellation — every request gets exactly
 * one answer, a cancelled one none.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { ModernHttpClientTransport } from '../../lib/transport/modernHttpClient.ts';
import { sleep, waitFor } from '../helpers/everything.ts';
import { answerHuge, MiB } from '../helpers/hugeAnswers.ts';
import { modernRequest } from '../helpers/messages.ts';

type Handler = (req: IncomingMessage, body: any, res: ServerResponse) => void;

async function serve(handler: Handler): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => handler(req, text ? JSON.parse(text) : undefined, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

function collect(t: ModernHttpClientTransport): JsonRpcMessage[] {
  const got: JsonRpcMessage[] = [];
  t.onmessage = (m) => void got.push(m);
  return got;
}

const answersTo = (got: JsonRpcMessage[], id: number | string) => got.filter((m) => 'id' in m && m.id === id && !('method' in m));

const h = suite('ModernHttpClientTransport');

h('should send the routing headers, Mcp-Param-* from the listed tool, and read JSON and SSE answers', async () => {
  const seen: IncomingMessage['headers'][] = [];
  const server = await serve((req, body, res) => {
    seen.push(req.headers);
    if (body.method === 'tools/list') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: body.id,
          result: {
            resultType: 'complete',
            ttlMs: 0,
            cacheScope: 'private',
            tools: [{ name: 'greet', inputSchema: { type: 'object', properties: { who: { type: 'string', 'x-mcp-header': 'Who' } } } }],
          },
        }),
      );
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } })}\n\n`,
    );
    res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', content: [] } })}\n\n`);
  });
  const t = new ModernHttpClientTransport({ url: server.url, headers: { authorization: 'Bearer x' } });
  const got = collect(t);
  try {
    await t.send(modernRequest('tools/list', {}, {}, 1));
    assert.ok(await waitFor(() => answersTo(got, 1).length === 1, 2000));
    await t.send(modernRequest('tools/call', { name: 'greet', arguments: { who: 'Zoë' } }, { progressToken: 't' }, 2));
    assert.ok(await waitFor(() => answersTo(got, 2).length === 1, 2000));
    assert.equal(
      got.map((m) => ('method' in m ? m.method : `answer ${String((m as { id: unknown }).id)}`)),
      ['answer 1', 'notifications/progress', 'answer 2'],
    );
    const call = seen[1]!;
    assert.equal(
      [call['mcp-protocol-version'], call['mcp-method'], call['mcp-name'], call['authorization']],
      ['2026-07-28', 'tools/call', 'greet', 'Bearer x'],
    );
    assert.is(call['mcp-param-who'], `=?base64?${Buffer.from('Zoë').toString('base64')}?=`);
    assert.is(seen[0]!['mcp-name'], undefined);
  } finally {
    await t.close();
    await server.close();
  }
});

h('should answer every request exactly once, whatever the server does', async () => {
  const server = await serve((_req, body, res) => {
    const name = body.params?.name;
    if (name === 'rpc-error')
      return res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32020, message: 'Header mismatch' } }));
    if (name === 'bare-500') return res.writeHead(500).end();
    if (name === 'html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hi</p>');
    if (name === 'broken') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      return setTimeout(() => res.destroy(), 20);
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', content: [] } }));
  });
  const t = new ModernHttpClientTransport({ url: server.url });
  const got = collect(t);
  try {
    const names = ['rpc-error', 'bare-500', 'html', 'broken', 'fine'];
    for (const [i, name] of names.entries()) await t.send(modernRequest('tools/call', { name, arguments: {} }, {}, i + 1));
    assert.ok(await waitFor(() => names.every((_, i) => answersTo(got, i + 1).length > 0), 3000), JSON.stringify(got));
    await sleep(100);
    for (const [i] of names.entries()) assert.is(answersTo(got, i + 1).length, 1, `exactly one answer to ${names[i]}`);
    const error = (id: number) => (answersTo(got, id)[0] as { error?: { code: number; message: string } }).error;
    assert.equal(error(1), { code: -32020, message: 'Header mismatch' }, 'the JSON-RPC error of an HTTP error, with the request id');
    assert.is(error(2)?.code, -32603);
    assert.match(error(2)!.message, 'HTTP 500');
    assert.is(error(3)?.code, -32603);
    assert.is(error(4)?.code, -32603);
    assert.ok('result' in answersTo(got, 5)[0]!);
  } finally {
    await t.close();
    await server.close();
  }
});

h('should close the stream of a cancelled request and answer nothing for it; a network error is answered', async () => {
  let closed = false;
  const server = await serve((req, _body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': working\n\n');
    req.socket.on('close', () => (closed = true));
  });
  const t = new ModernHttpClientTransport({ url: server.url });
  const got = collect(t);
  try {
    await t.send(modernRequest('tools/call', { name: 'slow', arguments: {} }, {}, 'slow-1'));
    await sleep(100);
    await t.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1' } });
    assert.ok(await waitFor(() => closed, 2000), 'the server saw the stream close');
    await sleep(50);
    assert.equal(got, []);
  } finally {
    await t.close();
    await server.close();
  }
  const gone = new ModernHttpClientTransport({ url: server.url });
  const lost = collect(gone);
  await gone.send(modernRequest('tools/list', {}, {}, 9));
  assert.ok(await waitFor(() => lost.length === 1, 2000));
  assert.match((lost[0] as { error: { message: string } }).error.message, 'could not POST');
  await gone.close();
});

h('should answer a request whose JSON or SSE answer is past maxMessageBytes with one -32603 naming the bound, and go on', async () => {
  const server = await serve((_req, body, res) => {
    if (answerHuge(res, body.params?.name, body.id, 5 * MiB, { resultType: 'complete' })) return;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { resultType: 'complete', content: [] } }));
  });
  const t = new ModernHttpClientTransport({ url: server.url, maxMessageBytes: MiB });
  const got = collect(t);
  // Short, so that a failure does not print megabytes.
  const short = (id: number) => answersTo(got, id).map((m) => JSON.stringify(m).slice(0, 300));
  try {
    const names = ['json-length', 'json-chunked', 'sse', 'fine'];
    for (const [i, name] of names.entries()) {
      const started = Date.now();
      await t.send(modernRequest('tools/call', { name, arguments: {} }, {}, i + 1));
      assert.ok(await waitFor(() => answersTo(got, i + 1).length > 0, 3000), name);
      assert.ok(Date.now() - started < 2000, `${name}: promptly`);
    }
    await sleep(50);
    for (const id of [1, 2, 3])
      assert.equal(
        short(id),
        [
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            error: { code: -32603, message: `Internal error: the server's answer is larger than ${MiB} bytes` },
          }),
        ],
        names[id - 1],
      );
    assert.equal(short(4), [JSON.stringify({ jsonrpc: '2.0', id: 4, result: { resultType: 'complete', content: [] } })]);
  } finally {
    await t.close();
    await server.close();
  }
});

h.run();
