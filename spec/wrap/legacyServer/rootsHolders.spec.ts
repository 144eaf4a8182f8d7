/**
 * Roots belong to the caller that declared them: two anonymous modern clients (no Authorization
 * header, so one principal and one capability set) with different roots share the wrap's upstream
 * sessions with the real server-everything, which caches the roots it got per session and answers
 * `get-roots-list` from that cache. Each client must see only its own roots, one after the other
 * and interleaved, and a client that declared none must see the wrap's own roots.
 */
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp, type RunningHttpServer } from '../../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap, type WrapLegacyServerOptions } from '../../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { everythingBackend, markedProcessesGone, reapMarked, tappedParams, textOf, type Tapped } from '../../helpers/everything.ts';

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
const ALICE = [{ uri: 'file:///home/alice/project', name: 'alice' }];
const BOB = [{ uri: 'file:///home/bob/secret', name: 'bob' }];
const OWN = [{ uri: 'file:///srv/wrap-own', name: 'the wrap' }];

interface Endpoint {
  readonly marker: string;
  readonly wrap: LegacyServerWrap;
  readonly http: RunningHttpServer;
  readonly url: URL;
  readonly tapped: Tapped[];
}

async function startWrap(options: Partial<WrapLegacyServerOptions> = {}): Promise<Endpoint> {
  const tapped: Tapped[] = [];
  const marker = randomUUID();
  const wrap = wrapLegacyServer({ ...options, upstream: everythingBackend(marker, (seen) => tapped.push(seen)) });
  const http = await serveNodeHttp(wrap, { port: 0 });
  return { marker, wrap, http, url: new URL(`${http.origin}/mcp`), tapped };
}

async function stopWrap(endpoint: Endpoint | undefined): Promise<void> {
  if (!endpoint) return;
  await endpoint.wrap.close();
  await endpoint.http.close();
  if (!(await markedProcessesGone(endpoint.marker, 5000))) reapMarked(endpoint.marker);
}

interface Caller {
  readonly client: Client;
  /** How many times the client was asked for its roots. */
  asked: number;
  /** Rounds (input_required answers) the client was sent. */
  rounds: number;
  close(): Promise<void>;
}

/** An anonymous pinned modern client that declares `roots` (and answers with them), or declares none. */
async function caller(url: URL, roots: ReadonlyArray<{ uri: string; name: string }> | undefined, authorization?: string): Promise<Caller> {
  const client = new Client({ name: 'roots-spec', version: '1.0.0' }, { ...PINNED, capabilities: roots ? { roots: {} } : {} });
  const c: Caller = { client, asked: 0, rounds: 0, close: () => client.close() };
  if (roots) {
    client.setRequestHandler('roots/list', async () => {
      c.asked++;
      return { roots: roots.map((r) => ({ ...r })) };
    });
  }
  const counting: FetchLike = async (input, init) => {
    const response = await fetch(input, init);
    if (response.headers.get('content-type')?.includes('application/json')) {
      const json = (await response.clone().json()) as { result?: { resultType?: string } };
      if (json.result?.resultType === 'input_required') c.rounds++;
    }
    return response;
  };
  const requestInit = authorization ? { requestInit: { headers: { authorization } } } : {};
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: counting, ...requestInit }), { timeout: 20_000 });
  return c;
}

async function rootsSeen(c: Caller): Promise<string> {
  return textOf(await c.client.callTool({ name: 'get-roots-list', arguments: {} }));
}

function assertOwn(text: string, mine: ReadonlyArray<{ uri: string }>, others: ReadonlyArray<ReadonlyArray<{ uri: string }>>): void {
  for (const root of mine) assert.match(text, `URI: ${root.uri}`);
  for (const other of others) for (const root of other) assert.not.match(text, root.uri, `another caller's root reached this one: ${text}`);
}

const roots = suite('wrapLegacyServer: roots per caller on shared upstream sessions (server-everything)');
let endpoint: Endpoint | undefined;

roots.after.each(async () => {
  await stopWrap(endpoint);
  endpoint = undefined;
});

roots('should answer each anonymous caller with its own roots when they call one after the other', async () => {
  endpoint = await startWrap();
  const alice = await caller(endpoint.url, ALICE);
  const bob = await caller(endpoint.url, BOB);
  try {
    assertOwn(await rootsSeen(alice), ALICE, [BOB]);
    assertOwn(await rootsSeen(bob), BOB, [ALICE]);
    assertOwn(await rootsSeen(alice), ALICE, [BOB]);
    assertOwn(await rootsSeen(bob), BOB, [ALICE]);
    // One after the other, the two callers were served by one upstream session (one process).
    assert.is(endpoint.wrap.pool.sessions().length, 1);
    // The server was told the roots changed when the session passed to the other caller.
    assert.ok(tappedParams(endpoint.tapped, 'up', 'notifications/roots/list_changed').length >= 2);
  } finally {
    await alice.close();
    await bob.close();
  }
});

roots('should answer each anonymous caller with its own roots when their calls interleave', async () => {
  endpoint = await startWrap();
  const alice = await caller(endpoint.url, ALICE);
  const bob = await caller(endpoint.url, BOB);
  try {
    for (let i = 0; i < 4; i++) {
      const [a, b] = await Promise.all([rootsSeen(alice), rootsSeen(bob)]);
      assertOwn(a, ALICE, [BOB]);
      assertOwn(b, BOB, [ALICE]);
    }
    // Started together and ended in any order, then one after the other.
    const calls: Array<Promise<void>> = [];
    for (let i = 0; i < 6; i++) {
      const who = i % 2 === 0 ? alice : bob;
      calls.push(rootsSeen(who).then((text) => assertOwn(text, who === alice ? ALICE : BOB, [who === alice ? BOB : ALICE])));
    }
    await Promise.all(calls);
    for (let i = 0; i < 4; i++)
      assertOwn(await rootsSeen(i % 2 === 0 ? bob : alice), i % 2 === 0 ? BOB : ALICE, [i % 2 === 0 ? ALICE : BOB]);
  } finally {
    await alice.close();
    await bob.close();
  }
});

roots('should answer every caller with the wrap own roots when it has some, whether it declared roots or not', async () => {
  endpoint = await startWrap({ roots: OWN });
  const alice = await caller(endpoint.url, ALICE);
  const plain = await caller(endpoint.url, undefined);
  try {
    for (let i = 0; i < 2; i++) {
      assertOwn(await rootsSeen(alice), OWN, [ALICE]);
      assertOwn(await rootsSeen(plain), OWN, [ALICE]);
    }
    // The operator's roots answer the server, over the callers' own: neither was sent a round.
    assert.is(alice.rounds, 0);
    assert.is(plain.rounds, 0);
  } finally {
    await alice.close();
    await plain.close();
  }
});

roots('should answer each anonymous caller with its own roots in replay mode', async () => {
  endpoint = await startWrap({ mrtr: { replay: true } });
  const alice = await caller(endpoint.url, ALICE);
  const bob = await caller(endpoint.url, BOB);
  try {
    for (let i = 0; i < 3; i++) {
      assertOwn(await rootsSeen(alice), ALICE, [BOB]);
      assertOwn(await rootsSeen(bob), BOB, [ALICE]);
    }
    const [a, b] = await Promise.all([rootsSeen(alice), rootsSeen(bob)]);
    assertOwn(a, ALICE, [BOB]);
    assertOwn(b, BOB, [ALICE]);
  } finally {
    await alice.close();
    await bob.close();
  }
});

roots('should ask again only callers that cannot be told apart: a signed-in caller keeps its sessions and its roots', async () => {
  endpoint = await startWrap();
  const alice = await caller(endpoint.url, ALICE);
  const carol = await caller(endpoint.url, BOB, 'Bearer carol');
  try {
    assertOwn(await rootsSeen(alice), ALICE, [BOB]);
    assertOwn(await rootsSeen(carol), BOB, [ALICE]);
    const echo = (c: Caller) => c.client.callTool({ name: 'echo', arguments: { message: 'hi' } });
    let before = carol.rounds;
    for (let i = 0; i < 3; i++) assert.is(textOf(await echo(carol)), 'Echo: hi');
    assertOwn(await rootsSeen(carol), BOB, [ALICE]);
    // Its sessions are its own (filed under its principal): the server's roots there are its own.
    assert.is(carol.rounds - before, 0);
    before = alice.rounds;
    for (let i = 0; i < 3; i++) assert.is(textOf(await echo(alice)), 'Echo: hi');
    // An anonymous caller is asked for its roots on each call, in one round before the call is sent.
    assert.is(alice.rounds - before, 3);
    assertOwn(await rootsSeen(alice), ALICE, [BOB]);
  } finally {
    await alice.close();
    await carol.close();
  }
});

roots.run();
