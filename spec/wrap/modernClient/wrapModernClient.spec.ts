/**
 * `wrapModernClient` around the edges of its probe, with a pinned v2 client and real servers: the
 * process a silent probe waited on is the one initialized (its late answer ignored), a process
 * that exited on the probe is restarted, cancellation reaches a legacy server, and a verdict known
 * beforehand that proves wrong is probed again; a pin is never second-guessed.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createDualEraServer } from '../../../fixtures/servers/dualEraServer.ts';
import { serveNodeHttp } from '../../../lib/transport/nodeHttp.ts';
import { startAhead } from '../../../lib/transport/spawnChild.ts';
import type { StdioChildOptions } from '../../../lib/transport/stdioChild.ts';
import { targetKey } from '../../../lib/probe/probe.ts';
import { VerdictCache } from '../../../lib/probe/verdictCache.ts';
import { wrapModernClient } from '../../../lib/wrap/modernClient/wrapModernClient.ts';
import {
  EVERYTHING,
  MARKER,
  markedProcesses,
  markedProcessesGone,
  reapMarked,
  ROOT,
  sleep,
  textOf,
  waitFor,
} from '../../helpers/everything.ts';
import { connectPinned } from '../../helpers/modernClient.ts';
import { validateMessage } from '../../helpers/schemas.ts';

function quirky(mode: string, marker: string, stderr: StdioChildOptions['stderr'] = 'ignore'): StdioChildOptions {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', resolve(ROOT, 'fixtures/servers/quirkyStdio.ts'), mode],
    cwd: ROOT,
    env: { [MARKER]: marker },
    stderr,
  };
}

/** The fixture's server processes (tsx may run an esbuild helper beside them while it compiles). */
function servers(marker: string): Array<{ pid: number; command: string }> {
  return markedProcesses(marker).filter((p) => p.command.includes('quirkyStdio.ts'));
}

const edges = suite('wrapModernClient: the probed process');

edges('should initialize the process a silent probe waited on, and ignore its late answer to the probe', async () => {
  const marker = randomUUID();
  const transport = wrapModernClient(quirky('late', marker), { cache: new VerdictCache(), timeoutMs: 300 });
  const c = await connectPinned(transport);
  try {
    assert.equal(transport.verdict, { era: 'legacy' });
    assert.is(c.client.getServerVersion()?.name, 'quirky-late');
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { text: 'one' } })), 'one');
    await sleep(700); // the late DiscoverResult has arrived by now
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { text: 'two' } })), 'two');
    assert.is(servers(marker).length, 1, 'one server process, the probed one');
    assert.not.ok(
      c.received.some((m) => String(m['id']).startsWith('mcp-dual-era-probe')),
      'the late answer never reaches the client',
    );
  } finally {
    await c.client.close();
    assert.ok(await markedProcessesGone(marker, 5000));
    reapMarked(marker);
  }
});

edges('should stop the probed process when closed before any request reached it', async () => {
  const marker = randomUUID();
  const transport = wrapModernClient(
    { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' },
    { cache: false },
  );
  await transport.start();
  assert.equal(transport.verdict, { era: 'legacy' });
  assert.is(markedProcesses(marker).length, 1, 'the probed server is running');
  await transport.close();
  assert.ok(await markedProcessesGone(marker, 5000), `still running: ${JSON.stringify(markedProcesses(marker))}`);
});

edges('should probe the process started ahead for the same command, starting none of its own', async () => {
  const marker = randomUUID();
  const options: StdioChildOptions = {
    command: process.execPath,
    args: [EVERYTHING, 'stdio'],
    env: { [MARKER]: marker },
    stderr: 'ignore',
  };
  startAhead(options);
  const [ahead] = markedProcesses(marker);
  const transport = wrapModernClient({ ...options }, { cache: false });
  const c = await connectPinned(transport);
  try {
    assert.equal(transport.verdict, { era: 'legacy' });
    assert.is(c.client.getServerVersion()?.name, 'mcp-servers/everything');
    assert.equal(
      markedProcesses(marker).map((p) => p.pid),
      [ahead!.pid],
      'the only server process is the one started ahead',
    );
  } finally {
    await c.client.close();
    reapMarked(marker);
  }
});

edges('should start the server again when it exited on the probe', async () => {
  const marker = randomUUID();
  const transport = wrapModernClient(quirky('exit', marker), { cache: new VerdictCache(), timeoutMs: 20_000 });
  const seen: Array<[string, any]> = [];
  transport.events.on('*', (type, payload) => void seen.push([type, payload]));
  const c = await connectPinned(transport);
  try {
    assert.match(seen.find(([t]) => t === 'fallback')![1].reason, 'exited');
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { text: 'again' } })), 'again');
    assert.is(servers(marker).length, 1);
  } finally {
    await c.client.close();
    reapMarked(marker);
  }
});

edges('should carry a cancellation to the legacy server as notifications/cancelled', async () => {
  const marker = randomUUID();
  let stderr = '';
  const transport = wrapModernClient(
    quirky('plain', marker, (chunk) => void (stderr += chunk)),
    { cache: new VerdictCache() },
  );
  const c = await connectPinned(transport);
  try {
    const abort = new AbortController();
    const call = c.client.callTool({ name: 'wait', arguments: {} }, { signal: abort.signal });
    await sleep(300);
    assert.not.match(stderr, 'wait: cancelled');
    abort.abort();
    assert.ok(
      await call.then(
        () => false,
        () => true,
      ),
      'the call was rejected',
    );
    assert.ok(await waitFor(() => stderr.includes('wait: cancelled'), 3000), 'the server saw the cancellation');
  } finally {
    await c.client.close();
    reapMarked(marker);
  }
});

edges("should raise the server's log level with logging/setLevel when a request asks for more, and filter per request", async () => {
  const marker = randomUUID();
  let stderr = '';
  const transport = wrapModernClient(
    quirky('plain', marker, (chunk) => void (stderr += chunk)),
    { cache: new VerdictCache() },
  );
  const c = await connectPinned(transport);
  const logs: string[] = [];
  c.client.setNotificationHandler('notifications/message', (n) => void logs.push(`${n.params.level}: ${String(n.params.data)}`));
  const log = async (level?: string) => {
    logs.length = 0;
    await c.client.callTool({ name: 'log', arguments: {}, ...(level ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {}) });
    await sleep(50);
    return [...logs];
  };
  try {
    assert.equal(await log(), [], 'no logLevel, no logs');
    assert.not.match(stderr, 'setLevel');
    assert.equal(await log('error'), ['error: an error line']);
    assert.match(stderr, 'setLevel "error"');
    assert.equal(await log('debug'), ['debug: a debug line', 'error: an error line'], 'the server was set to debug before the call');
    assert.match(stderr, 'setLevel "debug"');
    assert.equal(await log('error'), ['error: an error line'], 'a less verbose request still gets only its own level');
    assert.is(stderr.match(/setLevel/g)?.length, 2, 'never lowered: concurrent requests may want more');
    assert.not.ok(
      c.received.some((m) => String(m['id']).startsWith('mcp-dual-era')),
      'the answers to setLevel stay in the wrap',
    );
  } finally {
    await c.client.close();
    reapMarked(marker);
  }
});

edges('should give a request that declares other capabilities its own upstream session, initialized with them', async () => {
  const marker = randomUUID();
  const transport = wrapModernClient(
    { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' },
    { cache: new VerdictCache() },
  );
  const answers = new Map<number, any>();
  transport.onmessage = (m: any) => void (m.id !== undefined && answers.set(m.id, m));
  await transport.start();
  const list = async (id: number, capabilities: Record<string, unknown>) => {
    await transport.send({
      jsonrpc: '2.0',
      id,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    });
    assert.ok(await waitFor(() => answers.has(id), 10_000), `answer ${id}`);
    const answer = answers.get(id);
    assert.equal(validateMessage('2026-07-28', answer, { method: 'tools/list' }), [], JSON.stringify(answer).slice(0, 300));
    return (answer.result.tools as Array<{ name: string }>).map((t) => t.name);
  };
  try {
    const plain = await list(1, {});
    const eliciting = await list(2, { elicitation: { form: {} } });
    assert.not.ok(plain.includes('trigger-elicitation-request'), 'server-everything was initialized without elicitation for the first');
    assert.ok(eliciting.includes('trigger-elicitation-request'), 'and with it for the second');
    assert.is(markedProcesses(marker).length, 2, 'two sessions: the probed process and one more');
  } finally {
    await transport.close();
    reapMarked(marker);
  }
});

edges.run();

const known = suite('wrapModernClient: verdicts known beforehand');

known('should probe again when a cached modern verdict meets a legacy server, and cache the new verdict', async () => {
  const marker = randomUUID();
  const target: StdioChildOptions = { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' };
  const cache = new VerdictCache();
  cache.set(targetKey(target), { era: 'modern', version: '2026-07-28' }, 60_000);
  const transport = wrapModernClient(target, { cache });
  const seen: Array<[string, any]> = [];
  transport.events.on('*', (type, payload) => void seen.push([type, payload]));
  const c = await connectPinned(transport);
  try {
    assert.equal(
      seen.map(([t]) => t),
      ['verdict', 'reprobe', 'probe', 'fallback', 'verdict'],
    );
    assert.is(seen[0]![1].source, 'cache');
    assert.match(seen[1]![1].reason, 'server/discover is not a method the server knows');
    assert.equal([transport.verdict, transport.source], [{ era: 'legacy' }, 'probe']);
    assert.equal(cache.get(targetKey(target)), { era: 'legacy' });
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { message: 'fixed' } })), 'Echo: fixed');
  } finally {
    await c.client.close();
    reapMarked(marker);
  }
});

known('should probe again when the server a cached modern verdict was sent to goes away before it answers', async () => {
  const marker = randomUUID();
  const target = quirky('exit', marker);
  const cache = new VerdictCache();
  cache.set(targetKey(target), { era: 'modern', version: '2026-07-28' }, 60_000);
  const transport = wrapModernClient(target, { cache });
  const seen: Array<[string, any]> = [];
  transport.events.on('*', (type, payload) => void seen.push([type, payload]));
  const c = await connectPinned(transport);
  try {
    assert.equal(
      seen.map(([t]) => t),
      ['verdict', 'reprobe', 'probe', 'fallback', 'verdict'],
    );
    assert.match(seen[1]![1].reason, 'went away');
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { text: 'legacy after all' } })), 'legacy after all');
  } finally {
    await c.client.close();
    reapMarked(marker);
  }
});

known('should probe again when a prior legacy verdict meets a modern-only server', async () => {
  const handler = createMcpHandler(createDualEraServer, { legacy: 'reject' });
  const server = await serveNodeHttp((r) => handler.fetch(r), { port: 0 });
  try {
    const transport = wrapModernClient(
      { url: `${server.origin}/mcp` },
      { cache: new VerdictCache(), prior: { era: 'legacy', http: 'streamable' } },
    );
    const seen: string[] = [];
    transport.events.on('*', (type) => void seen.push(type));
    const c = await connectPinned(transport);
    try {
      assert.equal(seen, ['verdict', 'reprobe', 'probe', 'verdict']);
      assert.is(transport.verdict?.era, 'modern');
      assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { message: 'modern after all' } })), 'Echo: modern after all');
    } finally {
      await c.client.close();
    }
    const pinned = wrapModernClient({ url: `${server.origin}/mcp` }, { cache: new VerdictCache(), pin: 'legacy' });
    const pinnedSeen: string[] = [];
    pinned.events.on('*', (type) => void pinnedSeen.push(type));
    const failure = await connectPinned(pinned).then(
      async (p) => {
        await p.client.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    assert.ok(failure, 'a pinned legacy verdict is not second-guessed: the modern-only server refuses');
    assert.equal(pinnedSeen, ['verdict']);
    await pinned.close();
  } finally {
    await server.close();
  }
});

known.run();
