/**
 * A server process started ahead (`startAhead`) is taken over by the first `StdioChildTransport`
 * started for the same command line, environment and directory, whatever happened to it
 * meanwhile: still booting, already answered into its pipe, exited, or never spawned. Other
 * command lines start their own.
 */
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdapterError } from '../../lib/core/errors.ts';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { startAhead } from '../../lib/transport/spawnChild.ts';
import { StdioChildTransport, type StdioChildOptions } from '../../lib/transport/stdioChild.ts';
import { EVERYTHING, MARKER, markedProcesses, reapMarked, sleep } from '../helpers/everything.ts';

const INITIALIZE = {
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'spec', version: '1' } },
};

function everything(marker: string): StdioChildOptions {
  return { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' };
}

function answer(t: StdioChildTransport, id: number): Promise<JsonRpcMessage> {
  return new Promise((resolve) => {
    t.onmessage = (m) => {
      if ('id' in m && m.id === id && !('method' in m)) resolve(m);
    };
  });
}

const s = suite('startAhead');

s('should hand the process started ahead to the first transport of the same command line, which speaks to it', async () => {
  const marker = randomUUID();
  startAhead(everything(marker));
  const [ahead] = markedProcesses(marker);
  assert.ok(ahead, 'started at once');
  // A transport built from an equal (not the same) options object, after the server has booted.
  await sleep(800);
  const t = new StdioChildTransport({ ...everything(marker), shutdownGraceMs: 200 });
  try {
    await t.start();
    assert.is(t.pid, ahead!.pid);
    const answered = answer(t, 1);
    await t.send(INITIALIZE);
    const m = (await answered) as { result?: { serverInfo?: { name?: string } } };
    assert.is(m.result?.serverInfo?.name, 'mcp-servers/everything');
    // A second transport of the same command line starts its own.
    const other = new StdioChildTransport(everything(marker));
    await other.start();
    assert.is.not(other.pid, ahead!.pid);
    await other.close();
  } finally {
    await t.close();
    reapMarked(marker);
  }
});

s('should leave it to a transport of another command line or environment, which starts its own', async () => {
  const marker = randomUUID();
  startAhead(everything(marker));
  const [ahead] = markedProcesses(marker);
  const t = new StdioChildTransport({ ...everything(marker), env: { [MARKER]: marker, EXTRA: '1' } });
  try {
    await t.start();
    assert.is.not(t.pid, ahead!.pid);
    const taker = new StdioChildTransport(everything(marker));
    await taker.start();
    assert.is(taker.pid, ahead!.pid, 'still waiting for its own command line');
    await taker.close();
  } finally {
    await t.close();
    reapMarked(marker);
  }
});

s('should report a process that exited before it was taken over as exited, with its code and stderr', async () => {
  const options: StdioChildOptions = {
    command: process.execPath,
    args: ['-e', 'console.error("cannot go on"); process.exit(3)'],
    stderr: 'ignore',
  };
  startAhead(options);
  await sleep(500);
  const t = new StdioChildTransport(options);
  const closed = new Promise<void>((r) => (t.onclose = () => r()));
  await t.start();
  await closed;
  assert.is(t.running, false);
  assert.is(t.failure?.exitCode, 3);
  assert.equal(t.failure?.stderr, ['cannot go on']);
});

s('should fail the start of a transport whose command could not be started ahead, and throw nothing meanwhile', async () => {
  const options: StdioChildOptions = { command: 'mde-no-such-command', stderr: 'ignore' };
  startAhead(options);
  await sleep(200);
  const t = new StdioChildTransport(options);
  try {
    await t.start();
    assert.unreachable('started');
  } catch (e) {
    assert.instance(e, AdapterError);
    assert.is((e as AdapterError).code, 'upstream-exited');
    assert.match((e as Error).message, 'cannot start mde-no-such-command');
  }
});

s.run();
