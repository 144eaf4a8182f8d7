/**
 * Interop over HTTP through `wrapModernClient`: a modern-only v2 SDK client (pinned to
 * 2026-07-28) reaches server-everything's own sessionful Streamable HTTP server with everything
 * working, and a 2024-11-05 HTTP+SSE server written with the v1 SDK; against a v2 dual-era server
 * (`createMcpHandler`) the wrap stays modern and every POST carries the modern headers.
 */
import { createMcpHandler } from '@modelcontextprotocol/server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createDualEraServer } from '../../fixtures/servers/dualEraServer.ts';
import { startSseServer } from '../../fixtures/servers/sseServer.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { VerdictCache } from '../../lib/probe/verdictCache.ts';
import { wrapModernClient } from '../../lib/wrap/modernClient/wrapModernClient.ts';
import { startEverythingHttp, textOf } from '../helpers/everything.ts';
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

const legacy = suite('wrapModernClient over HTTP: a pinned modern client to server-everything');
let everything: Awaited<ReturnType<typeof startEverythingHttp>> | undefined;
let connected: Connected | undefined;
const events: Array<[string, any]> = [];

legacy.before(async () => {
  everything = await startEverythingHttp();
  const transport = wrapModernClient({ url: everything.url }, { cache: new VerdictCache(), legacy: { roots: ROOTS } });
  transport.events.on('*', (type, payload) => void events.push([type, payload]));
  connected = await connectPinned(transport);
});

legacy.after(async () => {
  await connected?.client.close();
  await everything?.close();
});

legacy('should probe with server/discover and settle on legacy Streamable HTTP from its refusal', async () => {
  assert.equal(
    events.map(([t]) => t),
    ['probe', 'fallback', 'verdict'],
  );
  assert.equal(events[2]![1].verdict, { era: 'legacy', http: 'streamable' });
});

legacy('should list and call tools, get prompts and read resources', async () => {
  await assertBasics(connected!);
});

legacy('should turn elicitation and sampling pushes into input_required rounds, and roots too', async () => {
  await assertInputRounds(connected!);
});

legacy('should deliver progress to the progress handler', async () => {
  await assertProgress(connected!);
});

legacy('should deliver logs only to requests with a logLevel, at or above it', async () => {
  await assertLogLevels(connected!);
});

legacy('should deliver resource updates on a subscriptions/listen stream', async () => {
  await assertSubscription(connected!);
});

legacy('should cancel a call', async () => {
  await assertCancellation(connected!);
});

legacy.run();

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

const modern = suite('wrapModernClient over HTTP: a pinned modern client to a v2 dual-era server');

modern('should stay modern: no fallback, schema-valid modern POSTs with the routing headers', async () => {
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

modern.run();
