/**
 * `--roots` (the wrap's `roots` option) is the operator's answer to the server's `roots/list`, over
 * the roots a modern caller declares: server-everything, which asks for roots on its own shortly
 * after a session starts and keeps them, reports the operator's roots to a caller that declared
 * others, and that caller is never asked. The real server-everything behind the wrap, a v2 SDK
 * client pinned to 2026-07-28 over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { everythingBackend, markedProcessesGone, reapMarked, sleep, textOf } from '../helpers/everything.ts';

const OPERATOR = [{ uri: 'file:///srv/operator', name: 'operator' }];
const CALLER = [{ uri: 'file:///home/caller', name: 'caller' }];

const roots = suite('the operator’s roots over the caller’s (wrapLegacyServer roots, server-everything)');

roots('should answer every roots/list of the server with the operator’s roots, and never ask the caller', async () => {
  const marker = randomUUID();
  const wrap = wrapLegacyServer({ upstream: everythingBackend(marker), roots: OPERATOR });
  const http = await serveNodeHttp(wrap, { port: 0 });
  const client = new ModernClient(
    { name: 'roots-spec', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { roots: {} } },
  );
  let asked = 0;
  client.setRequestHandler('roots/list', async () => {
    asked++;
    return { roots: CALLER };
  });
  const transport = new ModernHttpTransport(new URL(`${http.origin}/mcp`));
  try {
    await client.connect(transport);
    // At once (the server's own fetch of roots is still to come), and after it.
    for (const wait of [0, 800]) {
      await sleep(wait);
      const listed = textOf(await client.callTool({ name: 'get-roots-list', arguments: {} }));
      assert.match(listed, 'file:///srv/operator', listed);
      assert.not.match(listed, 'file:///home/caller', listed);
    }
    assert.is(asked, 0, 'the caller was never asked for its roots');
  } finally {
    await client.close();
    await transport.close();
    await wrap.close();
    await http.close();
    if (!(await markedProcessesGone(marker, 5000))) reapMarked(marker);
  }
});

roots.run();
