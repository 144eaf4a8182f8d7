import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpstreamSession } from '../../lib/session/upstreamSession.ts';
import type { RpcOutcome } from '../../lib/session/callHooks.ts';
import { createMemoryPair } from '../../lib/transport/memory.ts';
import { LONE } from '../../lib/transport/transport.ts';
import { StdioChildTransport } from '../../lib/transport/stdioChild.ts';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';

const CLIENT = { name: 'spec', version: '1.0.0' };
const TSX = resolve(import.meta.dirname, '../../node_modules/.bin/tsx');
const PUSH_STDIO = resolve(import.meta.dirname, '../../fixtures/servers/pushServerStdio.ts');

async function inProcess(capabilities: Record<string, unknown> = { elicitation: {} }) {
  const [client, server] = createMemoryPair();
  await createPushServer().connect(server as never);
  const session = new UpstreamSession(client, { clientInfo: CLIENT, capabilities, protocolVersion: '2025-11-25' });
  await session.open();
  return session;
}

function text(outcome: RpcOutcome): string {
  if ('error' in outcome) return `error ${outcome.error.code}: ${outcome.error.message}`;
  return ((outcome.result['content'] as Array<{ text: string }>)[0] ?? { text: '' }).text;
}

const s = suite('UpstreamSession');

s('should initialize and answer concurrent calls with their own results', async () => {
  const session = await inProcess();
  assert.is(session.initializeResult?.serverInfo.name, 'push-server');
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, i) => session.call('tools/call', { name: 'echo', arguments: { text: `n${i}` } })),
  );
  assert.equal(
    outcomes.map(text),
    Array.from({ length: 20 }, (_, i) => `n${i}`),
  );
  assert.is(session.inFlight, 0);
  await session.close();
});

s('should hand a push to the call it belongs to and send the answer upstream', async () => {
  const session = await inProcess();
  const pushes: string[] = [];
  const outcome = await session.call(
    'tools/call',
    { name: 'ask_name' },
    {
      onPush: async (push) => {
        pushes.push(push.method);
        return { result: { action: 'accept', content: { name: 'Ada' } } };
      },
    },
  );
  assert.equal(pushes, ['elicitation/create']);
  assert.is(text(outcome), 'Hello, Ada!');
  await session.close();
});

s('should route progress with the caller token restored, and logs tied to their call', async () => {
  const session = await inProcess();
  await session.call('logging/setLevel', { level: 'debug' });
  const progress: unknown[] = [];
  const logs: unknown[] = [];
  const [a, b] = await Promise.all([
    session.call(
      'tools/call',
      { name: 'work', arguments: { steps: 3 }, _meta: { progressToken: 'mine' } },
      { onProgress: (p) => progress.push(p), onLog: (l) => logs.push(l['data']) },
    ),
    session.call('tools/call', { name: 'work', arguments: { steps: 1 }, _meta: { progressToken: 'mine' } }, {}),
  ]);
  assert.is(text(a), 'did 3 steps');
  assert.is(text(b), 'did 1 steps');
  assert.equal(
    progress,
    [1, 2, 3].map((i) => ({ progressToken: 'mine', progress: i, total: 3 })),
  );
  assert.equal(logs, ['step 1', 'step 2', 'step 3']);
  await session.close();
});

s('should cancel upstream when the caller aborts, and answer the caller once', async () => {
  const session = await inProcess();
  const controller = new AbortController();
  const pending = session.call('tools/call', { name: 'wait' }, { signal: controller.signal });
  setTimeout(() => controller.abort(), 20);
  const outcome = await pending;
  assert.equal(outcome, { error: { code: -32603, message: 'Request cancelled' } });
  assert.is(session.inFlight, 0);
  assert.is(text(await session.call('tools/call', { name: 'echo', arguments: { text: 'still fine' } })), 'still fine');
  await session.close();
});

s('should answer a push that belongs to no call from its fallback, never hang', async () => {
  const [client, server] = createMemoryPair();
  const mcp = createPushServer();
  await mcp.connect(server as never);
  const seen: string[] = [];
  const session = new UpstreamSession(client, {
    clientInfo: CLIENT,
    capabilities: { roots: {} },
    protocolVersion: '2025-11-25',
    onUnrelatedPush: async (push) => {
      seen.push(push.method);
      return { result: { roots: [{ uri: 'file:///work' }] } };
    },
  });
  await session.open();
  const roots = await mcp.server.listRoots();
  assert.equal(roots.roots, [{ uri: 'file:///work' }]);
  assert.equal(seen, ['roots/list']);
  await session.close();
});

s('should tell its transport that a call is lone when it is the only one in flight, so it can be written at once', async () => {
  const [client, server] = createMemoryPair();
  await createPushServer().connect(server as never);
  const told: Array<[string, unknown]> = [];
  const send = client.send.bind(client);
  client.send = (message, options) => {
    if ('method' in message) told.push([message.method, options]);
    return send(message, options);
  };
  const session = new UpstreamSession(client, { clientInfo: CLIENT, capabilities: {}, protocolVersion: '2025-11-25' });
  await session.open();
  told.length = 0;
  assert.is(text(await session.call('tools/call', { name: 'echo', arguments: { text: 'one' } })), 'one');
  assert.equal(told, [['tools/call', LONE]]);
  told.length = 0;
  const both = [
    session.call('tools/call', { name: 'echo', arguments: { text: 'a' } }),
    session.call('tools/call', { name: 'echo', arguments: { text: 'b' } }),
  ];
  assert.equal((await Promise.all(both)).map(text), ['a', 'b']);
  assert.equal(
    told,
    [
      ['tools/call', LONE],
      ['tools/call', undefined],
    ],
    'the second of two is not lone',
  );
  await session.close();
});

s('should give every call in flight an error when the server process dies, over stdio', async () => {
  const transport = new StdioChildTransport({ command: TSX, args: [PUSH_STDIO], stderr: 'ignore' });
  let closedWith = '';
  const session = new UpstreamSession(transport, {
    clientInfo: CLIENT,
    capabilities: {},
    protocolVersion: '2025-11-25',
    onClose: (r) => (closedWith = r),
  });
  await session.open();
  assert.is(text(await session.call('tools/call', { name: 'echo', arguments: { text: 'over stdio' } })), 'over stdio');
  const waiting = session.call('tools/call', { name: 'wait' });
  const crash = session.call('tools/call', { name: 'crash' });
  const outcomes = await Promise.all([waiting, crash]);
  for (const o of outcomes) assert.ok('error' in o && o.error.code === -32603, JSON.stringify(o));
  for (const o of outcomes) assert.equal('error' in o && o.error.data, { exitCode: 3 }, 'the exit code travels with the error');
  assert.ok(session.closed);
  assert.is(closedWith, 'exited with code 3');
  const after = await session.call('tools/list', undefined);
  assert.is(
    text(after),
    'error -32603: Internal error: the upstream server exited with code 3',
    'a call after the crash is answered at once',
  );
});

s('should close idempotently and stop the child', async () => {
  const transport = new StdioChildTransport({ command: TSX, args: [PUSH_STDIO], stderr: 'ignore' });
  const session = new UpstreamSession(transport, { clientInfo: CLIENT, capabilities: {}, protocolVersion: '2025-11-25' });
  await session.open();
  const pid = transport.pid!;
  await Promise.all([session.close(), session.close()]);
  assert.throws(() => process.kill(pid, 0));
});

s.run();

const raw = suite('UpstreamSession with a server that writes what it likes');

raw('should survive a progress notification whose token is an object with a toString member', async () => {
  const [client, server] = createMemoryPair();
  server.onmessage = (message) => {
    const m = message as { id?: number; method?: string };
    if (m.method === 'initialize')
      void server.send({
        jsonrpc: '2.0',
        id: m.id!,
        result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'raw', version: '1' } },
      });
    if (m.method === 'tools/call') {
      void server.send(
        JSON.parse('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{"toString":0},"progress":1}}'),
      );
      void server.send({ jsonrpc: '2.0', id: m.id!, result: { content: [] } });
    }
  };
  await server.start();
  const thrown: unknown[] = [];
  const trap = (e: unknown) => thrown.push(e);
  process.on('uncaughtException', trap);
  try {
    const session = new UpstreamSession(client, { clientInfo: CLIENT, capabilities: {}, protocolVersion: '2025-11-25' });
    await session.open();
    const outcome = await session.call(
      'tools/call',
      { name: 'x', _meta: { progressToken: 'mine' } },
      { onProgress: () => thrown.push('progress delivered') },
    );
    assert.ok('result' in outcome);
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(thrown, []);
    await session.close();
  } finally {
    process.off('uncaughtException', trap);
  }
});

raw.run();
