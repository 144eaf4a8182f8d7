/**
 * No caller can lock out the others, or use another's session: `wrapLegacyServer` over HTTP on a
 * real socket, in front of server-everything (a process per upstream session) and our fixtures,
 * played by many callers at once with made-up `Authorization` values, as an attacker on loopback
 * would. After parked calls, listens or bare `initialize`s from dozens of principals, a new
 * principal's calls and `server/discover` are still served; sessions answer only their opener.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { wrapLegacyServer, type LegacyServerWrap, type WrapLegacyServerOptions } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { everythingBackend, markedProcesses, reapMarked, waitFor } from '../helpers/everything.ts';
import { modernPost, openListen, type ModernAnswer } from '../helpers/modernHttp.ts';

const ELICIT = { elicitation: {} };
const ACCEPT = { action: 'accept', content: { name: 'Ada Lovelace', email: 'ada@example.com' } };

interface Served {
  readonly wrap: LegacyServerWrap;
  readonly url: URL;
  readonly http: RunningHttpServer;
  close(): Promise<void>;
}

async function serve(options: WrapLegacyServerOptions): Promise<Served> {
  const wrap = wrapLegacyServer(options);
  const http = await serveNodeHttp(wrap, { port: 0 });
  return {
    wrap,
    http,
    url: new URL(`${http.origin}/mcp`),
    async close() {
      await http.close();
      await wrap.close();
    },
  };
}

/** The result of an answer, asserting it is one. */
function resultOf(answer: ModernAnswer): Record<string, any> {
  assert.ok(answer.message['result'], `a result, not ${JSON.stringify(answer.message).slice(0, 400)}`);
  return answer.message['result'];
}

/** Retries an `input_required` round of server-everything's elicitation tool with an accepting answer. */
function retryElicitation(url: URL, round: Record<string, any>, principal: string, id: number | string): Promise<ModernAnswer> {
  const [key] = Object.keys(round['inputRequests']);
  return modernPost(
    url,
    'tools/call',
    { name: 'trigger-elicitation-request', arguments: {}, inputResponses: { [key!]: ACCEPT }, requestState: round['requestState'] },
    { principal, capabilities: ELICIT, id },
  );
}

/** Runs `count` calls, `size` at a time; their results in order. */
async function inWaves<T>(count: number, size: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += size)
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, count - i) }, (_, j) => call(i + j)))));
  return out;
}

function assertServed(answer: ModernAnswer, what: string): void {
  assert.is(answer.status, 200, `${what}: ${JSON.stringify(answer.message).slice(0, 300)}`);
  resultOf(answer);
}

// ── parked calls ─────────────────────────────────────────────────────────

const parked = suite('wrapLegacyServer: parked calls cannot lock the others out (server-everything)');
const marker = `lockouts-${randomUUID()}`;
parked.after(() => {
  reapMarked(marker);
});

parked('should serve a new principal after a pool’s worth of principals each parked a call they never retry', async () => {
  // A pool of 24 (a server-everything process each) rather than the default 64: the same bound,
  // filled sooner. Four boots at a time rather than the default (half the cores): the crowd gets in sooner.
  // The crowd waits its turn to boot as long as it takes (`waitMs`): a place at the gate rests twice
  // as long as its boot took, so eight at a time through four places wait three boots, over the
  // default 10 s on a loaded machine, and a caller refused there never parks; what is asserted here
  // is what parked calls leave to a newcomer, not how fast this machine boots servers.
  const pool = 24;
  const reserve = 8;
  const s = await serve({ upstream: everythingBackend(marker), sessions: { max: pool, reserve, opening: 4, waitMs: 120_000 } });
  try {
    // A crowd of new callers, eight at a time (each boots a server process of its own).
    const rounds = await inWaves(pool, 8, (i) =>
      modernPost(
        s.url,
        'tools/call',
        { name: 'trigger-elicitation-request', arguments: {} },
        { principal: `sybil-${i}`, capabilities: ELICIT, id: i },
      ),
    );
    const parkedRounds = rounds.filter((r) => r.message['result']?.['resultType'] === 'input_required');
    const others = rounds.filter((r) => !parkedRounds.includes(r)).map((r) => JSON.stringify(r.message).slice(0, 300));
    assert.equal(others, [], 'each got its input_required round');
    const stats = s.wrap.stats();
    assert.ok(stats.parked <= pool - reserve, `at most the pool less its reserve stays parked (${stats.parked})`);
    assert.ok(stats.sessions <= pool, `sessions stay within the pool (${stats.sessions})`);
    assert.ok(markedProcesses(marker).length <= pool, 'no upstream process beyond the pool');

    const started = Date.now();
    assertServed(await modernPost(s.url, 'server/discover', {}, { principal: 'newcomer' }), 'discover');
    assertServed(
      await modernPost(s.url, 'tools/call', { name: 'echo', arguments: { message: 'still here' } }, { principal: 'newcomer', id: 'echo' }),
      'a plain call',
    );
    const round = resultOf(
      await modernPost(
        s.url,
        'tools/call',
        { name: 'trigger-elicitation-request', arguments: {} },
        { principal: 'newcomer', capabilities: ELICIT, id: 'mine' },
      ),
    );
    assert.is(round['resultType'], 'input_required', 'the newcomer may park a call too');
    const done = resultOf(await retryElicitation(s.url, round, 'newcomer', 'mine-2'));
    assert.match(JSON.stringify(done['content']), 'Ada Lovelace');
    assert.ok(Date.now() - started < 10_000, 'served without waiting out anyone');

    // The oldest parked calls gave way: their retries are refused, never run.
    const first = parkedRounds.find((r) => r.message['id'] === 0)!;
    const late = await retryElicitation(s.url, first.message['result'], 'sybil-0', 'late');
    assert.is(late.message['error']?.['code'], -32602);
    assert.match(late.message['error']?.['message'], 'no longer waiting');
  } finally {
    await s.close();
    reapMarked(marker);
  }
});

parked('should keep one principal with four capability sets to its own share', async () => {
  const s = await serve({ upstream: everythingBackend(marker), sessions: { waitMs: 8_000 } });
  try {
    const answers = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        modernPost(
          s.url,
          'tools/call',
          { name: 'trigger-elicitation-request', arguments: {} },
          { principal: 'greedy', capabilities: { ...ELICIT, experimental: { [`set${i % 4}`]: {} } }, id: i },
        ),
      ),
    );
    const parkedCount = answers.filter((a) => a.message['result']?.['resultType'] === 'input_required').length;
    const refused = answers.filter((a) => a.message['error']?.['code'] === -32005);
    assert.is(parkedCount + refused.length, 64, 'every call was parked or refused, none hung or failed otherwise');
    assert.ok(parkedCount <= 16, `no more than its 16 sessions (${parkedCount})`);
    assert.ok(refused.length >= 48);
    const mine = refused.find((r) => r.message['error']['data']['limit'] === 'sessions-per-caller');
    assert.ok(mine, 'refused by its own limit');
    assert.is(mine!.status, 429);
    assert.ok(Number(mine!.retryAfter) >= 1, 'with Retry-After');
    assert.match(mine!.message['error']['message'], 'Limit exceeded: sessions-per-caller (16)');
    for (const r of refused) assert.ok([429, 503].includes(r.status) && r.retryAfter !== null, JSON.stringify(r.message));
    assert.ok(s.wrap.stats().sessions <= 16);
    assertServed(
      await modernPost(s.url, 'tools/call', { name: 'echo', arguments: { message: 'x' } }, { principal: 'modest' }),
      'another principal',
    );
  } finally {
    await s.close();
    reapMarked(marker);
  }
});

parked('should put 20 concurrent first calls of one principal each in a round of its own, none declined', async () => {
  // Twenty server processes booted one at a time on two cores take about the default wait (10 s):
  // the last callers are given twice that, so what is checked is the rounds, not the machine's speed.
  const s = await serve({ upstream: everythingBackend(marker), sessions: { waitMs: 20_000 } });
  try {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const first = await modernPost(
          s.url,
          'tools/call',
          { name: 'trigger-elicitation-request', arguments: {} },
          { principal: 'busy-user', capabilities: ELICIT, id: `c${i}` },
        );
        const round = resultOf(first);
        assert.is(
          round['resultType'],
          'input_required',
          `call ${i} was asked, not answered for the user: ${JSON.stringify(round).slice(0, 200)}`,
        );
        return resultOf(await retryElicitation(s.url, round, 'busy-user', `r${i}`));
      }),
    );
    for (const result of outcomes) assert.match(JSON.stringify(result['content']), 'Ada Lovelace');
  } finally {
    await s.close();
    reapMarked(marker);
  }
});

parked.run();

// ── listens ──────────────────────────────────────────────────────────────

const listens = suite('wrapLegacyServer: listens cannot lock the others out');

listens('should serve a new principal after 64 principals each opened a listen', async () => {
  const s = await serve({ upstream: () => createPushServer() });
  const open: Array<{ close(): void; ended: Promise<Array<Record<string, any>>> }> = [];
  try {
    for (let i = 0; i < 64; i++) {
      const listen = await openListen(s.url, { principal: `sybil-${i}`, id: `l${i}` });
      assert.ok(listen.acknowledged, `listen ${i} acknowledged`);
      if (listen.acknowledged) open.push(listen);
    }
    const stats = s.wrap.stats();
    assert.ok(stats.listens <= 64 - 8, `listens hold no more than the pool less its reserve (${stats.listens} open)`);
    assert.ok(stats.holds <= 64 - 8, `sessions held: ${stats.holds}`);
    // Newer ones gave way, gracefully (their streams ended with the listen result); the listen
    // open longest is kept.
    const ended = await open[62]!.ended;
    assert.ok(ended.at(-1)?.['result'], 'a newer listen ended with its result');
    const stillOpen = await Promise.race([open[0]!.ended.then(() => false), new Promise((r) => setTimeout(() => r(true), 200))]);
    assert.ok(stillOpen, 'the first listen is still open');
    assertServed(await modernPost(s.url, 'server/discover', {}, { principal: 'newcomer' }), 'discover');
    assertServed(await modernPost(s.url, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, { principal: 'newcomer' }), 'a call');
  } finally {
    for (const l of open) l.close();
    await s.close();
  }
});

listens("should feed one principal's listens of one capability set from one upstream session, and refuse past its quota", async () => {
  const s = await serve({ upstream: () => createPushServer(), listens: { perPrincipal: 5 } });
  const open: Array<{ close(): void }> = [];
  try {
    for (let i = 0; i < 5; i++) {
      const listen = await openListen(s.url, { principal: 'alice', id: `l${i}` });
      assert.ok(listen.acknowledged);
      if (listen.acknowledged) open.push(listen);
    }
    assert.is(s.wrap.stats().sessions, 1, 'five listens, one upstream session');
    const refused = await openListen(s.url, { principal: 'alice', id: 'l6' });
    assert.not.ok(refused.acknowledged);
    if (!refused.acknowledged) {
      assert.is(refused.answer.status, 429);
      assert.is(refused.answer.contentType, 'application/json', 'refused at once: plain JSON, not a stream');
      assert.ok(Number(refused.answer.retryAfter) >= 1);
      assert.is(refused.answer.message['error']['code'], -32005);
      assert.is(refused.answer.message['error']['data']['limit'], 'listens-per-caller');
    }
    const other = await openListen(s.url, { principal: 'bob' });
    assert.ok(other.acknowledged, 'another principal is not affected');
    if (other.acknowledged) open.push(other);
  } finally {
    for (const l of open) l.close();
    await s.close();
  }
});

listens.run();

// ── legacy sessions ─────────────────────────────────────────────────────

/** A v1 SDK client on the endpoint as `principal`. */
async function legacyClient(url: URL, principal: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${principal}` } } });
  const client = new Client({ name: 'legacy-spec', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

function bareInitialize(url: URL, principal: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${principal}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }),
  });
}

const legacy = suite('wrapLegacyServer: legacy sessions belong to their opener, expire, and make room');

legacy("should answer another caller's use of a session as if it did not exist", async () => {
  const s = await serve({ upstream: () => createPushServer() });
  const { client, transport } = await legacyClient(s.url, 'alice');
  try {
    const sessionId = transport.sessionId!;
    const as = (authorization: string | undefined, init: RequestInit) =>
      fetch(s.url, {
        ...init,
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-11-25',
          ...(authorization ? { authorization } : {}),
          ...(init.headers as Record<string, string>),
        },
      });
    const call = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: { text: 'stolen' } } });
    for (const who of ['Bearer mallory', undefined]) {
      assert.is((await as(who, { method: 'POST', body: call })).status, 404, `a tool call by ${who ?? 'no one'}`);
      assert.is(
        (await as(who, { method: 'GET', headers: { accept: 'text/event-stream' } })).status,
        404,
        `the GET stream by ${who ?? 'no one'}`,
      );
      assert.is((await as(who, { method: 'DELETE' })).status, 404, `DELETE by ${who ?? 'no one'}`);
    }
    const echoed = await client.callTool({ name: 'echo', arguments: { text: 'mine' } });
    assert.equal(echoed.content, [{ type: 'text', text: 'mine' }], 'the opener is unaffected');
    const stream = await as('Bearer alice', { method: 'GET', headers: { accept: 'text/event-stream' } });
    assert.not.equal(stream.status, 404, "the opener's own GET is not refused");
    await stream.body?.cancel();
  } finally {
    await client.close();
    await s.close();
  }
});

legacy('should close a session left idle, with its upstream', async () => {
  let upstreams = 0;
  const s = await serve({
    upstream: () => {
      upstreams++;
      return createPushServer();
    },
    legacySessions: { idleMs: 400 },
  });
  const { client, transport } = await legacyClient(s.url, 'alice');
  try {
    assert.is(s.wrap.legacySessions, 1);
    assert.ok(await waitFor(() => s.wrap.legacySessions === 0, 3_000), 'closed once idle');
    const res = await fetch(s.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer alice',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }),
    });
    assert.is(res.status, 404, 'its client is told to initialize again');
    assert.ok(upstreams >= 1);
  } finally {
    await client.close().catch(() => {});
    await s.close();
  }
});

legacy('should serve a new legacy client after a flood of bare initializes from many principals', async () => {
  const s = await serve({ upstream: () => createPushServer(), legacySessions: { max: 8 } });
  try {
    const flood = await Promise.all(Array.from({ length: 40 }, (_, i) => bareInitialize(s.url, `sybil-${i}`)));
    const statuses = flood.map((r) => r.status);
    for (const r of flood) await r.body?.cancel();
    assert.is(statuses.filter((x) => x === 200).length, 8, 'the endpoint holds its bound');
    const refused = flood.find((r) => r.status === 503)!;
    assert.ok(refused, 'the rest were refused while every session was fresh');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.ok(s.wrap.legacySessions <= 8);
    await new Promise((r) => setTimeout(r, 1_100));
    const { client } = await legacyClient(s.url, 'honest');
    try {
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'served' } });
      assert.equal(echoed.content, [{ type: 'text', text: 'served' }]);
    } finally {
      await client.close();
    }
  } finally {
    await s.close();
  }
});

legacy.run();

// ── MRTR edge cases ─────────────────────────────────────────────────────

const edges = suite('wrapLegacyServer: pushes no call owns, and replayed states');

edges('should answer an elicitation outside any call with cancel, not decline', async () => {
  const actions: string[] = [];
  const s = await serve({
    upstream: () => {
      const server = new McpServer({ name: 'stray', version: '1.0.0' });
      server.registerTool('noop', { description: 'nothing' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
      server.server.oninitialized = () => {
        void server.server
          .elicitInput({ mode: 'form', message: 'Anyone?', requestedSchema: { type: 'object', properties: {} } })
          .then((r) => actions.push(r.action));
      };
      return server;
    },
  });
  try {
    assertServed(
      await modernPost(s.url, 'tools/call', { name: 'noop', arguments: {} }, { principal: 'alice', capabilities: ELICIT }),
      'a call',
    );
    assert.ok(await waitFor(() => actions.length > 0, 2_000));
    assert.equal(actions, ['cancel'], 'nobody saw it: it was not declined');
  } finally {
    await s.close();
  }
});

edges('should run a replayed call once for a state however many retries bring it', async () => {
  let runs = 0;
  const s = await serve({
    mrtr: { replay: true },
    upstream: () => {
      const server = new McpServer({ name: 'counting', version: '1.0.0' });
      server.registerTool('pay', { description: 'Asks, then pays', inputSchema: { amount: z.number() } }, async ({ amount }) => {
        runs++;
        const answer = await server.server.elicitInput({
          mode: 'form',
          message: `Pay ${amount}?`,
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
        });
        return { content: [{ type: 'text', text: answer.action === 'accept' ? `paid ${amount}` : 'not paid' }] };
      });
      return server;
    },
  });
  try {
    const round = resultOf(
      await modernPost(s.url, 'tools/call', { name: 'pay', arguments: { amount: 5 } }, { principal: 'alice', capabilities: ELICIT }),
    );
    assert.is(round['resultType'], 'input_required');
    const [key] = Object.keys(round['inputRequests']);
    const retries = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        modernPost(
          s.url,
          'tools/call',
          {
            name: 'pay',
            arguments: { amount: 5 },
            inputResponses: { [key!]: { action: 'accept', content: { ok: true } } },
            requestState: round['requestState'],
          },
          { principal: 'alice', capabilities: ELICIT, id: i },
        ),
      ),
    );
    const paid = retries.filter((r) => JSON.stringify(r.message['result']?.['content'] ?? '').includes('paid 5'));
    const refused = retries.filter((r) => r.message['error']?.['code'] === -32602 && /already used/.test(r.message['error']['message']));
    assert.is(paid.length, 1, 'one retry ran the call');
    assert.is(refused.length, 19, 'the others were refused');
    assert.is(runs, 2, 'the tool ran for the first call and for one retry');
  } finally {
    await s.close();
  }
});

edges('should remember only what the upstream lists, whatever names callers make up', async () => {
  const s = await serve({ upstream: () => createPushServer() });
  try {
    assertServed(
      await modernPost(s.url, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { principal: 'alice' }),
      'a listed tool',
    );
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          modernPost(s.url, 'tools/call', { name: `made-up-${batch}-${i}`, arguments: {} }, { principal: 'mallory', id: i }),
        ),
      );
    }
    assertServed(
      await modernPost(s.url, 'tools/call', { name: 'echo', arguments: { text: 'y' } }, { principal: 'alice' }),
      'the listed tool again',
    );
    const remembered = s.wrap.stats().remembered;
    assert.ok(remembered >= 1, 'the listed tool is remembered');
    assert.ok(remembered <= 5, `no more than the server lists (${remembered})`);
  } finally {
    await s.close();
  }
});

edges.run();
