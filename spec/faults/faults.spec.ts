/**
 * Faults on either side of `wrapLegacyServer`, against real v1-SDK servers that misbehave on
 * command (fixtures/servers/faultyServer.ts, over stdio, over Streamable HTTP, in process): the
 * upstream crashes mid-call, is slow, never answers, writes garbage to stdout, answers with a
 * message nested too deep, closes the HTTP stream mid-response, answers 500; the client closes
 * the event stream mid-call, goes away while waiting for JSON, never retries a parked call, goes
 * away during the retry that resumed it, cancels on stdio, ends its input. Each case ends in a
 * defined answer, the upstream told `notifications/cancelled` where a request of it was in
 * flight, and nothing left behind: no request, upstream call, session hold, parked call, listen or
 * legacy session, no live timer beyond those before the case, no unhandled rejection or uncaught
 * exception.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connectFaultyServer } from '../../fixtures/servers/faultyServer.ts';
import { startFaultyHttp, type FaultyHttpServer } from '../../fixtures/servers/faultyHttp.ts';
import { httpBackend, stdioBackend, type Backend, type ConnectableServer } from '../../lib/session/backend.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import type { Transport } from '../../lib/transport/transport.ts';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { MrtrBroker } from '../../lib/wrap/mrtr/suspend.ts';
import { serveStdio } from '../../lib/fronts/stdioFront.ts';
import { wrapLegacyServer, type LegacyServerWrap, type WrapLegacyServerOptions } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { readEvents } from '../helpers/eventStream.ts';
import { modernMeta } from '../helpers/messages.ts';
import { viaNode } from '../helpers/viaNode.ts';
import { bounded, liveTimers, settle, sleep, trapProcessErrors, type ProcessTrap } from '../fuzz/runner.ts';

const TSX = resolve(import.meta.dirname, '../../node_modules/.bin/tsx');
const FAULTY_STDIO = resolve(import.meta.dirname, '../../fixtures/servers/faultyStdio.ts');
const WRAPPED_STDIO = resolve(import.meta.dirname, '../../fixtures/servers/wrappedFaultyStdio.ts');
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

type Json = Record<string, any>;

/** A modern request with its routing headers. */
function post(id: number | string, method: string, params: Json, meta: Json = {}, signal?: AbortSignal): Request {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta({ [CAPS]: { elicitation: {} }, ...meta }) } };
  const name = params['name'] ?? params['uri'];
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

const call = (id: number | string, name: string, args: Json = {}, meta: Json = {}, signal?: AbortSignal) =>
  post(id, 'tools/call', { name, arguments: args }, meta, signal);

/** The JSON answer; a case never waits for one without end (a hang fails it). */
async function json(response: Response | Promise<Response>): Promise<Json> {
  return bounded((async () => (await response).json() as Promise<Json>)(), 20_000, 'the answer');
}

function text(message: Json): string {
  assert.ok(message['result'], `expected a result: ${JSON.stringify(message)}`);
  return message['result'].content[0].text;
}

/** The faulty server over stdio, with what it reports on stderr. */
function stdioFaulty(): { backend: Backend; log: string[] } {
  const log: string[] = [];
  let partial = '';
  const backend = stdioBackend({
    command: TSX,
    args: [FAULTY_STDIO],
    stderr: (chunk) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      log.push(...lines);
    },
  });
  return { backend, log };
}

/** The faulty server in process, one per session, with every cancellation it receives. */
function inProcessFaulty(
  onStarted?: (tool: string) => void,
  onReceived?: (message: JsonRpcMessage) => void,
): { upstream: () => ConnectableServer; cancelled: Array<string | number>; started: string[] } {
  const cancelled: Array<string | number> = [];
  const started: string[] = [];
  return {
    cancelled,
    started,
    upstream: () => ({
      connect: async (transport: never) => {
        await connectFaultyServer(transport as Transport as never, {
          onCancelled: (id) => cancelled.push(id),
          onStarted: (tool, id) => {
            started.push(`${tool} ${JSON.stringify(id)}`);
            onStarted?.(tool);
          },
        });
        if (!onReceived) return;
        // Sees each message before the server does.
        const t = transport as Transport;
        const receive = t.onmessage;
        t.onmessage = (message, extra) => {
          onReceived(message);
          receive?.(message, extra);
        };
      },
    }),
  };
}

/** The id the server gave the call of `tool` that started last. */
function startedId(started: readonly string[], tool: string): string | undefined {
  const line = [...started].reverse().find((l) => l.startsWith(`${tool} `) || l.startsWith(`started ${tool} `));
  return line?.split(' ').pop();
}

const HELD = ['requests', 'inFlight', 'holds', 'parked', 'listens', 'legacySessions'] as const;

/** Waits for the wrap to hold nothing and the timers to be back, then asserts it. */
async function assertNothingLeft(wrap: LegacyServerWrap, timers: number): Promise<void> {
  const held = () => Object.fromEntries(HELD.map((k) => [k, wrap.stats()[k]]));
  const zero = Object.fromEntries(HELD.map((k) => [k, 0]));
  await settle(() => JSON.stringify(held()) === JSON.stringify(zero) && liveTimers() <= timers, 6000);
  assert.equal(held(), zero, 'nothing held');
  assert.ok(liveTimers() <= timers, `live timers ${liveTimers()}, before ${timers}`);
}

/** Reads an event stream until `stop` holds for a message; then cancels it. */
function readUntil(response: Response, stop: (m: Json) => boolean): Promise<Json[]> {
  return bounded(
    readEvents(response, stop).then((r) => r.messages as Json[]),
    20_000,
    'the event stream',
  );
}

let trap: ProcessTrap;
let wrap: LegacyServerWrap | undefined;
let timers = 0;

function open(options: WrapLegacyServerOptions): LegacyServerWrap {
  wrap = wrapLegacyServer(options);
  return wrap;
}

function hooks(s: ReturnType<typeof suite>): void {
  s.before.each(() => {
    trap = trapProcessErrors();
    timers = liveTimers();
  });
  s.after.each(async () => {
    await wrap?.close();
    wrap = undefined;
    trap.release();
    assert.equal(trap.fired, [], 'no unhandled rejection or uncaught exception');
  });
}

const upstream = suite('faults of a legacy server over stdio');
hooks(upstream);

upstream('should answer the calls in flight when the server crashes mid-call, then serve from a new process', async () => {
  const { backend, log } = stdioFaulty();
  const w = open({ upstream: backend, sessions: { perKey: 1 } });
  assert.is(text(await json(w.fetch(call(1, 'echo', { text: 'before' })))), 'before');
  const [slow, crash] = await Promise.all([json(w.fetch(call(2, 'slow', { ms: 60_000 }))), json(w.fetch(call(3, 'crash')))]);
  for (const [answer, id] of [
    [slow, 2],
    [crash, 3],
  ] as const) {
    assert.is(answer['id'], id);
    assert.is(answer['error']?.code, -32603, JSON.stringify(answer));
    assert.match(answer['error'].message, /upstream server/);
  }
  assert.ok(log.some((l) => l.startsWith('started crash')));
  assert.is(text(await json(w.fetch(call(4, 'echo', { text: 'after' })))), 'after');
  assert.is(w.stats().sessions, 1, 'the dead session is gone, the new one serves');
  await assertNothingLeft(w, timers);
});

upstream('should cancel a slow call upstream and answer -32603 when its deadline passes', async () => {
  const { backend, log } = stdioFaulty();
  const w = open({ upstream: backend, requestTimeoutMs: 400 });
  for (const [id, tool, args] of [
    [1, 'slow', { ms: 60_000 }],
    [2, 'hang', {}],
  ] as const) {
    const answer = await json(w.fetch(call(id, tool, args)));
    assert.is(answer['error']?.code, -32603, JSON.stringify(answer));
    assert.match(answer['error'].message, /did not answer/);
    const upstreamId = startedId(log, tool);
    assert.ok(upstreamId, `the server started ${tool}`);
    assert.ok(
      await settle(() => log.includes(`cancelled ${upstreamId}`), 3000),
      `the server was told to cancel ${tool} ${upstreamId}: ${log.join(' | ')}`,
    );
  }
  assert.is(text(await json(w.fetch(call(3, 'echo', { text: 'still here' })))), 'still here');
  await assertNothingLeft(w, timers);
});

upstream('should skip the garbage a server writes to stdout, deeply nested lines included, and answer the call', async () => {
  const { backend } = stdioFaulty();
  const w = open({ upstream: backend });
  const response = await w.fetch(call(1, 'garbage', {}, { 'io.modelcontextprotocol/logLevel': 'debug', progressToken: 'g' }));
  assert.is(response.headers.get('content-type'), 'text/event-stream');
  const messages = await readUntil(response, (m) => 'id' in m);
  const last = messages[messages.length - 1]!;
  assert.is(last['id'], 1);
  assert.is(text(last), 'survived');
  assert.ok(
    messages.every((m) => JSON.stringify(m).length < 10_000),
    'the nested log was not passed on',
  );
  assert.is(text(await json(w.fetch(call(2, 'echo', { text: 'next' })))), 'next');
  await assertNothingLeft(w, timers);
});

upstream('should answer -32603 at once when the server answers a call with a message nested too deep', async () => {
  const { backend } = stdioFaulty();
  const w = open({ upstream: backend });
  const answer = await json(w.fetch(call(1, 'deep')));
  assert.is(answer['error']?.code, -32603, JSON.stringify(answer).slice(0, 300));
  assert.match(answer['error'].message, /nested deeper/);
  assert.is(text(await json(w.fetch(call(2, 'echo', { text: 'next' })))), 'next');
  await assertNothingLeft(w, timers);
});

upstream.run();

const overHttp = suite('faults of a legacy server over Streamable HTTP');
let server: FaultyHttpServer;
overHttp.before.each(async () => {
  server = await startFaultyHttp();
});
hooks(overHttp);
overHttp.after.each(async () => {
  await server.close();
});

overHttp('should answer and cancel upstream when the server closes the stream mid-response', async () => {
  const w = open({ upstream: httpBackend({ url: server.url }) });
  const answer = await json(w.fetch(call(1, 'drop')));
  assert.is(answer['error']?.code, -32603, JSON.stringify(answer));
  assert.match(answer['error'].message, /stream|connection/, answer['error'].message);
  const upstreamId = startedId(server.started, 'drop');
  assert.ok(upstreamId);
  assert.ok(
    await settle(() => server.cancelled.map((id) => JSON.stringify(id)).includes(upstreamId!), 3000),
    `the server was told to cancel ${upstreamId}: ${JSON.stringify(server.cancelled)}`,
  );
  assert.is(text(await json(w.fetch(call(2, 'echo', { text: 'next' })))), 'next');
  await assertNothingLeft(w, timers);
  await w.close();
  assert.ok(await settle(() => server.sessions === 0, 3000), 'the upstream session was ended');
});

overHttp('should answer -32603 when the server answers 500 to a call, and keep serving', async () => {
  const w = open({ upstream: httpBackend({ url: server.url }) });
  assert.is(text(await json(w.fetch(call(1, 'echo', { text: 'first' })))), 'first');
  server.failTool = 'slow';
  const answer = await json(w.fetch(call(2, 'slow', { ms: 1 })));
  assert.is(answer['error']?.code, -32603, JSON.stringify(answer));
  assert.match(answer['error'].message, /500/);
  server.failTool = undefined;
  assert.is(text(await json(w.fetch(call(3, 'echo', { text: 'again' })))), 'again');
  await assertNothingLeft(w, timers);
});

overHttp('should answer -32603 while the server answers 500 to everything, and serve once it recovers', async () => {
  server.failing = true;
  const w = open({ upstream: httpBackend({ url: server.url }) });
  const answer = await json(w.fetch(call(1, 'echo', { text: 'x' })));
  assert.is(answer['error']?.code, -32603, JSON.stringify(answer));
  assert.match(answer['error'].message, /unavailable/);
  server.failing = false;
  assert.is(text(await json(w.fetch(call(2, 'echo', { text: 'back' })))), 'back');
  await assertNothingLeft(w, timers);
});

overHttp.run();

const client = suite('faults of the client');
hooks(client);
let listening: RunningHttpServer | undefined;
client.after.each(async () => {
  await listening?.close();
  listening = undefined;
});

for (const front of ['fetch', 'node'] as const) {
  const sender = async (w: LegacyServerWrap) => {
    if (front === 'fetch') return (r: Request) => w.fetch(r);
    listening = await serveNodeHttp(w, { port: 0 });
    return viaNode(listening.origin);
  };

  client(`should cancel upstream when the client closes the event stream mid-call (${front})`, async () => {
    const f = inProcessFaulty();
    const w = open({ upstream: f.upstream });
    const send = await sender(w);
    const controller = new AbortController();
    const response = await send(call(1, 'slow', { ms: 60_000 }, { progressToken: 'p' }, controller.signal));
    const first = await readUntil(response, (m) => m['method'] === 'notifications/progress');
    assert.is(first[0]!['params'].progressToken, 'p');
    controller.abort();
    assert.ok(await settle(() => f.cancelled.length === 1, 3000), 'the server was told to cancel');
    assert.is(JSON.stringify(f.cancelled[0]), startedId(f.started, 'slow'));
    await assertNothingLeft(w, timers);
  });

  client(`should cancel upstream when a client waiting for a JSON answer goes away (${front})`, async () => {
    const f = inProcessFaulty();
    const w = open({ upstream: f.upstream });
    const send = await sender(w);
    const controller = new AbortController();
    const pending = send(call(1, 'hang', {}, {}, controller.signal)).then(
      (r) => r.text(),
      (e: unknown) => e,
    );
    assert.ok(await settle(() => f.started.length === 1, 3000));
    controller.abort();
    await pending;
    assert.ok(await settle(() => f.cancelled.length === 1, 3000), 'the server was told to cancel');
    await assertNothingLeft(w, timers);
  });
}

client('should release a parked call whose retry never comes: the push is answered, the call ends or is cancelled', async () => {
  const f = inProcessFaulty();
  const w = open({ upstream: f.upstream, mrtr: new MrtrBroker({ parkTimeoutMs: 200, collectMs: 1 }) });
  const asked = await json(w.fetch(call(1, 'ask_name')));
  assert.is(asked['result'].resultType, 'input_required');
  const waiting = await json(w.fetch(call(2, 'ask_then_wait')));
  assert.is(waiting['result'].resultType, 'input_required');
  assert.is(w.stats().parked, 2);
  // The first call ends on its own once its elicitation is answered `cancel`; the second keeps
  // waiting and is cancelled upstream after the grace period a released call gets.
  assert.ok(await settle(() => f.cancelled.length === 1, 8000), `the server was told to cancel: ${JSON.stringify(f.cancelled)}`);
  assert.is(JSON.stringify(f.cancelled[0]), startedId(f.started, 'ask_then_wait'));
  const late = await json(
    w.fetch(
      post(3, 'tools/call', {
        name: 'ask_name',
        arguments: {},
        inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } },
        requestState: asked['result'].requestState,
      }),
    ),
  );
  assert.is(late['error']?.code, -32602);
  assert.match(late['error'].message, /expired|no longer waiting/);
  await assertNothingLeft(w, timers);
});

client('should cancel upstream when the client goes away during the retry that resumed a parked call', async () => {
  const f = inProcessFaulty();
  const w = open({ upstream: f.upstream, mrtr: new MrtrBroker({ collectMs: 1 }) });
  const asked = await json(w.fetch(call(1, 'ask_then_wait')));
  assert.is(asked['result'].resultType, 'input_required');
  const controller = new AbortController();
  const retry = post(
    2,
    'tools/call',
    {
      name: 'ask_then_wait',
      arguments: {},
      inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } },
      requestState: asked['result'].requestState,
    },
    {},
    controller.signal,
  );
  const pending = w.fetch(retry).then(
    (r) => r.text(),
    (e: unknown) => e,
  );
  await sleep(50);
  assert.is(w.stats().parked, 0, 'the call resumed');
  controller.abort();
  await pending;
  assert.ok(await settle(() => f.cancelled.length === 1, 3000), 'the server was told to cancel');
  await assertNothingLeft(w, timers);
});

client.run();

const stdio = suite('faults of a stdio client');
hooks(stdio);

function stdioClient(w: LegacyServerWrap, graceMs: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: Json[] = [];
  let partial = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    partial += chunk;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const p of parts) lines.push(JSON.parse(p) as Json);
  });
  const front = serveStdio(w, { input, output, closeOnEnd: false, graceMs });
  const send = (message: Json) => input.write(`${JSON.stringify(message)}\n`);
  return { input, lines, front, send };
}

/** Ends the client's input: the front finishes, the cancelled request got no answer, nothing is left. */
async function endCancelled(c: ReturnType<typeof stdioClient>, w: LegacyServerWrap, id: string): Promise<void> {
  c.input.end();
  await bounded(c.front.done, 20_000, 'the front finishing');
  assert.equal(
    c.lines.filter((m) => m['id'] === id),
    [],
    'no answer for a cancelled request',
  );
  await assertNothingLeft(w, timers);
}

stdio('should cancel upstream and answer nothing more when the client sends notifications/cancelled', async () => {
  const f = inProcessFaulty();
  const w = open({ upstream: f.upstream });
  const c = stdioClient(w, 1000);
  c.send({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'slow', arguments: { ms: 60_000 }, _meta: modernMeta() } });
  assert.ok(await settle(() => f.started.length === 1, 3000));
  c.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'changed my mind' } });
  assert.ok(await settle(() => f.cancelled.length === 1, 3000), 'the server was told to cancel');
  c.send({
    jsonrpc: '2.0',
    id: 'echo-1',
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'next' }, _meta: modernMeta() },
  });
  assert.ok(await settle(() => c.lines.some((m) => m['id'] === 'echo-1'), 3000));
  await endCancelled(c, w, 'slow-1');
});

stdio('should park nothing for a call cancelled while its round of input was being gathered', async () => {
  let c: ReturnType<typeof stdioClient> | undefined;
  // The round's gathering asks the server a ping after its push and waits for the answer: the
  // client's cancel comes right when the server reads that ping, before it answers.
  const f = inProcessFaulty(undefined, (message) => {
    if ('method' in message && message.method === 'ping')
      c!.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'ask' } });
  });
  const w = open({ upstream: f.upstream, mrtr: new MrtrBroker({ collectMs: 200 }) });
  c = stdioClient(w, 1000);
  c.send({
    jsonrpc: '2.0',
    id: 'ask',
    method: 'tools/call',
    params: { name: 'ask_then_wait', arguments: {}, _meta: modernMeta({ [CAPS]: { elicitation: {} } }) },
  });
  assert.ok(await settle(() => f.cancelled.length === 1, 8000), 'the server was told to cancel');
  assert.is(w.stats().parked, 0);
  await endCancelled(c, w, 'ask');
});

stdio('should end every request of a reused id when the input ends (and the wrap stays open)', async () => {
  const f = inProcessFaulty();
  const w = open({ upstream: f.upstream });
  const c = stdioClient(w, 1000);
  // The listen reuses the id of a call that finishes first: the listen must still be ended.
  c.send({
    jsonrpc: '2.0',
    id: 'x',
    method: 'subscriptions/listen',
    params: { notifications: { resourcesListChanged: true }, _meta: modernMeta() },
  });
  c.send({ jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'echo', arguments: { text: 'same id' }, _meta: modernMeta() } });
  assert.ok(await settle(() => c.lines.some((m) => m['id'] === 'x' && m['result']), 3000));
  c.input.end();
  await bounded(c.front.done, 20_000, 'the front finishing');
  assert.is(w.stats().listens, 0);
  await assertNothingLeft(w, timers);
});

stdio('should end the calls in flight when the client input ends, cancelling them upstream after the grace period', async () => {
  // A process that serves an in-process server on its own stdio: nothing but its input holds it.
  const child = spawn(TSX, [WRAPPED_STDIO, '300'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const send = (message: Json) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hang', arguments: {}, _meta: modernMeta() } });
  send({
    jsonrpc: '2.0',
    id: 2,
    method: 'subscriptions/listen',
    params: { notifications: { resourcesListChanged: true }, _meta: modernMeta() },
  });
  assert.ok(
    await settle(() => stderr.includes('started hang') && stdout.includes('notifications/subscriptions/acknowledged'), 10_000),
    stderr,
  );
  child.stdin.end();
  assert.is(await bounded(exited, 20_000, 'the process ending'), 0);
  const upstreamId = startedId(stderr.split('\n'), 'hang');
  assert.ok(stderr.includes(`cancelled ${upstreamId}`), `the server was told to cancel: ${stderr}`);
  assert.ok(stderr.trimEnd().endsWith('done'), stderr);
  // The call gets its error; the listen ends gracefully, with its result.
  const answers = stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Json)
    .filter((m) => 'id' in m);
  assert.equal(
    answers.map((m) => [m['id'], m['error']?.code ?? m['result']?.['_meta']?.['io.modelcontextprotocol/subscriptionId']]).sort(),
    [
      [1, -32603],
      [2, 2],
    ],
  );
});

stdio("should answer a legacy session's calls in flight with the server's own failure when its server crashes mid-call", async () => {
  const { backend } = stdioFaulty();
  const w = open({ upstream: backend });
  const c = stdioClient(w, 1000);
  c.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
  });
  assert.ok(await settle(() => c.lines.some((m) => m['id'] === 0), 10_000), 'initialized');
  c.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  c.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 60_000 } } });
  c.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'crash', arguments: {} } });
  assert.ok(await settle(() => c.lines.filter((m) => m['id'] === 1 || m['id'] === 2).length === 2, 10_000), JSON.stringify(c.lines));
  for (const id of [1, 2]) {
    const [answer] = c.lines.filter((m) => m['id'] === id);
    assert.is(answer!['error']?.code, -32603);
    assert.match(answer!['error'].message, 'the upstream server is unavailable: it exited with code');
    assert.type(answer!['error'].data?.exitCode, 'number');
  }
  // A request after it is gone is answered too.
  c.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
  assert.ok(await settle(() => c.lines.some((m) => m['id'] === 3), 3000), 'answered after the server went');
  assert.is(c.lines.find((m) => m['id'] === 3)!['error']?.code, -32603);
  c.input.end();
  await bounded(c.front.done, 20_000, 'the front finishing');
  await w.close();
});

stdio('should answer a legacy initialize with the failure of a server that never starts, and tell the wrap', async () => {
  const w = open({
    upstream: stdioBackend({ command: process.execPath, args: ['-e', 'console.error("Error: no config"); process.exit(2)'] }),
  });
  const failed: Array<{ reason: string; started: boolean }> = [];
  w.events.on('upstream-failed', (e) => failed.push(e));
  const c = stdioClient(w, 1000);
  c.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
  });
  assert.ok(await settle(() => c.lines.some((m) => m['id'] === 0), 10_000), 'answered');
  const [answer] = c.lines;
  assert.is(answer!['error']?.code, -32603);
  assert.match(answer!['error'].message, 'it exited with code 2 before it answered initialize: Error: no config');
  assert.equal(answer!['error'].data?.stderr, ['Error: no config']);
  assert.equal(
    failed.map((f) => f.started),
    [false],
  );
  c.input.end();
  await bounded(c.front.done, 20_000, 'the front finishing');
  await w.close();
});

stdio.run();
