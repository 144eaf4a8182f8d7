/**
 * A legacy host reaching a `serve` endpoint through `wrapLegacyClient` (legacy → modern → legacy):
 * an SDK v1 client, `wrapLegacyClient` answering its `initialize` from the `server/discover` of a
 * `wrapLegacyServer` in front of the real server-everything. What the server declared at
 * `initialize` reaches the host as a direct `initialize` on the same endpoint shows it, except legacy
 * `tasks`: the host sees only what the two adapters serve it, and they serve no legacy tasks.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyClient } from '../../lib/wrap/legacyClient/wrapLegacyClient.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { everythingBackend, markedProcessesGone, reapMarked } from '../helpers/everything.ts';

const chain = suite('a v1 client through wrapLegacyClient and wrapLegacyServer to server-everything');
let wrap: LegacyServerWrap;
let http: RunningHttpServer;
let marker: string;

chain.before(async () => {
  marker = randomUUID();
  wrap = wrapLegacyServer({ upstream: everythingBackend(marker) });
  http = await serveNodeHttp(wrap, { port: 0 });
});
chain.after(async () => {
  await wrap.close();
  await http.close();
  if (!(await markedProcessesGone(marker, 5000))) reapMarked(marker);
});

async function capabilitiesThrough(transport: object): Promise<Record<string, unknown>> {
  const client = new Client({ name: 'legacy-host', version: '1.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport as never);
    return client.getServerCapabilities() as Record<string, unknown>;
  } finally {
    await client.close();
  }
}

chain(
  'should show the host what server-everything declared at a direct initialize, but no legacy tasks, which it is not served',
  async () => {
    const url = new URL(`${http.origin}/mcp`);
    const direct = await capabilitiesThrough(new StreamableHTTPClientTransport(url));
    assert.equal(direct['tasks'], { list: {}, cancel: {}, requests: { tools: { call: {} } } }, 'what server-everything declares');
    const bridged = await capabilitiesThrough(wrapLegacyClient(url));
    assert.is(bridged['tasks'], undefined, 'no tasks/result nor tasks/list is served through wrapLegacyClient');
    const { tasks: _, ...rest } = direct;
    assert.equal(bridged, rest, 'every other member as it was');
  },
);

chain.run();
