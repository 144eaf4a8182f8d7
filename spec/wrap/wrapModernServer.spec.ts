/**
 * The fronts of `wrapModernServer` on their own: the stdio front (lines in, lines out, batches,
 * parse errors) and the sessionful HTTP front's refusals (no session, unknown session, GET before
 * a session, a foreign Origin), session teardown by DELETE, and an idempotent close. The features
 * themselves are covered with real clients in spec/interop/legacyClient.spec.ts.
 */
import { PassThrough } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveModernStdio } from '../../fixtures/servers/modernStdio.ts';
import { createMemoryPair } from '../../lib/transport/memory.ts';
import { wrapModernServer } from '../../lib/wrap/wrapModernServer.ts';

function inProcess() {
  const [client, server] = createMemoryPair();
  const served = serveModernStdio(server as never);
  return { wrap: wrapModernServer(client), served };
}

const stdio = suite('wrapModernServer: the stdio front');

stdio('should answer line by line, a batch as one line, and a broken line with -32700', async () => {
  const { wrap, served } = inProcess();
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: any[] = [];
  let buffer = '';
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
  });
  const running = wrap.serveStdio({ input, output });
  const until = async (n: number) => {
    for (let i = 0; i < 200 && lines.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  };
  input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`);
  await until(1);
  assert.is(lines[0].result.protocolVersion, '2025-03-26');
  input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  input.write(`${JSON.stringify([
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'a' } } },
    { jsonrpc: '2.0', id: 3, method: 'ping' },
  ])}\n`);
  await until(2);
  assert.ok(Array.isArray(lines[1]));
  assert.equal(lines[1].map((m: any) => m.id), [2, 3]);
  assert.is(lines[1][0].result.content[0].text, 'a');
  input.write('{not json\n');
  await until(3);
  assert.is(lines[2].error.code, -32700);
  input.end();
  await running.done;
  await served.close();
});

stdio.run();

const http = suite('wrapModernServer: the HTTP front');

const post = (body: unknown, headers: Record<string, string> = {}) =>
  new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });

http('should refuse requests outside a session, unknown sessions, GET before a session and foreign origins', async () => {
  const { wrap, served } = inProcess();
  try {
    const noSession = await wrap.fetch(post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    assert.is(noSession.status, 400);
    const unknown = await wrap.fetch(post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 'nope' }));
    assert.is(unknown.status, 404);
    const get = await wrap.fetch(new Request('http://127.0.0.1/mcp', { method: 'GET' }));
    assert.is(get.status, 405);
    const foreign = await wrap.fetch(post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://evil.example' }));
    assert.is(foreign.status, 403);
    const elsewhere = await wrap.fetch(new Request('http://127.0.0.1/other', { method: 'POST', body: '{}' }));
    assert.is(elsewhere.status, 404);
  } finally {
    await wrap.close();
    await served.close();
  }
});

http('should open a session on initialize and end it on DELETE', async () => {
  const { wrap, served } = inProcess();
  try {
    const opened = await wrap.fetch(post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }));
    assert.is(opened.status, 200);
    const sid = opened.headers.get('mcp-session-id');
    assert.ok(sid);
    const text = await opened.text();
    assert.match(text, 'modern-fixture');
    assert.is(wrap.sessions, 1);
    const closed = await wrap.fetch(new Request('http://127.0.0.1/mcp', { method: 'DELETE', headers: { 'mcp-session-id': sid!, 'mcp-protocol-version': '2025-11-25' } }));
    assert.is(closed.status, 200);
    assert.is(wrap.sessions, 0);
  } finally {
    await wrap.close();
    await wrap.close();
    await served.close();
  }
});

http('should answer a 2025-03-26 batch in a session', async () => {
  const { wrap, served } = inProcess();
  try {
    const opened = await wrap.fetch(post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }, { accept: 'application/json, text/event-stream' }));
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26' };
    await wrap.fetch(post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers));
    const batch = await wrap.fetch(post([
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ], headers));
    const text = await batch.text();
    const messages = text.includes('data:') ? text.split('\n').filter((l) => l.startsWith('data:')).flatMap((l) => [JSON.parse(l.slice(5))].flat()) : [JSON.parse(text)].flat();
    assert.equal(messages.map((m: any) => m.id).sort(), [2, 3]);
    assert.is(messages.find((m: any) => m.id === 2).result.content[0].text, 'b');
  } finally {
    await wrap.close();
    await served.close();
  }
});

http.run();
