/**
 * A legacy client that leaves before its `initialize` is answered (a host that gave up on a slow
 * server) opens nothing: no session is kept for it, and the server process started for it ends,
 * instead of both being held until the session idles out. A slow-starting server-everything
 * behind `wrapLegacyServer` over HTTP; the clients are raw POSTs aborted mid-wait.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stdioBackend } from '../../lib/session/backend.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { EVERYTHING, MARKER, markedProcesses, markedProcessesGone, reapMarked, ROOT, sleep, waitFor } from '../helpers/everything.ts';

const SLOW = resolve(ROOT, 'fixtures/servers/slowStart.mjs');
const LEFT = 3;

const abandoned = suite('legacy initialize abandoned by its client');

abandoned('should keep no session and no server process for a client that left before its initialize was answered', async () => {
  const marker = randomUUID();
  const wrap = wrapLegacyServer({
    upstream: stdioBackend({
      command: process.execPath,
      args: [SLOW, EVERYTHING, 'stdio'],
      env: { [MARKER]: marker, SLOW_START_MS: '1500' },
      stderr: 'ignore',
    }),
  });
  const http = await serveNodeHttp(wrap, { port: 0 });
  try {
    const left = Array.from({ length: LEFT }, async (_, i) => {
      const controller = new AbortController();
      const sent = fetch(`${http.origin}/mcp`, {
        method: 'POST',
        signal: controller.signal,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer caller-${i}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: `gave-up-${i}`, version: '1' } },
        }),
      }).catch(() => 'left');
      await sleep(300);
      controller.abort();
      return sent;
    });
    assert.equal(await Promise.all(left), Array(LEFT).fill('left'));
    // The servers started for them start, and are ended.
    await waitFor(() => markedProcesses(marker).length > 0, 5000).catch(() => {});
    await sleep(2500);
    assert.is(wrap.legacySessions, 0, 'no session kept for a client that left');
    assert.ok(await markedProcessesGone(marker, 5000), `no server process left: ${JSON.stringify(markedProcesses(marker))}`);
  } finally {
    await http.close();
    await wrap.close();
    reapMarked(marker);
  }
});

abandoned.run();
