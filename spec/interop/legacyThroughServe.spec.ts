/**
 * A legacy host reaching a `serve` endpoint through `wrapLegacyClient` (legacy → modern → legacy):
 * an SDK v1 client, `wrapLegacyClient` answering its `initialize` from the `server/discover` of a
 * `wrapLegacyServer` in front of the real server-everything. What the server declared at
 * `initialize` reaches the host as a direct `initialize` on the same endpoint shows it, its legacy
 * `tasks` included: the server's core tasks cross as the tasks extension and come back as core
 * tasks, which a task-augmented call of the host shows, run to its end through both adapters.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
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

chain('should show the host what server-everything declared at a direct initialize, its tasks included', async () => {
  const url = new URL(`${http.origin}/mcp`);
  const direct = await capabilitiesThrough(new StreamableHTTPClientTransport(url));
  assert.equal(direct['tasks'], { list: {}, cancel: {}, requests: { tools: { call: {} } } }, 'what server-everything declares');
  assert.equal(await capabilitiesThrough(wrapLegacyClient(url)), direct);
});

chain("should run the host's task-augmented call through both adapters to its end, and list it", async () => {
  const client = new Client({ name: 'legacy-host', version: '1.0.0' }, { capabilities: {} });
  await client.connect(wrapLegacyClient(new URL(`${http.origin}/mcp`)) as never);
  try {
    const seen: Array<{ type: string; task?: { taskId: string }; result?: { content?: Array<{ text?: string }> } }> = [];
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'simulate-research-query', arguments: { topic: 'tides' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    ))
      seen.push(m as never);
    const created = seen.find((m) => m.type === 'taskCreated');
    const result = seen.find((m) => m.type === 'result');
    assert.ok(created?.task?.taskId, JSON.stringify(seen));
    assert.match(String(result?.result?.content?.[0]?.text), /Research Report: tides/);
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(
      listed.tasks.some((t) => t.taskId === created!.task!.taskId && t.status === 'completed'),
      JSON.stringify(listed),
    );
  } finally {
    await client.close();
  }
});

chain.run();
