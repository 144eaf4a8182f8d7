/**
 * Legacy sessions across a fleet: v1 clients (SDK 1.32.2 and 1.17.5) through a real nginx, round
 * robin, in front of three replicas of `serve --fleet` over server-everything. A session's id names
 * the replica that opened it, and its POSTs (the client's calls and its answers to the server's
 * requests), its GET stream and its DELETE are forwarded there from whichever replica they land
 * on: tools, progress, elicitation, sampling, roots and resource updates work as on one process,
 * and a closed session is gone, and an id past 2^53 comes back byte for byte. A session whose
 * replica is gone answers 404 (its client initializes again, as the spec says).
 */
import { Client as Client132 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Http132 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as Client117 } from 'sdk-1-17/client/index.js';
import { StreamableHTTPClientTransport as Http117 } from 'sdk-1-17/client/streamableHttp.js';
import {
  CreateMessageRequestSchema as CreateMessage117,
  ElicitRequestSchema as Elicit117,
  ListRootsRequestSchema as ListRoots117,
  ResourceUpdatedNotificationSchema as Updated117,
} from 'sdk-1-17/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertLegacyProgress, assertLegacyResourceUpdate, textOf } from '../helpers/everything.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { forwardedIn, startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { startNginx, type RunningNginx } from '../helpers/nginx.ts';

const DOC = 'demo://resource/static/document/architecture.md';
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** What a v1 client of either version needs for these checks. */
interface Wired {
  readonly client: Client132;
  readonly transport: { sessionId?: string | undefined; terminateSession(): Promise<void> };
  readonly asked: string[];
  readonly updates: string[];
}

function wire(version: '1.32.2' | '1.17.5', url: string): Wired {
  const asked: string[] = [];
  const updates: string[] = [];
  const capabilities = { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } };
  const elicit = async () => (asked.push('elicitation'), { action: 'accept' as const, content: { name: 'Grace Hopper', check: true } });
  const sample = async () => (
    asked.push('sampling'),
    { model: 'legacy-model', role: 'assistant' as const, content: { type: 'text' as const, text: 'a legacy sample' } }
  );
  const roots = async () => (asked.push('roots'), { roots: [{ uri: 'file:///legacy/root', name: 'legacy-root' }] });
  if (version === '1.32.2') {
    const client = new Client132({ name: 'fleet-legacy', version }, capabilities);
    client.setRequestHandler(ElicitRequestSchema, elicit);
    client.setRequestHandler(CreateMessageRequestSchema, sample);
    client.setRequestHandler(ListRootsRequestSchema, roots);
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    return { client, transport: new Http132(new URL(url)), asked, updates };
  }
  const client = new Client117({ name: 'fleet-legacy', version }, capabilities);
  client.setRequestHandler(Elicit117, elicit);
  client.setRequestHandler(CreateMessage117, sample);
  client.setRequestHandler(ListRoots117, roots);
  client.setNotificationHandler(Updated117, (n) => void updates.push(n.params.uri));
  return { client: client as unknown as Client132, transport: new Http117(new URL(url)), asked, updates };
}

const legacy = suite('legacy sessions across three replicas behind nginx');
let fleet: SpecFleet;
let replicas: Replica[] = [];
let nginx: RunningNginx | undefined;
legacy.before(async () => {
  fleet = specFleet();
  replicas = await Promise.all([startReplica(fleet), startReplica(fleet), startReplica(fleet)]);
  nginx = await startNginx(replicas.map((r) => new URL(r.origin).host));
});
legacy.after(async () => {
  await nginx?.stop();
  await Promise.all(replicas.map(stopReplica));
  await fleet.end();
});

for (const version of ['1.32.2', '1.17.5'] as const) {
  legacy(`should serve a v1 ${version} client whichever replica each of its requests lands on`, async () => {
    const { client, transport, asked, updates } = wire(version, `${nginx!.url}/mcp`);
    const before = await forwardedIn(replicas);
    await client.connect(transport as never, { timeout: 20_000 });
    try {
      const sessionId = transport.sessionId!;
      assert.type(sessionId, 'string');
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ['echo', 'get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request'])
        assert.ok(names.includes(name), name);
      for (let i = 0; i < 6; i++)
        assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: `m${i}` } })), `Echo: m${i}`);
      // The server's own requests come on the call's stream; the client's answers are POSTed and
      // land anywhere: each reaches the session's replica.
      // (1.17.5 refuses server-everything's elicitation schema itself, which is newer than it: on one process too.)
      if (version !== '1.17.5')
        assert.match(textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })), '- Name: Grace Hopper');
      assert.match(
        textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } })),
        '"text": "a legacy sample"',
      );
      assert.match(textOf(await client.callTool({ name: 'get-roots-list', arguments: {} })), 'URI: file:///legacy/root');
      for (const kind of version === '1.17.5' ? ['sampling', 'roots'] : ['elicitation', 'sampling', 'roots'])
        assert.ok(asked.includes(kind), kind);
      await assertLegacyProgress(client);
      // Updates come on the GET stream, opened on any replica and forwarded to the session's.
      await assertLegacyResourceUpdate(client, updates, DOC);
      // Round robin over three: most of the session's requests landed elsewhere than its replica.
      assert.ok((await forwardedIn(replicas)) - before >= 8, 'requests of the session were forwarded to its replica');
      await transport.terminateSession();
      // Closed on its replica: wherever the next request lands, the session is gone.
      for (let i = 0; i < 3; i++) {
        const after = await fetch(`${nginx!.url}/mcp`, {
          method: 'POST',
          headers: { ...HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        });
        assert.is(after.status, 404, `request ${i} after DELETE`);
        await after.body?.cancel();
      }
    } finally {
      await client.close();
    }
  });
}

legacy("should echo ids past 2^53 byte for byte, on the session's replica and forwarded to it", async () => {
  const init = JSON.stringify(INIT).replace('"id":1', '"id":9007199254740993');
  const opened = await fetch(`${replicas[0]!.origin}/mcp`, { method: 'POST', headers: HEADERS, body: init });
  const sessionId = opened.headers.get('mcp-session-id')!;
  assert.match(await opened.text(), '"id":9007199254740993}');
  const session = { ...HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
  await (
    await fetch(`${replicas[1]!.origin}/mcp`, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).body?.cancel();
  const before = await forwardedIn(replicas);
  const listed = await fetch(`${replicas[1]!.origin}/mcp`, {
    method: 'POST',
    headers: session,
    body: '{"jsonrpc":"2.0","id":1208925819614629174706176,"method":"tools/list"}',
  });
  assert.is(listed.status, 200);
  assert.match(await listed.text(), '"id":1208925819614629174706176}');
  assert.ok((await forwardedIn(replicas)) > before, 'forwarded to the replica of the session');
  await (await fetch(`${replicas[0]!.origin}/mcp`, { method: 'DELETE', headers: session })).body?.cancel();
});

legacy('should refuse a forged hop and answer 404 for a session of a replica that is gone', async () => {
  // A session opened on the first replica directly, then that replica stops.
  const opened = await fetch(`${replicas[0]!.origin}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
  const sessionId = opened.headers.get('mcp-session-id')!;
  await opened.body?.cancel();
  assert.ok(sessionId.startsWith(`${/replica (\S+) registered/.exec(replicas[0]!.log())![1]}.`), `the id names its replica: ${sessionId}`);
  // A request that claims to be a hop of the fleet and is not.
  const forged = await fetch(`${replicas[1]!.origin}/mcp`, {
    method: 'GET',
    headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'x-mcp-dual-era-hop': `x.${Date.now()}.AAAA` },
  });
  assert.is(forged.status, 403);
  await forged.body?.cancel();
  const gone = replicas[0]!;
  await stopReplica(gone);
  const answer = await fetch(`${replicas[1]!.origin}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  assert.is(answer.status, 404);
  const body = (await answer.json()) as { error: { code: number; message: string } };
  assert.is(body.error.code, -32001);
  assert.match(body.error.message, 'Session not found');
});

legacy.run();
