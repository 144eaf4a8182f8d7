/**
 * Interop with real peers: SDK v1 clients (1.32.2, and 1.17.5 on the 2025-06-18 dialect) reach a
 * modern-only server written with the v2 SDK (`legacy: 'reject'`) over stdio and HTTP, through
 * `wrapLegacyClient` (client side), through `wrapModernServer` (server side), and through the
 * `mcp-dual-era connect` command between them (stdio host, stdio or HTTP server). Without a wrap the
 * same clients are refused. Every feature is answered by the v1 client's own handlers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as Http117 } from 'sdk-1-17/client/streamableHttp.js';
import { StdioClientTransport as Stdio117 } from 'sdk-1-17/client/stdio.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { StdioChildTransport } from '../../lib/transport/stdioChild.ts';
import { wrapLegacyClient } from '../../lib/wrap/legacyClient/wrapLegacyClient.ts';
import { wrapModernServer, type ModernServerWrap } from '../../lib/wrap/modernServer/wrapModernServer.ts';
import { legacyProgress, sleep, textOf, waitFor } from '../helpers/everything.ts';
import {
  CONNECT_STDIO,
  connectCommand,
  legacyClient,
  MODERN_STDIO,
  ROOTS,
  startModernHttp,
  WRAPPED_STDIO,
  type LegacyClient,
} from '../helpers/modernFixture.ts';

const NOTE = 'note://greeting';

// ── without a wrap ──────────────────────────────────────────────────────────

const unwrapped = suite('a v1 client and a modern-only v2 server, without a wrap');

unwrapped('should be refused over stdio: the server rejects the initialize handshake', async () => {
  const client = new Client({ name: 'v1', version: '1.32.2' });
  const transport = new StdioClientTransport({ ...MODERN_STDIO, env: getDefaultEnvironment() });
  const failure = await client.connect(transport).then(
    () => undefined,
    (e: unknown) => e as Error & { code?: number; data?: { supported?: string[] } },
  );
  await client.close();
  assert.ok(failure, 'connect failed');
  assert.is(failure!.code, -32022);
  assert.equal(failure!.data?.supported, ['2026-07-28']);
});

unwrapped('should be refused over HTTP', async () => {
  const modern = await startModernHttp();
  const client = new Client({ name: 'v1', version: '1.32.2' });
  try {
    const failure = await client.connect(new StreamableHTTPClientTransport(new URL(modern.url))).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(failure, 'connect failed');
    assert.match(failure!.message, /-32022/);
    assert.match(failure!.message, /2026-07-28/);
  } finally {
    await client.close();
    await modern.close();
  }
});

unwrapped.run();

// ── the same features in every placement ─────────────────────────────────────

interface Placement {
  readonly name: string;
  readonly sdk: '1.32.2' | '1.17.5';
  /** Connects the client; returns what to close afterwards. */
  connect(client: LegacyClient): Promise<() => Promise<void>>;
}

function exercise(placement: Placement): void {
  const s = suite(`${placement.name} (v1 SDK ${placement.sdk})`);
  let client: LegacyClient;
  let teardown: () => Promise<void> = async () => {};
  s.before(async () => {
    client = legacyClient(placement.sdk);
    teardown = await placement.connect(client);
  });
  s.after(async () => {
    await client.close();
    await teardown();
  });

  s('should answer initialize from server/discover: server info, capabilities, instructions', () => {
    assert.equal(client.getServerVersion(), { name: 'modern-fixture', version: '2.4.0' });
    const caps = client.getServerCapabilities()!;
    assert.ok(caps['tools'] && caps['prompts'] && caps['logging']);
    assert.equal(caps['resources'], { subscribe: true, listChanged: true });
    assert.is(client.getInstructions(), 'A modern-only fixture.');
  });

  s('should answer ping locally', async () => {
    assert.equal(await client.ping(), {});
  });

  s('should list and call tools', async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'echo'));
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'hi');
  });

  s('should carry a tool argument annotated x-mcp-header', async () => {
    const text = textOf(await client.callTool({ name: 'route', arguments: { region: 'eu-west', text: 'x' } }));
    assert.ok(text.startsWith('eu-west:x:'), text);
  });

  s('should get a prompt', async () => {
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    assert.equal(prompt.messages[0]!.content, { type: 'text', text: 'Say hello to Ada' });
  });

  s('should read a resource, and report a missing one with -32002', async () => {
    const read = await client.readResource({ uri: NOTE });
    assert.is(read.contents[0]!['text'], 'hello');
    const failure = await client.readResource({ uri: 'note://item/missing' }).then(
      () => undefined,
      (e: { code?: number }) => e,
    );
    assert.is(failure?.code, -32002);
  });

  s('should answer an inputRequired elicitation with the client handler, echoing requestState', async () => {
    client.elicitations.length = 0;
    const text = textOf(await client.callTool({ name: 'ask_name', arguments: {} }));
    assert.is(text, 'Hello, Ada! (state intact)');
    assert.is(client.elicitations.length, 1);
    assert.is((client.elicitations[0] as { message: string }).message, 'What is your name?');
  });

  s('should answer sampling, then roots, over two rounds', async () => {
    const text = textOf(await client.callTool({ name: 'consult', arguments: {} }));
    assert.is(text, `model said Paris; roots ${ROOTS[0]!.uri}`);
  });

  s('should send no logs before setLevel, then those at or above the level', async () => {
    client.logs.length = 0;
    await client.callTool({ name: 'work', arguments: { steps: 4 } });
    await sleep(50);
    assert.equal(client.logs, []);
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'work', arguments: { steps: 4 } });
    assert.ok(await waitFor(() => client.logs.length >= 2, 2000));
    await sleep(50);
    assert.equal(client.logs, [
      { level: 'info', data: 'step 1' },
      { level: 'info', data: 'step 3' },
    ]);
  });

  s('should forward progress under the client token', async () => {
    const progress = legacyProgress(client);
    try {
      const result = await client.callTool({ name: 'work', arguments: { steps: 3 } }, undefined, { onprogress: progress.onprogress });
      assert.is(textOf(result), 'did 3 steps');
      await sleep(30);
      assert.equal(progress.received(), [1, 2, 3]);
    } finally {
      progress.stop();
    }
  });

  s('should deliver a resource update after subscribe, and none after unsubscribe', async () => {
    client.updates.length = 0;
    await client.subscribeResource({ uri: NOTE });
    await client.callTool({ name: 'touch', arguments: { uri: NOTE } });
    assert.ok(await waitFor(() => client.updates.length > 0, 3000), 'an update arrived');
    assert.is(client.updates[0], NOTE);
    await client.unsubscribeResource({ uri: NOTE });
    client.updates.length = 0;
    await client.callTool({ name: 'touch', arguments: { uri: NOTE } });
    await sleep(200);
    assert.equal(client.updates, []);
  });

  s('should cancel a call upstream', async () => {
    const before = Number(textOf(await client.callTool({ name: 'cancellations', arguments: {} })));
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal }).then(
      () => 'answered',
      () => 'rejected',
    );
    await sleep(150);
    controller.abort('enough');
    assert.is(await call, 'rejected');
    let after = before;
    for (let i = 0; i < 40 && after === before; i++) {
      await sleep(50);
      after = Number(textOf(await client.callTool({ name: 'cancellations', arguments: {} })));
    }
    assert.is(after, before + 1, 'the server saw the cancellation');
  });

  s('should drop structuredContent that is not an object', async () => {
    const result = await client.callTool({ name: 'numbers', arguments: {} });
    assert.is(textOf(result), '[1,2,3]');
    assert.not.ok('structuredContent' in result);
  });

  s.run();
}

const httpTransport = (client: LegacyClient, url: string) =>
  client.sdk === '1.32.2' ? new StreamableHTTPClientTransport(new URL(url)) : new Http117(new URL(url));

for (const sdk of ['1.32.2', '1.17.5'] as const) {
  exercise({
    name: 'wrapLegacyClient over stdio',
    sdk,
    async connect(client) {
      await client.connect(wrapLegacyClient(new StdioChildTransport(MODERN_STDIO)));
      return async () => {};
    },
  });

  exercise({
    name: 'wrapLegacyClient over HTTP',
    sdk,
    async connect(client) {
      const modern = await startModernHttp();
      await client.connect(wrapLegacyClient(modern.url));
      return () => modern.close();
    },
  });

  exercise({
    name: 'wrapModernServer over stdio (mcp-dual-era serve --modern --stdio)',
    sdk,
    async connect(client) {
      const options = { ...WRAPPED_STDIO, env: getDefaultEnvironment(), stderr: 'ignore' as const };
      await client.connect(sdk === '1.32.2' ? new StdioClientTransport(options) : new Stdio117(options));
      return async () => {};
    },
  });

  if (sdk === '1.32.2') {
    exercise({
      name: 'mcp-dual-era connect (the command) to a stdio server',
      sdk,
      async connect(client) {
        await client.connect(new StdioClientTransport({ ...CONNECT_STDIO, env: getDefaultEnvironment(), stderr: 'ignore' }));
        return async () => {};
      },
    });

    exercise({
      name: 'mcp-dual-era connect (the command) to an HTTP server',
      sdk,
      async connect(client) {
        const modern = await startModernHttp();
        await client.connect(new StdioClientTransport({ ...connectCommand([modern.url]), env: getDefaultEnvironment(), stderr: 'ignore' }));
        return () => modern.close();
      },
    });
  }

  exercise({
    name: 'wrapModernServer over HTTP',
    sdk,
    async connect(client) {
      const modern = await startModernHttp();
      const wrap: ModernServerWrap = wrapModernServer(modern.url);
      const front: RunningHttpServer = await serveNodeHttp(wrap, { port: 0 });
      await client.connect(httpTransport(client, `${front.origin}/mcp`));
      return async () => {
        await wrap.close();
        await front.close();
        await modern.close();
      };
    },
  });
}
