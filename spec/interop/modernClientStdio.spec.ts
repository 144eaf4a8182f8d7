/**
 * Interop over stdio through `wrapModernClient`: a modern-only v2 SDK client (pinned to
 * 2026-07-28), which fails alone against server-everything, reaches it through the wrap with
 * everything working; against a v2 dual-era server the wrap stays modern. Every process a suite
 * starts carries a marker, so the suite can check that none is left behind.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { wrapModernClient } from '../../lib/wrap/modernClient/wrapModernClient.ts';
import { VerdictCache } from '../../lib/probe/verdictCache.ts';
import { EVERYTHING, MARKER, ROOT, markedProcesses, markedProcessesGone, reapMarked, textOf } from '../helpers/everything.ts';
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

const legacy = suite('wrapModernClient over stdio: a pinned modern client to server-everything');
const marker = randomUUID();
let connected: Connected | undefined;
const events: Array<[string, any]> = [];

legacy.before(async () => {
  const transport = wrapModernClient(
    { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' },
    { cache: new VerdictCache(), legacy: { roots: ROOTS } },
  );
  transport.events.on('*', (type, payload) => void events.push([type, payload]));
  connected = await connectPinned(transport);
});

legacy.after(async () => {
  await connected?.client.close();
  reapMarked(marker);
});

legacy('should probe once on the process it then uses, and fall back to legacy', async () => {
  assert.equal(
    events.map(([t]) => t),
    ['probe', 'fallback', 'verdict'],
  );
  assert.equal(events[2]![1].verdict, { era: 'legacy' });
  assert.is(connected!.transport.verdict?.era, 'legacy');
  assert.is(markedProcesses(marker).length, 1, 'one server-everything process: the probed one serves the session');
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

legacy('should leave no process behind once the client has closed', async () => {
  await connected!.client.close();
  assert.ok(await markedProcessesGone(marker, 5000), `still running: ${JSON.stringify(markedProcesses(marker))}`);
});

legacy.run();

const modern = suite('wrapModernClient over stdio: a pinned modern client to a v2 dual-era server');

modern('should stay modern: no fallback, the probed process carries the client straight through', async () => {
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

modern.run();
