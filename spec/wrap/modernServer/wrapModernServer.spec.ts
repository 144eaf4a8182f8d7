/**
 * The fronts of `wrapModernServer` on their own: the stdio front (lines in, lines out, batches,
 * parse errors) and the sessionful HTTP front's refusals (no session, unknown session, GET before
 * a session, a foreign Origin, a body over the limit, a Content-Type that is not JSON, a session of
 * another caller), session teardown by DELETE and by idleness, and an idempotent close. The features
 * themselves are covered with real clients in spec/interop/legacyClient.spec.ts.
 */
import { PassThrough } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveModernStdio } from '../../../fixtures/servers/modernStdio.ts';
import { createMemoryPair } from '../../../lib/transport/memory.ts';
import { wrapModernServer } from '../../../lib/wrap/modernServer/wrapModernServer.ts';

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
  input.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
  );
  await until(1);
  assert.is(lines[0].result.protocolVersion, '2025-03-26');
  input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  input.write(
    `${JSON.stringify([
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'a' } } },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ])}\n`,
  );
  await until(2);
  assert.ok(Array.isArray(lines[1]));
  assert.equal(
    lines[1].map((m: any) => m.id),
    [2, 3],
  );
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
  new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

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
    const opened = await wrap.fetch(
      post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    );
    assert.is(opened.status, 200);
    const sid = opened.headers.get('mcp-session-id');
    assert.ok(sid);
    const text = await opened.text();
    assert.match(text, 'modern-fixture');
    assert.is(wrap.sessions, 1);
    const closed = await wrap.fetch(
      new Request('http://127.0.0.1/mcp', { method: 'DELETE', headers: { 'mcp-session-id': sid!, 'mcp-protocol-version': '2025-11-25' } }),
    );
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
    const opened = await wrap.fetch(
      post(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        },
        { accept: 'application/json, text/event-stream' },
      ),
    );
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const headers = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-03-26' };
    await wrap.fetch(post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers));
    const batch = await wrap.fetch(
      post(
        [
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } },
          { jsonrpc: '2.0', id: 3, method: 'ping' },
        ],
        headers,
      ),
    );
    const text = await batch.text();
    const messages = text.includes('data:')
      ? text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .flatMap((l) => [JSON.parse(l.slice(5))].flat())
      : [JSON.parse(text)].flat();
    assert.equal(messages.map((m: any) => m.id).sort(), [2, 3]);
    assert.is(messages.find((m: any) => m.id === 2).result.content[0].text, 'b');
  } finally {
    await wrap.close();
    await served.close();
  }
});

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A body of `size` bytes of JSON-looking text, streamed in 1 MiB chunks with no declared length. */
function streamedBody(size: number): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"${'x'.repeat(1024 * 1024)}`);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
}

http('should refuse a body over the limit with 413 before reading it whole, and before any session exists', async () => {
  const { wrap, served } = inProcess();
  try {
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    const huge = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: streamedBody(200 * 1024 * 1024),
      duplex: 'half',
    } as RequestInit);
    const res = await wrap.fetch(huge);
    assert.is(res.status, 413);
    assert.is(((await res.json()) as { error: { code: number } }).error.code, -32600);
    assert.ok(process.memoryUsage().heapUsed - before < 40 * 1024 * 1024, 'no more than the limit and a chunk or two were held');
    const declared = await wrap.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(5 * 1024 * 1024) },
        body: 'x'.repeat(5 * 1024 * 1024),
      }),
    );
    assert.is(declared.status, 413, 'a declared length over the limit');
    const small = wrapModernServer(createMemoryPair()[0], { limits: { maxBodyBytes: 100 } });
    assert.is((await small.fetch(post(INITIALIZE))).status, 413, 'the limit is settable');
    await small.close();
    assert.is(wrap.sessions, 0);
  } finally {
    await wrap.close();
    await served.close();
  }
});

http('should take application/json by its media type only', async () => {
  const { wrap, served } = inProcess();
  try {
    for (const type of ['text/plain; x=application/json', 'application/jsonx', 'text/plain']) {
      const res = await wrap.fetch(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { 'content-type': type, accept: 'application/json, text/event-stream' },
          body: JSON.stringify(INITIALIZE),
        }),
      );
      assert.is(res.status, 415, type);
    }
    const ok = await wrap.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'Application/JSON; charset=utf-8', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(INITIALIZE),
      }),
    );
    assert.is(ok.status, 200);
  } finally {
    await wrap.close();
    await served.close();
  }
});

http("should answer another caller's use of a session as if it did not exist", async () => {
  const { wrap, served } = inProcess();
  try {
    const opened = await wrap.fetch(post(INITIALIZE, { authorization: 'Bearer alice' }));
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const session = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } };
    for (const who of [{ authorization: 'Bearer mallory' }, {}]) {
      assert.is((await wrap.fetch(post(call, { ...session, ...who }))).status, 404);
      assert.is(
        (
          await wrap.fetch(
            new Request('http://127.0.0.1/mcp', { method: 'GET', headers: { accept: 'text/event-stream', ...session, ...who } }),
          )
        ).status,
        404,
      );
      assert.is((await wrap.fetch(new Request('http://127.0.0.1/mcp', { method: 'DELETE', headers: { ...session, ...who } }))).status, 404);
    }
    assert.is(wrap.sessions, 1, 'still open');
    const mine = await wrap.fetch(post(call, { ...session, authorization: 'Bearer alice' }));
    assert.is(mine.status, 200);
    assert.match(await mine.text(), '"text":"x"');
  } finally {
    await wrap.close();
    await served.close();
  }
});

http('should close a session left idle, and hold its bounds per caller', async () => {
  const [client, server] = createMemoryPair();
  const served = serveModernStdio(server as never);
  const wrap = wrapModernServer(client, { sessions: { idleMs: 300, perPrincipal: 2, max: 3 } });
  try {
    const open = async (who: string) => {
      const res = await wrap.fetch(post(INITIALIZE, { authorization: `Bearer ${who}` }));
      await res.text();
      return res;
    };
    assert.is((await open('alice')).status, 200);
    assert.is((await open('alice')).status, 200);
    const third = await open('alice');
    assert.is(third.status, 429, 'both of its sessions were used a moment ago');
    assert.ok(Number(third.headers.get('retry-after')) >= 1);
    assert.is(wrap.sessions, 2);
    for (let i = 0; i < 100 && wrap.sessions > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.is(wrap.sessions, 0, 'closed once idle');
  } finally {
    await wrap.close();
    await served.close();
  }
});

http.run();
