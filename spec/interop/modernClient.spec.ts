/**
 * Interop through `wrapModernClient`, over stdio and over HTTP: one suite run per transport, as a
 * modern-only v2 SDK client (pinned to 2026-07-28), which fails alone against server-everything,
 * reaches it through the wrap with everything working (server-everything's stdio server, and its
 * own sessionful Streamable HTTP server); then what is each transport's own: over stdio the probed
 * process serves the session and no process is left behind (every process a suite starts carries a
 * marker), over HTTP a 2024-11-05 HTTP+SSE server written with the v1 SDK; and against a v2
 * dual-era server on each, the wrap stays modern.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createDualEraServer } from '../../fixtures/servers/dualEraServer.ts';
import { startSseServer } from '../../fixtures/servers/sseServer.ts';
import { VerdictCache } from '../../lib/probe/verdictCache.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapModernClient } from '../../lib/wrap/modernClient/wrapModernClient.ts';
import {
  EVERYTHING,
  MARKER,
  ROOT,
  markedProcesses,
  markedProcessesGone,
  reapMarked,
  startEverythingHttp,
  textOf,
} from '../helpers/everything.ts';
import {
  assertBasics,
  assertCancellation,
  assertInputRounds,
  assertLogLevels,
  assertProgress,
  assertSubscription,
  connectPinned,
  ROOTS,
  type Connected,
} from '../helpers/modernClient.ts';
import { validateMessage } from '../helpers/schemas.ts';

/** server-everything on one transport: the client's transport to it, what its probe must show, and how it ends. */
interface EverythingOn {
  readonly name: 'stdio' | 'HTTP';
  start(): Promise<{ transport: ReturnType<typeof wrapModernClient>; close(): Promise<void> }>;
  /** The verdict the probe reaches, and what else is checked of how it got there. */
  readonly verdict: unknown;
  probed?(): void;
  /** Checked once the client has closed. */
  ended?(): Promise<void>;
}

const marker = randomUUID();

const TRANSPORTS: readonly EverythingOn[] = [
  {
    name: 'stdio',
    start: async () => ({
      transport: wrapModernClient(
        { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' },
        { cache: new VerdictCache(), legacy: { roots: ROOTS } },
      ),
      close: async () => void reapMarked(marker),
    }),
    verdict: { era: 'legacy' },
    probed: () => assert.is(markedProcesses(marker).length, 1, 'one server-everything process: the probed one serves the session'),
    ended: async () => assert.ok(await markedProcessesGone(marker, 5000), `still running: ${JSON.stringify(markedProcesses(marker))}`),
  },
  {
    name: 'HTTP',
    start: async () => {
      const everything = await startEverythingHttp();
      return {
        transport: wrapModernClient({ url: everything.url }, { cache: new VerdictCache(), legacy: { roots: ROOTS } }),
        close: () => everything.close(),
      };
    },
    verdict: { era: 'legacy', http: 'streamable' },
  },
];

/** What every transport's session with server-everything must do, each checked by a helper shared with the other suites. */
const SHARED: ReadonlyArray<readonly [string, (c: Connected) => Promise<void>]> = [
  ['should list and call tools, get prompts and read resources', assertBasics],
  ['should turn elicitation and sampling pushes into input_required rounds, and roots too', assertInputRounds],
  ['should deliver progress to the progress handler', assertProgress],
  ['should deliver logs only to requests with a logLevel, at or above it', assertLogLevels],
  ['should deliver resource updates on a subscriptions/listen stream', assertSubscription],
  ['should cancel a call', assertCancellation],
];

for (const on of TRANSPORTS) {
  const legacy = suite(`wrapModernClient over ${on.name}: a pinned modern client to server-everything`);
  let connected: Connected | undefined;
  let started: Awaited<ReturnType<EverythingOn['start']>> | undefined;
  const events: Array<[string, any]> = [];

  legacy.before(async () => {
    started = await on.start();
    started.transport.events.on('*', (type, payload) => void events.push([type, payload]));
    connected = await connectPinned(started.transport);
  });

  legacy.after(async () => {
    await connected?.client.close();
    await started?.close();
  });

  legacy('should probe once with server/discover, and fall back to legacy from its refusal', async () => {
    assert.equal(
      events.map(([t]) => t),
      ['probe', 'fallback', 'verdict'],
    );
    assert.equal(events[2]![1].verdict, on.verdict);
    assert.is(connected!.transport.verdict?.era, 'legacy');
    on.probed?.();
  });

  for (const [what, check] of SHARED) legacy(what, () => check(connected!));

  legacy('should leave nothing behind once the client has closed', async () => {
    await connected!.client.close();
    await on.ended?.();
  });

  legacy.run();
}

const sse = suite('wrapModernClient over HTTP: a pinned modern client to an HTTP+SSE server');

sse('should fall back to HTTP+SSE and call tools there', async () => {
  const server = await startSseServer();
  const transport = wrapModernClient({ url: server.url }, { cache: new VerdictCache() });
  const c = await connectPinned(transport);
  try {
    assert.equal(transport.verdict, { era: 'legacy', http: 'sse' });
    assert.is(c.client.getServerVersion()?.name, 'sse-fixture');
    assert.equal(
      (await c.client.listTools()).tools.map((t) => t.name),
      ['echo'],
    );
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { text: 'old' } })), 'sse: old');
  } finally {
    await c.client.close();
    await server.close();
  }
});

sse.run();

const stdioModern = suite('wrapModernClient over stdio: a pinned modern client to a v2 dual-era server');

stdioModern('should stay modern: no fallback, the probed process carries the client straight through', async () => {
  const mark = randomUUID();
  const server = {
    command: process.execPath,
    args: ['--import', 'tsx', resolve(ROOT, 'fixtures/servers/dualEraStdio.ts')],
    cwd: ROOT,
    env: { [MARKER]: mark },
    stderr: 'ignore',
  } as const;
  const transport = wrapModernClient(server, { cache: new VerdictCache(), timeoutMs: 15_000 }); // a tsx-started server can take seconds to boot on a busy machine
  const seen: string[] = [];
  transport.events.on('*', (type) => void seen.push(type));
  const c = await connectPinned(transport);
  try {
    assert.equal(seen, ['probe', 'verdict']);
    assert.is(transport.verdict?.era, 'modern');
    assert.is(c.client.getServerVersion()?.name, 'dual-era-fixture');
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { message: 'native' } })), 'Echo: native');
    // The server's own MRTR round passes through untouched.
    assert.is(textOf(await c.client.callTool({ name: 'confirm', arguments: { action: 'deploy' } })), 'deploy: done');
    assert.equal(c.asked, ['elicitation: Really deploy?']);
    const prompt = await c.client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    assert.equal(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Ada!' });
    assert.is(((await c.client.readResource({ uri: 'note://hello' })).contents[0] as { text: string }).text, 'a note');
    const subscription = await c.client.listen({ toolsListChanged: true });
    assert.equal(subscription.honoredFilter.toolsListChanged, true, 'a subscription passes through too');
    await subscription.close();
    assert.is(
      markedProcesses(mark).filter((p) => p.command.includes('dualEraStdio.ts')).length,
      1,
      'one server process (tsx may run an esbuild helper beside it)',
    );
  } finally {
    await c.client.close();
    assert.ok(await markedProcessesGone(mark, 5000));
    reapMarked(mark);
  }
});

stdioModern.run();

const httpModern = suite('wrapModernClient over HTTP: a pinned modern client to a v2 dual-era server');

httpModern('should stay modern: no fallback, schema-valid modern POSTs with the routing headers', async () => {
  const handler = createMcpHandler(createDualEraServer);
  const posts: Array<{ headers: Record<string, string>; body: any }> = [];
  const server = await serveNodeHttp(
    async (request) => {
      if (request.method === 'POST') posts.push({ headers: Object.fromEntries(request.headers), body: await request.clone().json() });
      return handler.fetch(request);
    },
    { port: 0 },
  );
  const transport = wrapModernClient({ url: `${server.origin}/mcp` }, { cache: new VerdictCache() });
  const seen: string[] = [];
  transport.events.on('*', (type) => void seen.push(type));
  const c = await connectPinned(transport);
  try {
    assert.equal(seen, ['probe', 'verdict']);
    assert.is(transport.verdict?.era, 'modern');
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { message: 'native' } })), 'Echo: native');
    assert.is(textOf(await c.client.callTool({ name: 'confirm', arguments: { action: 'ship' } })), 'ship: done');
    const prompt = await c.client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    assert.equal(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Ada!' });
    assert.is(((await c.client.readResource({ uri: 'note://hello' })).contents[0] as { text: string }).text, 'a note');
    assert.ok(posts.length >= 4, `the calls were posted: ${posts.length}`);
    assert.ok(
      posts.every((p) => !('mcp-session-id' in p.headers)),
      'no sessions',
    );
    for (const { headers, body } of posts) {
      assert.is(headers['mcp-method'], body.method);
      assert.is(headers['mcp-protocol-version'], '2026-07-28');
      assert.equal(validateMessage('2026-07-28', body), [], body.method);
    }
    const subscription = await c.client.listen({ toolsListChanged: true });
    assert.equal(subscription.honoredFilter.toolsListChanged, true, 'a subscription passes through too');
    await subscription.close();
    const call = posts.find((p) => p.body.method === 'tools/call')!;
    assert.is(call.headers['mcp-name'], 'echo');
  } finally {
    await c.client.close();
    await server.close();
  }
});

httpModern.run();
