/**
 * A host stopping `connect` (SIGINT or SIGTERM) while a call is in flight: the call is answered at
 * once (the bridge is shutting down), the command leaves well before a host's patience runs out
 * (Claude Code kills it 100–400 ms after the signal), and the server it started is ended with it.
 * The built command in front of server-everything, a legacy host's raw messages on its stdio.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { builtCli } from '../helpers/built.ts';
import { EVERYTHING, MARKER, markedProcesses, markedProcessesGone, reapMarked, ROOT } from '../helpers/everything.ts';

/** Far below the 1.5 s the bridge used to take, and above what a loaded machine adds to leaving. */
const LEAVES_WITHIN_MS = 1000;

const s = suite('connect stopped by its host');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  s(`should answer what is in flight and leave at once on ${signal}, ending its server`, async () => {
    const marker = randomUUID();
    const child = spawn(process.execPath, [builtCli(), 'connect', '--quiet', '--', process.execPath, EVERYTHING, 'stdio'], {
      cwd: ROOT,
      env: { ...process.env, [MARKER]: marker },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const lines = () =>
      out
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { id?: number; result?: unknown; error?: { message: string }; method?: string });
    const until = async (ok: () => boolean) => {
      const deadline = Date.now() + 30_000;
      while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };
    try {
      child.stdin!.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host', version: '1' } } })}\n`,
      );
      await until(() => lines().some((l) => l.id === 1));
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      child.stdin!.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 30 }, _meta: { progressToken: 'p' } } })}\n`,
      );
      // In flight once the server reports its first step.
      await until(() => lines().some((l) => l.method === 'notifications/progress'));
      assert.ok(
        lines().some((l) => l.method === 'notifications/progress'),
        'the call is under way',
      );
      const signalled = performance.now();
      child.kill(signal);
      const code = await exited;
      const took = performance.now() - signalled;
      assert.is(code, 0);
      console.log(`  left ${Math.round(took)} ms after ${signal}`);
      assert.ok(took < LEAVES_WITHIN_MS, `left ${Math.round(took)} ms after ${signal}`);
      const answer = lines().find((l) => l.id === 2);
      assert.ok(answer?.error, `the call in flight was answered: ${out}`);
      assert.match(answer!.error!.message, 'shutting down');
      assert.ok(await markedProcessesGone(marker, 5000), `the server is ended: ${JSON.stringify(markedProcesses(marker))}`);
    } finally {
      child.kill('SIGKILL');
      reapMarked(marker);
    }
  });
}

s.run();
