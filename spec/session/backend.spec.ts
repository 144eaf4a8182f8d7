/**
 * `stdioBackend` with warm spares, on the real server-everything: no process before the first
 * session; afterwards one booted process waits, the next session takes it (already running, so it
 * does not wait for a boot), a spare that died while waiting is passed over, and closing the
 * backend stops the spare. Processes are found by a marker in their environment.
 */
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stdioBackend } from '../../lib/session/backend.ts';
import type { StdioChildTransport } from '../../lib/transport/stdioChild.ts';
import { EVERYTHING, MARKER, markedProcesses, markedProcessesGone, reapMarked, waitFor } from '../helpers/everything.ts';

const b = suite('stdioBackend: warm spares');

b('should keep one booted process ready from the first session on, and stop it on close', async () => {
  const marker = randomUUID();
  const backend = stdioBackend(
    { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' },
    { spares: 1 },
  );
  const opened: StdioChildTransport[] = [];
  try {
    assert.is(markedProcesses(marker).length, 0, 'nothing runs before it is needed');
    const first = (await backend.connect()) as StdioChildTransport;
    opened.push(first);
    assert.not.ok(first.running, 'the first session starts its own process');
    await first.start();
    assert.ok(await waitFor(() => markedProcesses(marker).length === 2, 5000), 'a spare was started beside it');
    const second = (await backend.connect()) as StdioChildTransport;
    opened.push(second);
    assert.ok(second.running, 'the next session gets the spare, already running');
    const pid = second.pid;
    await second.start();
    assert.is(second.pid, pid, 'start() does not spawn again');
    assert.ok(await waitFor(() => markedProcesses(marker).length === 3, 5000), 'and a new spare replaces it');
    const spare = markedProcesses(marker).find((p) => p.pid !== first.pid && p.pid !== second.pid)!;
    process.kill(spare.pid, 'SIGKILL');
    await waitFor(() => markedProcesses(marker).length === 2, 5000);
    await new Promise((r) => setTimeout(r, 200)); // the exit reaches this process a moment after /proc shows it
    const third = (await backend.connect()) as StdioChildTransport;
    opened.push(third);
    assert.not.ok(third.running, 'a spare that died while waiting is passed over');
    await backend.close!();
    await Promise.all(opened.map((t) => t.close()));
    assert.ok(await markedProcessesGone(marker, 5000), `still running: ${JSON.stringify(markedProcesses(marker))}`);
  } finally {
    reapMarked(marker);
  }
});

b('should start nothing ahead without spares', async () => {
  const marker = randomUUID();
  const backend = stdioBackend({ command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' });
  try {
    const first = (await backend.connect()) as StdioChildTransport;
    await first.start();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(
      markedProcesses(marker).map((p) => p.pid),
      [first.pid],
    );
    await first.close();
  } finally {
    reapMarked(marker);
  }
});

b.run();
