import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../../../lib/core/jsonrpc.ts';
import type { ConnectableServer } from '../../../lib/session/backend.ts';
import { DEFAULTS } from '../../../lib/util/defaults.ts';
import { Keyring } from '../../../lib/state/keyring.ts';
import type { Transport } from '../../../lib/transport/transport.ts';
import type { ModernContext } from '../../../lib/fronts/served.ts';
import { MrtrBroker } from '../../../lib/wrap/mrtr/suspend.ts';
import type { MrtrOptions } from '../../../lib/wrap/mrtr/mrtrOptions.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { createPushServer } from '../../../fixtures/servers/pushServer.ts';
import { modernRequest } from '../../helpers/messages.ts';

const VERSION = '2026-07-28';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const ADA = { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } };

type Json = Record<string, unknown>;

/** What the legacy server saw (`in`) and said (`out`) on its own pipe. */
interface Wire {
  readonly dir: 'in' | 'out';
  readonly message: JsonRpcMessage;
}

/** A server factory whose pipe is recorded from the server's side; what `lost` says of never reaches the server. */
function spied(
  wire: Wire[],
  make: () => McpServer = createPushServer,
  lost: (message: JsonRpcMessage) => boolean = () => false,
): () => ConnectableServer {
  return () => ({
    async connect(transport: Transport) {
      const send = transport.send.bind(transport);
      transport.send = (message, options) => {
        wire.push({ dir: 'out', message });
        return send(message, options);
      };
      await make().connect(transport as never);
      const receive = transport.onmessage;
      transport.onmessage = (message, extra) => {
        wire.push({ dir: 'in', message });
        if (!lost(message)) receive?.(message, extra);
      };
    },
  });
}

/** A legacy server that pushes an elicitation whatever its client declared (no SDK capability check). */
function carelessServer(): McpServer {
  const server = new McpServer({ name: 'careless-server', version: '1.0.0' });
  server.registerTool('ask_anyway', { description: 'Asks even when the client cannot answer' }, async () => {
    const answer = await server.server.request(
      {
        method: 'elicitation/create',
        params: { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: 'text', text: `answered ${answer.action}` }] };
  });
  return server;
}

interface Setup {
  readonly broker: MrtrBroker;
  readonly wrap: LegacyServerWrap;
  readonly wire: Wire[];
}

function setup(options: MrtrOptions = {}, make?: () => McpServer, lost?: (message: JsonRpcMessage) => boolean): Setup {
  const wire: Wire[] = [];
  const broker = new MrtrBroker({ collectMs: 5, ...options });
  const wrap = wrapLegacyServer({ upstream: spied(wire, make, lost), mrtr: broker });
  return { broker, wrap, wire };
}

function ctx(principal = 'alice', signal: AbortSignal = new AbortController().signal): ModernContext {
  return { principal, signal, notify: () => {} };
}

/** A modern `tools/call` with the full envelope; `caps` replaces the declared client capabilities. */
function call(id: number | string, params: Json = {}, caps: Json = { elicitation: {} }, name = 'ask_name'): JsonRpcRequest {
  return modernRequest('tools/call', { name, arguments: {}, ...params }, { [CAPS]: caps }, id);
}

/** The retry of `ask_name`: a new id, the same params, the answers and the state. */
function retry(id: number | string, requestState: string, inputResponses: Json = ADA, params: Json = {}): JsonRpcRequest {
  return call(id, { ...params, inputResponses, requestState });
}

async function serve(
  s: Setup,
  request: JsonRpcRequest,
  context: ModernContext = ctx(),
): Promise<{ message: JsonRpcResponse; status: number }> {
  const answer = await s.wrap.serveModern(request, context);
  assert.ok(answer, 'an answer');
  return answer!;
}

function resultOf(message: JsonRpcResponse): Json {
  assert.ok('result' in message, `expected a result, got ${JSON.stringify(message)}`);
  return (message as { result: Json }).result;
}

function errorOf(message: JsonRpcResponse): { code: number; message: string; data?: unknown } {
  assert.ok('error' in message, `expected an error, got ${JSON.stringify(message)}`);
  return (message as { error: { code: number; message: string; data?: unknown } }).error;
}

function textOf(message: JsonRpcResponse): string {
  const result = resultOf(message);
  assert.is(result['resultType'], 'complete', JSON.stringify(result));
  return (result['content'] as Array<{ text: string }>)[0]!.text;
}

/** Starts `ask_name` and returns the sealed state of its `input_required` round. */
async function park(s: Setup, id: number | string = 1, context: ModernContext = ctx()): Promise<string> {
  const { message } = await serve(s, call(id), context);
  const result = resultOf(message);
  assert.is(result['resultType'], 'input_required', JSON.stringify(result));
  assert.type(result['requestState'], 'string');
  return result['requestState'] as string;
}

function assertRefused(message: JsonRpcResponse, pattern: RegExp): void {
  const error = errorOf(message);
  assert.is(error.code, -32602, JSON.stringify(error));
  assert.match(error.message, pattern);
}

/** Waits (briefly) for nothing to be parked, held or in flight, then asserts it. */
async function assertNoLeak(s: Setup): Promise<void> {
  const idle = () => s.broker.parked === 0 && s.wrap.pool.sessions().every(({ session }) => session.inFlight === 0 && session.holds === 0);
  for (let i = 0; i < 100 && !idle(); i++) await sleep(5);
  assert.is(s.broker.parked, 0, 'nothing parked');
  assert.ok(
    s.wrap.pool.sessions().every(({ session }) => session.inFlight === 0),
    'no call in flight upstream',
  );
  assert.ok(
    s.wrap.pool.sessions().every(({ session }) => session.holds === 0),
    'no session held',
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Flips one bit of the decoded part of a suspend state (`mds1.body[.owner]`) and re-encodes it. */
function flipByte(state: string, index: (length: number) => number): string {
  const [prefix, body, ...owner] = state.split('.') as [string, string, ...string[]];
  const raw = Buffer.from(body, 'base64url');
  raw[index(raw.length)]! ^= 0x01;
  return [prefix, raw.toString('base64url'), ...owner].join('.');
}

/** Messages of `method` the server received. */
function received(wire: Wire[], method: string): Json[] {
  return wire.filter((w) => w.dir === 'in' && (w.message as Json)['method'] === method).map((w) => w.message as Json);
}

/** Answers the server received to its own `elicitation/create` pushes. */
function elicitationAnswers(wire: Wire[]): unknown[] {
  const pushIds = new Set(
    wire.filter((w) => w.dir === 'out' && (w.message as Json)['method'] === 'elicitation/create').map((w) => (w.message as Json)['id']),
  );
  return wire
    .filter((w) => w.dir === 'in' && pushIds.has((w.message as Json)['id']) && !('method' in w.message))
    .map((w) => (w.message as Json)['result'] ?? (w.message as Json)['error']);
}

/** Texts of the tool results the server sent. */
function toolResults(wire: Wire[]): string[] {
  return wire
    .filter((w) => w.dir === 'out' && !('method' in w.message) && 'result' in w.message)
    .map((w) => (w.message as { result: Json }).result['content'])
    .filter(Array.isArray)
    .map((content) => (content as Array<{ text: string }>)[0]!.text);
}

function post(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Request {
  const request = body as JsonRpcRequest;
  const params = (request.params ?? {}) as Json;
  return new Request('http://localhost/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': VERSION,
      'Mcp-Method': request.method,
      ...(typeof params['name'] === 'string' ? { 'Mcp-Name': params['name'] } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function fetchJson(
  s: Setup,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; message: JsonRpcResponse }> {
  const response = await s.wrap.fetch(post(body, headers));
  assert.match(response.headers.get('content-type') ?? '', /application\/json/);
  return { status: response.status, message: (await response.json()) as JsonRpcResponse };
}

const m = suite('MrtrBroker');

m('should turn a pushed elicitation into input_required and resume the call with the retry', async () => {
  const s = setup();
  const { message, status } = await serve(s, call(1));
  assert.is(status, 200);
  assert.is(message.id, 1);
  const result = resultOf(message);
  assert.is(result['resultType'], 'input_required');
  assert.equal(Object.keys(result['inputRequests'] as Json), ['elicitation-1']);
  const input = (result['inputRequests'] as Json)['elicitation-1'] as Json;
  assert.is(input['method'], 'elicitation/create');
  assert.not.ok('id' in input || 'jsonrpc' in input, 'a bare input request');
  assert.is((input['params'] as Json)['message'], 'What is your name?');
  assert.equal(((input['params'] as Json)['requestedSchema'] as Json)['required'], ['name']);
  assert.is(s.broker.parked, 1);

  const done = await serve(s, retry(2, result['requestState'] as string));
  assert.is(done.status, 200);
  assert.is(done.message.id, 2);
  assert.is(textOf(done.message), 'Hello, Ada!');
  assert.equal(elicitationAnswers(s.wire), [{ action: 'accept', content: { name: 'Ada' } }]);
  assert.equal(received(s.wire, 'tools/call').length, 1, 'the call ran upstream once');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should wait for the barrier of a server that answers them, and only collectMs once one went unanswered', async () => {
  // The server never reads a ping: its barrier goes unanswered while its call waits.
  const s = setup({}, undefined, (message) => 'method' in message && message.method === 'ping' && 'id' in message);
  let started = performance.now();
  const first = await park(s, 1);
  const firstMs = performance.now() - started;
  assert.ok(firstMs >= DEFAULTS.barrierWaitMs - 5, `the first round waited for the barrier (${Math.round(firstMs)} ms)`);
  started = performance.now();
  const second = await park(s, 2, ctx('bob'));
  const secondMs = performance.now() - started;
  assert.ok(secondMs < DEFAULTS.barrierWaitMs, `a later round, on another session, waited collectMs only (${Math.round(secondMs)} ms)`);
  assert.is(received(s.wire, 'ping').length, 2, 'each round asked its barrier');
  assert.is(textOf((await serve(s, retry(3, first))).message), 'Hello, Ada!');
  assert.is(textOf((await serve(s, retry(4, second), ctx('bob'))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should run a full round over Streamable HTTP with the routing headers', async () => {
  const s = setup();
  const first = await fetchJson(s, call(1));
  assert.is(first.status, 200);
  const result = resultOf(first.message);
  assert.is(result['resultType'], 'input_required');
  assert.equal(Object.keys(result['inputRequests'] as Json), ['elicitation-1']);
  const done = await fetchJson(s, retry('retry-1', result['requestState'] as string));
  assert.is(done.status, 200);
  assert.is(done.message.id, 'retry-1');
  assert.is(textOf(done.message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse an altered, truncated or garbage state and keep the parked call resumable', async () => {
  const s = setup();
  const state = await park(s, 1);
  // Another caller's call, parked at the same time (its own upstream session).
  const other = await park(s, 2, ctx('bob'));
  assert.is.not(state, other);
  assert.is(s.broker.parked, 2);
  const [prefix, body] = state.split('.') as [string, string];
  const bad = [
    flipByte(state, () => 0), // the round
    flipByte(state, () => 3), // the expiry
    flipByte(state, (n) => n - 1), // the call id
    `${prefix}.${body.slice(0, -4)}`, // truncated
    `${prefix}.${body.slice(0, 10)}`, // truncated to the expiry
    `${prefix}.${body}.replica-a`, // an owner written in
    prefix,
    'garbage',
    '',
    `${state}x`,
    Buffer.from(JSON.stringify({ c: 'x', p: 'alice', m: 'tools/call', d: '', r: 1, e: Date.now() + 1e6 })).toString('base64url'),
  ];
  for (const [i, tampered] of bad.entries()) {
    const { message, status } = await serve(s, retry(100 + i, tampered));
    assertRefused(message, /requestState/);
    assert.is(status, 200, 'a JSON-RPC error, not an HTTP one');
  }
  assert.is(s.broker.parked, 2, 'both calls still parked');
  assert.equal(elicitationAnswers(s.wire), [], 'nothing was answered upstream');
  assert.is(
    textOf((await serve(s, retry(3, other, { 'elicitation-1': { action: 'accept', content: { name: 'Bob' } } }), ctx('bob'))).message),
    'Hello, Bob!',
  );
  assert.is(textOf((await serve(s, retry(4, state))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should park two calls of the same caller at once, each with its own round', async () => {
  const s = setup();
  const first = await park(s, 1);
  const second = await park(s, 2);
  assert.is(s.broker.parked, 2);
  assert.is(
    textOf((await serve(s, retry(3, second, { 'elicitation-1': { action: 'accept', content: { name: 'Bob' } } }))).message),
    'Hello, Bob!',
  );
  assert.is(textOf((await serve(s, retry(4, first))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a tampered state over HTTP with a JSON-RPC -32602', async () => {
  const s = setup();
  const first = await fetchJson(s, call(1));
  const state = resultOf(first.message)['requestState'] as string;
  const refused = await fetchJson(
    s,
    retry(
      2,
      flipByte(state, (n) => n >> 1),
    ),
  );
  assert.is(refused.status, 200);
  assertRefused(refused.message, /requestState/);
  assert.is(textOf((await fetchJson(s, retry(3, state))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a state used a second time', async () => {
  const s = setup();
  const state = await park(s, 1);
  assert.is(textOf((await serve(s, retry(2, state))).message), 'Hello, Ada!');
  const again = await serve(s, retry(3, state));
  assertRefused(again.message, /no longer waiting|already used/);
  assert.equal(received(s.wire, 'tools/call').length, 1, 'the call was not run again');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should let only one of two concurrent retries with the same state through', async () => {
  const s = setup();
  const state = await park(s, 1);
  const answers = await Promise.all([serve(s, retry(2, state)), serve(s, retry(3, state))]);
  const ok = answers.filter((a) => 'result' in a.message);
  const refused = answers.filter((a) => 'error' in a.message);
  assert.is(ok.length, 1);
  assert.is(refused.length, 1);
  assert.is(textOf(ok[0]!.message), 'Hello, Ada!');
  assertRefused(refused[0]!.message, /no longer waiting|already used/);
  assert.is(elicitationAnswers(s.wire).length, 1);
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a state past its expiry (clock moved)', async () => {
  let clock = 1_000_000;
  const s = setup({ now: () => clock, parkTimeoutMs: 150 });
  const state = await park(s, 1);
  clock += 151;
  const late = await serve(s, retry(2, state));
  assertRefused(late.message, /expired/);
  assert.equal(elicitationAnswers(s.wire), [], 'the expired retry answered nothing upstream');
  await sleep(200);
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a state whose call was released after a tiny parkTimeoutMs', async () => {
  const s = setup({ parkTimeoutMs: 20 });
  const state = await park(s, 1);
  await sleep(60);
  assert.is(s.broker.parked, 0);
  const late = await serve(s, retry(2, state));
  assertRefused(late.message, /expired|no longer waiting/);
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a retry made by another principal, and still resume for the right one', async () => {
  const s = setup();
  const state = await park(s, 1, ctx('alice'));
  const stolen = await serve(s, retry(2, state), ctx('mallory'));
  assertRefused(stolen.message, /another caller/);
  assert.is(s.broker.parked, 1);
  assert.is(textOf((await serve(s, retry(3, state), ctx('alice'))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a retry over HTTP under another Authorization', async () => {
  const s = setup();
  const first = await fetchJson(s, call(1), { authorization: 'Bearer alice' });
  const state = resultOf(first.message)['requestState'] as string;
  const stolen = await fetchJson(s, retry(2, state), { authorization: 'Bearer mallory' });
  assertRefused(stolen.message, /another caller/);
  const anonymous = await fetchJson(s, retry(3, state));
  assertRefused(anonymous.message, /another caller/);
  assert.is(textOf((await fetchJson(s, retry(4, state), { authorization: 'Bearer alice' })).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a state carried by another method, tool or arguments', async () => {
  const s = setup();
  const state = await park(s, 1);
  const others: JsonRpcRequest[] = [
    call(2, { arguments: { extra: 1 }, inputResponses: ADA, requestState: state }),
    call(3, { name: 'echo', arguments: {}, inputResponses: ADA, requestState: state }),
    modernRequest(
      'prompts/get',
      { name: 'ask_name', arguments: {}, inputResponses: ADA, requestState: state },
      { [CAPS]: { elicitation: {} } },
      4,
    ),
    modernRequest(
      'resources/read',
      { uri: 'file:///ask_name', inputResponses: ADA, requestState: state },
      { [CAPS]: { elicitation: {} } },
      5,
    ),
  ];
  for (const request of others) {
    const { message } = await serve(s, request);
    assertRefused(message, /different request/);
  }
  assert.is(s.broker.parked, 1);
  assert.equal(elicitationAnswers(s.wire), []);
  assert.is(textOf((await serve(s, retry(6, state))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should resume a parked call whatever the keyring rotated to meanwhile: its state is a handle, not sealed', async () => {
  const keyring = new Keyring([], { maxKeys: 2 });
  const s = setup({ keyring });
  const state = await park(s, 1);
  keyring.rotate();
  keyring.rotate();
  keyring.rotate();
  assert.is(textOf((await serve(s, retry(2, state))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse a state written by another broker (another process)', async () => {
  const s = setup();
  const elsewhere = setup();
  await park(s, 1);
  const foreign = await park(elsewhere, 1);
  assertRefused((await serve(s, retry(2, foreign))).message, /no longer waiting/);
  await s.wrap.close();
  await elsewhere.wrap.close();
});

m('should ask again for what is still owed when the retry lacks the input key', async () => {
  const s = setup();
  const state = await park(s, 1);
  const again = await serve(s, retry(2, state, {}));
  const result = resultOf(again.message);
  assert.is(result['resultType'], 'input_required', 'another round, not an error');
  assert.equal(Object.keys(result['inputRequests'] as Json), ['elicitation-1']);
  const next = result['requestState'] as string;
  assert.is.not(next, state);
  assert.is(s.broker.parked, 1);
  assertRefused((await serve(s, retry(3, state))).message, /already used/);
  // A retry with the state only (no inputResponses at all) is the same: ask again.
  const bare = await serve(s, call(4, { requestState: next }));
  assert.is(resultOf(bare.message)['resultType'], 'input_required');
  const last = resultOf(bare.message)['requestState'] as string;
  assert.is(textOf((await serve(s, retry(5, last))).message), 'Hello, Ada!');
  assert.equal(elicitationAnswers(s.wire), [{ action: 'accept', content: { name: 'Ada' } }], 'one push, one answer');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should ignore input responses under keys it did not ask for', async () => {
  const s = setup();
  const state = await park(s, 1);
  const responses = {
    ...ADA,
    'elicitation-2': { action: 'decline' },
    'sampling-1': { nonsense: true },
    github_login: 'not even an object',
  };
  assert.is(textOf((await serve(s, retry(2, state, responses))).message), 'Hello, Ada!');
  assert.equal(elicitationAnswers(s.wire), [{ action: 'accept', content: { name: 'Ada' } }]);
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should refuse an input response of the wrong shape and keep the call resumable', async () => {
  const s = setup();
  const state = await park(s, 1);
  for (const [i, wrong] of [
    { action: 'maybe' },
    { content: { name: 'Ada' } },
    { action: 'accept', content: { name: { first: 'Ada' } } },
    'accept',
    null,
  ].entries()) {
    const { message } = await serve(s, retry(10 + i, state, { 'elicitation-1': wrong }));
    const error = errorOf(message);
    assert.is(error.code, -32602, JSON.stringify(wrong));
    assert.match(error.message, /elicitation-1/);
  }
  assert.is(s.broker.parked, 1);
  assert.equal(elicitationAnswers(s.wire), []);
  assert.is(textOf((await serve(s, retry(2, state))).message), 'Hello, Ada!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should pass a decline upstream as the user refusing', async () => {
  const s = setup();
  const state = await park(s, 1);
  assert.is(textOf((await serve(s, retry(2, state, { 'elicitation-1': { action: 'decline' } }))).message), 'Hello, stranger!');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should answer -32021 naming the capability when the request did not declare elicitation', async () => {
  const s = setup({}, carelessServer);
  const { message, status } = await serve(s, call(1, {}, {}, 'ask_anyway'));
  const error = errorOf(message);
  assert.is(error.code, -32021);
  assert.is(status, 400);
  const required = (error.data as { requiredCapabilities: Json }).requiredCapabilities;
  assert.ok(required && typeof required['elicitation'] === 'object', JSON.stringify(error.data));
  // The server's push was answered with an error, not left waiting; the call was released.
  await assertNoLeak(s);
  // Declared: the same tool works through a round.
  const asked = await serve(s, call(2, {}, { elicitation: {} }, 'ask_anyway'));
  const state = resultOf(asked.message)['requestState'] as string;
  const done = await serve(
    s,
    call(3, { inputResponses: { 'elicitation-1': { action: 'decline' } }, requestState: state }, { elicitation: {} }, 'ask_anyway'),
  );
  assert.is(textOf(done.message), 'answered decline');
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should answer -32021 with HTTP 400 over Streamable HTTP', async () => {
  const s = setup({}, carelessServer);
  const { message, status } = await fetchJson(s, call(1, {}, {}, 'ask_anyway'));
  assert.is(status, 400);
  const error = errorOf(message);
  assert.is(error.code, -32021);
  assert.ok((error.data as { requiredCapabilities?: Json }).requiredCapabilities?.['elicitation'], JSON.stringify(error.data));
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should release a parked call whose retry never comes: the elicitation is cancelled upstream', async () => {
  const s = setup({ parkTimeoutMs: 50 });
  const state = await park(s, 1);
  assert.is(s.broker.parked, 1);
  await sleep(120);
  assert.is(s.broker.parked, 0);
  assert.equal(elicitationAnswers(s.wire), [{ action: 'cancel' }]);
  await assertNoLeak(s);
  assert.equal(toolResults(s.wire), ['Hello, stranger!'], 'the tool went on with the cancel and finished');
  assertRefused((await serve(s, retry(2, state))).message, /no longer waiting|expired/);
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should cancel the upstream call and park nothing when the client goes away mid-call', async () => {
  const s = setup();
  const controller = new AbortController();
  const pending = serve(s, call(1, {}, { elicitation: {} }, 'wait'), ctx('alice', controller.signal));
  await sleep(30);
  assert.is(received(s.wire, 'tools/call').length, 1);
  controller.abort();
  const { message } = await pending;
  assert.is(errorOf(message).code, -32603);
  assert.match(errorOf(message).message, /cancel/i);
  const callId = received(s.wire, 'tools/call')[0]!['id'];
  assert.equal(
    received(s.wire, 'notifications/cancelled').map((n) => (n['params'] as Json)['requestId']),
    [callId],
  );
  await assertNoLeak(s);
  // The session is still good for the next call.
  assert.is(textOf((await serve(s, call(2, { name: 'echo', arguments: { text: 'still here' } }))).message), 'still here');
  await s.wrap.close();
});

m('should cancel the upstream call when the HTTP client disconnects mid-call', async () => {
  const s = setup();
  const controller = new AbortController();
  const pending = s.wrap.fetch(post(call(1, {}, { elicitation: {} }, 'wait'), {}, controller.signal)).catch(() => undefined);
  await sleep(30);
  controller.abort();
  await pending;
  for (let i = 0; i < 50 && received(s.wire, 'notifications/cancelled').length === 0; i++) await sleep(5);
  assert.is(received(s.wire, 'notifications/cancelled').length, 1);
  await assertNoLeak(s);
  await s.wrap.close();
});

m('should release every parked call on close', async () => {
  const s = setup();
  await park(s, 1);
  await park(s, 2, ctx('bob'));
  assert.is(s.broker.parked, 2);
  await s.wrap.close();
  assert.is(s.broker.parked, 0);
});

m.run();
