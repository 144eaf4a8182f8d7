/**
 * Interop with a server on the 2025-03-26 dialect (v1 SDK 1.12.3, fixtures/servers/sdk1123Server.ts)
 * through `wrapModernClient`, over stdio and over sessionful Streamable HTTP: a modern-only v2
 * client (pinned to 2026-07-28) calls tools, answers the server's sampling and roots pushes as
 * input_required rounds, gets progress and a log at its level, a prompt and a resource.
 */
import { LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { VerdictCache } from '../../lib/probe/verdictCache.ts';
import { wrapModernClient } from '../../lib/wrap/modernClient/wrapModernClient.ts';
import { ROOT, sleep, textOf } from '../helpers/everything.ts';
import { connectPinned, ROOTS, type Connected } from '../helpers/modernClient.ts';

/** Whether the 1.12.3 SDK is installed (the `sdk-v1-12` alias among the devDependencies). */
function installed(): boolean {
  try {
    createRequire(import.meta.url).resolve('sdk-v1-12/server/index.js');
    return true;
  } catch {
    return false;
  }
}

/** The HTTP fixture, loaded only when its SDK is there, so a missing install fails one test, not the run. */
async function startSdk1123Http() {
  return (await import('../../fixtures/servers/sdk1123Server.ts')).startSdk1123Http();
}

/** `rootsAsked`: whether the client is asked for its roots (not when the wrap has roots of its own: those answer). */
async function exercise(c: Connected, rootsAsked: boolean): Promise<void> {
  const { client } = c;
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.is(client.getServerVersion()?.name, 'sdk-1.12.3-fixture');
  assert.equal(
    (await client.listTools()).tools.map((t) => t.name),
    ['echo', 'sample', 'roots', 'count'],
  );
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })), '1.12.3: hi');
  assert.is(textOf(await client.callTool({ name: 'sample', arguments: { prompt: 'hello?' } })), 'sampled: a sampled answer');
  assert.is(textOf(await client.callTool({ name: 'roots', arguments: {} })), `roots: ${ROOTS[0]!.uri}`);
  assert.ok(c.asked.includes('sampling') && c.asked.includes('roots') === rootsAsked, JSON.stringify(c.asked));
  const progress: number[] = [];
  const logs: string[] = [];
  client.setNotificationHandler('notifications/message', (n) => void logs.push(String(n.params.data)));
  assert.is(
    textOf(
      await client.callTool(
        { name: 'count', arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: 'info' } },
        { onprogress: (p) => progress.push(p.progress) },
      ),
    ),
    'counted',
  );
  await sleep(50);
  assert.ok(progress.length >= 2 && progress.every((v, i) => v === i + 1), JSON.stringify(progress));
  assert.equal(logs, ['counted to three']);
  const prompt = await client.getPrompt({ name: 'hello', arguments: { name: 'Ada' } });
  assert.equal(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Ada!' });
  assert.is(((await client.readResource({ uri: 'note://1' })).contents[0] as { text: string }).text, 'a 2025-03-26 note');
}

const s = suite('wrapModernClient: a pinned modern client to an SDK 1.12.3 (2025-03-26) server');

s('should find the SDK 1.12.3 test peer installed', () => {
  assert.ok(installed(), 'the sdk-v1-12 devDependency is missing: run npm install');
});

s('should work over stdio', async () => {
  const transport = wrapModernClient(
    {
      command: process.execPath,
      args: ['--import', 'tsx', resolve(ROOT, 'fixtures/servers/sdk1123Stdio.ts')],
      cwd: ROOT,
      stderr: 'ignore',
    },
    { cache: new VerdictCache(), legacy: { roots: ROOTS } },
  );
  const c = await connectPinned(transport);
  try {
    assert.equal(transport.verdict, { era: 'legacy' });
    await exercise(c, false);
  } finally {
    await c.client.close();
  }
});

s('should work over Streamable HTTP', async () => {
  const server = await startSdk1123Http();
  const transport = wrapModernClient({ url: server.url }, { cache: new VerdictCache() });
  const c = await connectPinned(transport);
  try {
    assert.equal(transport.verdict, { era: 'legacy', http: 'streamable' });
    await exercise(c, true);
  } finally {
    await c.client.close();
    await server.close();
  }
});

s('should keep the legacy session: its id on every request, a new session after a 404, DELETE on close', async () => {
  const server = await startSdk1123Http();
  const transport = wrapModernClient({ url: server.url }, { cache: new VerdictCache() });
  const c = await connectPinned(transport);
  try {
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { text: 'one' } })), '1.12.3: one');
    const sessionOf = (line: string) => line.split(' ')[1]!;
    const first = server.requests.filter((r) => r !== 'POST -').map(sessionOf);
    const session = first.at(-1)!;
    server.expire();
    // The request that meets the 404 never ran: it is sent again on a new session.
    assert.is(textOf(await c.client.callTool({ name: 'echo', arguments: { text: 'two' } })), '1.12.3: two');
    const renewed = server.requests.at(-1)!;
    assert.ok(
      server.requests.includes(`POST ${session}`) && sessionOf(renewed) !== session && sessionOf(renewed) !== '-',
      JSON.stringify(server.requests),
    );
    await c.client.close();
    await sleep(100);
    assert.ok(server.requests.includes(`DELETE ${sessionOf(renewed)}`), JSON.stringify(server.requests));
  } finally {
    await c.client.close();
    await server.close();
  }
});

s.run();
