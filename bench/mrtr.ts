/**
 * `npx tsx bench/mrtr.ts [--quick] [--tsx] [--profile] [--lib=DIR] [--only=memory|latency]`: what MRTR suspend mode
 * (lib/wrap/mrtr.ts) costs in the wrap, measured against the goal of the issue: under 4 KB of memory
 * per parked call beyond the messages themselves.
 *
 * 1. Memory. N calls (10,000; 1,000 with --quick) parked at once, in process, one principal and one
 *    capability set: `wrapLegacyServer({ upstream, mrtr: new MrtrBroker({ parkTimeoutMs: 600000 }) })`.
 *    Heap after warm-up and gc (baseline) → park N `ask_name` calls (each answered `input_required`)
 *    → gc → heap → resume all N (each must answer "Hello, <name>!") → gc → heap, `broker.parked`.
 *    Separately, in a fresh process: the messages themselves (the pushed request and the original
 *    request params: their JSON size and the heap N parsed copies of each take), and the legacy
 *    server alone (the same server driven by a bare in-memory client, its N pushes left unanswered):
 *    in process, the server's own suspended handlers share the heap with the wrap.
 *
 *      per parked call = (heap parked − baseline) / N           wrap and in-process server
 *      wrap alone      = per parked call − server alone
 *      beyond messages = wrap alone − original params           (in process the pushed request is
 *                                                                 the server's own object, already
 *                                                                 counted in "server alone")
 *
 *    The server is pushServer's `ask_name` with one change: it passes `relatedRequestId` (and a
 *    10-minute timeout) to `elicitInput`. The unmodified fixture's push names no request, so on a
 *    shared upstream session it cannot be attributed while another call that may push is in flight:
 *    one principal can park only as many calls as it has upstream sessions (the pool's 4 per key).
 *    A probe shows that limit with the unmodified fixture: six calls one after another, 1.5 s each
 *    to answer; the full run then waits for the late ones (the session's 10 s ambiguity timeout).
 * 2. Latency, sequential (one call at a time, unmodified pushServer): `echo`, and a full `ask_name`
 *    round (first call → `input_required`, retry → result), through `wrap.serveModern` and through
 *    `wrap.fetch` (Streamable HTTP, in process), with the default `collectMs` (15 ms: how long the
 *    broker waits for further pushes before answering) and with `collectMs: 0`; and, for scale, the
 *    legacy server alone (a bare in-memory client answering the push itself).
 *
 * Every measurement runs in a child process started with `node --expose-gc`, on lib/ transpiled to
 * JavaScript with TypeScript's `transpileModule` into bench/results/.mrtr-build/ (what `npm run build`
 * emits; tsx's esbuild transform wraps closures in `__name(fn, "…")`, which gives each closure its
 * own property storage and so inflates per-call memory). `--tsx` also measures parked-call memory under the tsx loader; `--lib=DIR` measures a
 * compiled lib/ directory instead (e.g. `dist`, or a patched build to compare); `--profile` writes
 * heap snapshots of 2,000 parked calls to bench/results/profiles/ and prints what each parked call
 * adds to the heap, by kind of object (closures by what they capture); `--only` runs one part.
 *
 * Prints a table and writes bench/results/mrtr.json. Timings are reported, never asserted; the exit
 * status is non-zero only when a measured call gives a wrong answer (or a child fails).
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../lib/core/jsonrpc.ts';
import type { ModernContext } from '../lib/wrap/modernDispatch.ts';
import type * as MrtrModule from '../lib/wrap/mrtr.ts';
import type * as MemoryModule from '../lib/transport/memory.ts';
import type * as WrapModule from '../lib/wrap/wrapLegacyServer.ts';
import { createPushServer } from '../fixtures/servers/pushServer.ts';

// ---------------------------------------------------------------------------------------------
// Requests and answers
// ---------------------------------------------------------------------------------------------

const VERSION = '2026-07-28';
const META_TEXT = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'mrtr-bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
});
const PARK_TIMEOUT_MS = 600_000;

/** The params of a first `ask_name` call, as the client sends them. */
const askParamsText = `{"name":"ask_name","arguments":{},"_meta":${META_TEXT}}`;

function askText(id: number): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${askParamsText}}`;
}

/** The retry: a new id, the same params, the answer and the state (base64url: no escaping needed). */
function retryText(id: number, state: string, name: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"ask_name","arguments":{},"inputResponses":{"elicitation-1":{"action":"accept","content":{"name":"${name}"}}},"requestState":"${state}","_meta":${META_TEXT}}}`;
}

function echoText(id: number, text: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"},"_meta":${META_TEXT}}}`;
}

type Json = Record<string, unknown>;

function resultOf(message: JsonRpcResponse | undefined, id: number): Json | string {
  if (!message) return 'no answer';
  if (message.id !== id) return `id ${JSON.stringify(message.id)} for request ${id}`;
  if (!('result' in message)) return `error ${JSON.stringify((message as { error?: unknown }).error).slice(0, 200)}`;
  return message.result as Json;
}

/** The `requestState` of an `input_required` answer, or what was wrong. */
function stateOf(message: JsonRpcResponse | undefined, id: number): { state: string } | { wrong: string } {
  const result = resultOf(message, id);
  if (typeof result === 'string') return { wrong: result };
  if (result['resultType'] !== 'input_required') return { wrong: `resultType ${JSON.stringify(result['resultType'])}: ${JSON.stringify(result).slice(0, 160)}` };
  const inputs = result['inputRequests'] as Json | undefined;
  if (!inputs || !('elicitation-1' in inputs)) return { wrong: `no elicitation-1 in ${JSON.stringify(inputs).slice(0, 160)}` };
  const state = result['requestState'];
  return typeof state === 'string' ? { state } : { wrong: 'no requestState' };
}

/** `undefined` when the answer is a complete result whose one text is `text`, else what was wrong. */
function checkText(message: JsonRpcResponse | undefined, id: number, text: string): string | undefined {
  const result = resultOf(message, id);
  if (typeof result === 'string') return result;
  if (result['resultType'] !== 'complete') return `resultType ${JSON.stringify(result['resultType'])}`;
  const content = result['content'] as Array<{ text?: unknown }> | undefined;
  const got = content?.[0]?.text;
  return got === text ? undefined : `text ${JSON.stringify(got)} instead of ${JSON.stringify(text)}`;
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const noop = (): void => {};

/** Runs `fn(0 … n-1)` with at most `limit` in flight. */
async function forEachLimit(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

/** Full collections, with turns of the event loop between them (finalizers, weak cells), then the usage. */
async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await sleep(15);
  }
  gc();
  return process.memoryUsage();
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface Stats {
  readonly n: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
}

function stats(samplesMs: readonly number[]): Stats {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50Us: percentile(sorted, 50) * 1000, p99Us: percentile(sorted, 99) * 1000, meanUs: mean * 1000 };
}

/** The wrong answers of one measurement: how many, and the first few. */
class Wrong {
  count = 0;
  readonly first: string[] = [];
  add(what: string): void {
    this.count++;
    if (this.first.length < 5) this.first.push(what);
  }
  toJSON(): { count: number; first: string[] } {
    return { count: this.count, first: this.first };
  }
}

// ---------------------------------------------------------------------------------------------
// The library under measurement, loaded at run time from --libdir
// ---------------------------------------------------------------------------------------------

interface Lib {
  readonly wrapLegacyServer: (typeof WrapModule)['wrapLegacyServer'];
  readonly MrtrBroker: (typeof MrtrModule)['MrtrBroker'];
  readonly createMemoryPair: (typeof MemoryModule)['createMemoryPair'];
}

async function loadLib(dir: string, ext: string): Promise<Lib> {
  const load = (path: string) => import(pathToFileURL(join(dir, `${path}${ext}`)).href);
  const wrap = (await load('wrap/wrapLegacyServer')) as typeof WrapModule;
  const mrtr = (await load('wrap/mrtr')) as typeof MrtrModule;
  const memory = (await load('transport/memory')) as typeof MemoryModule;
  return { wrapLegacyServer: wrap.wrapLegacyServer, MrtrBroker: mrtr.MrtrBroker, createMemoryPair: memory.createMemoryPair };
}

type Wrap = WrapModule.LegacyServerWrap;

/**
 * pushServer's `ask_name`, except that its push names the call it belongs to (`relatedRequestId`,
 * as `extra.sendRequest` would) and waits up to 10 minutes for the answer (the SDK's default is 60 s).
 */
function createRelatedPushServer(): McpServer {
  const server = new McpServer({ name: 'push-server', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('ask_name', { description: 'Asks the user for a name, then greets them' }, async (extra) => {
    const answer = await server.server.elicitInput(
      { mode: 'form', message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
      { relatedRequestId: extra.requestId, timeout: PARK_TIMEOUT_MS },
    );
    const name = answer.action === 'accept' ? String(answer.content?.['name']) : 'stranger';
    return { content: [{ type: 'text', text: `Hello, ${name}!` }] };
  });
  return server;
}

/** One way of sending a modern request text to a wrap and getting its answer. */
type Caller = (text: string, name: string) => Promise<JsonRpcResponse | undefined>;

function directCaller(wrap: Wrap): Caller {
  return async (text) => {
    const ctx: ModernContext = { principal: 'bench', signal: new AbortController().signal, notify: noop };
    return (await wrap.serveModern(JSON.parse(text) as JsonRpcRequest, ctx))?.message;
  };
}

function httpCaller(wrap: Wrap): Caller {
  return async (text, name) => {
    const request = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        host: '127.0.0.1',
        'content-length': String(Buffer.byteLength(text)),
        'MCP-Protocol-Version': VERSION,
        'Mcp-Method': 'tools/call',
        'Mcp-Name': name,
      },
      body: text,
    });
    const response = await wrap.fetch(request);
    return (await response.json()) as JsonRpcResponse;
  };
}

// ---------------------------------------------------------------------------------------------
// Child: parked-call memory through the wrap
// ---------------------------------------------------------------------------------------------

interface Usage {
  readonly heapUsed: number;
  readonly rss: number;
  readonly external: number;
}

const usage = (u: NodeJS.MemoryUsage): Usage => ({ heapUsed: u.heapUsed, rss: u.rss, external: u.external + u.arrayBuffers });

interface WrapMemoryResult {
  readonly kind: 'wrap-memory';
  readonly transport: 'direct' | 'http';
  readonly loader: string;
  readonly n: number;
  readonly baseline: Usage;
  readonly parked: Usage;
  readonly resumed: Usage;
  readonly parkMs: number;
  readonly resumeMs: number;
  readonly upstreamSessions: number;
  readonly parkedAfterParking: number;
  readonly parkedAfterResuming: number;
  /** Upstream calls in flight and session holds once every call was resumed (both should be 0). */
  readonly inFlightAfter: number;
  readonly holdsAfter: number;
  readonly wrong: Wrong;
  readonly snapshots?: { readonly baseline: string; readonly parked: string };
}

async function wrapMemory(lib: Lib, o: ChildOptions): Promise<WrapMemoryResult> {
  const broker = new lib.MrtrBroker({ parkTimeoutMs: PARK_TIMEOUT_MS });
  const wrap = lib.wrapLegacyServer({ upstream: () => createRelatedPushServer(), mrtr: broker });
  const call = o.transport === 'http' ? httpCaller(wrap) : directCaller(wrap);
  const wrong = new Wrong();
  const limit = 256;

  const park = async (count: number, firstId: number, states: string[]) => {
    await forEachLimit(count, limit, async (i) => {
      const id = firstId + i;
      const got = stateOf(await call(askText(id), 'ask_name'), id);
      if ('wrong' in got) wrong.add(`park ${id}: ${got.wrong}`);
      else states[i] = got.state;
    });
  };
  const resume = async (states: string[], firstId: number) => {
    await forEachLimit(states.length, limit, async (i) => {
      const state = states[i];
      if (state === undefined) return;
      const id = firstId + i;
      const name = `u${i}`;
      const problem = checkText(await call(retryText(id, state, name), 'ask_name'), id, `Hello, ${name}!`);
      if (problem) wrong.add(`resume ${id}: ${problem}`);
    });
  };

  // Warm-up: every code path hot, the upstream sessions open (calls that push get sessions of their own, up to 4).
  const warm = o.quick ? { rounds: 2, calls: 100 } : { rounds: 3, calls: 200 };
  for (let round = 0; round < warm.rounds; round++) {
    const states: string[] = new Array(warm.calls);
    await park(warm.calls, 1_000_000 + round * 1000, states);
    await resume(states, 2_000_000 + round * 1000);
  }
  const states: string[] = new Array(o.n);
  const snapshotDir = o.snapshotPrefix;
  const baseline = usage(await settle());
  const baselineSnapshot = snapshotDir ? writeHeapSnapshot(`${snapshotDir}-baseline.heapsnapshot`) : undefined;

  let t = performance.now();
  await park(o.n, 0, states);
  const parkMs = performance.now() - t;
  const parkedAfterParking = broker.parked;
  const upstreamSessions = wrap.pool.sessions().length;
  const parked = usage(await settle());
  const parkedSnapshot = snapshotDir ? writeHeapSnapshot(`${snapshotDir}-parked.heapsnapshot`) : undefined;

  t = performance.now();
  await resume(states, 10_000_000);
  const resumeMs = performance.now() - t;
  states.length = 0;
  const idle = () => wrap.pool.sessions().every(({ session }) => session.inFlight === 0 && session.holds === 0);
  for (let i = 0; i < 100 && !idle(); i++) await sleep(10);
  const resumed = usage(await settle());
  const sessions = wrap.pool.sessions();
  const result: WrapMemoryResult = {
    kind: 'wrap-memory',
    transport: o.transport,
    loader: o.loader,
    n: o.n,
    baseline,
    parked,
    resumed,
    parkMs,
    resumeMs,
    upstreamSessions,
    parkedAfterParking,
    parkedAfterResuming: broker.parked,
    inFlightAfter: sessions.reduce((s, x) => s + x.session.inFlight, 0),
    holdsAfter: sessions.reduce((s, x) => s + x.session.holds, 0),
    wrong,
    ...(baselineSnapshot && parkedSnapshot ? { snapshots: { baseline: baselineSnapshot, parked: parkedSnapshot } } : {}),
  };
  await wrap.close();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Child: the messages themselves, and the legacy server alone
// ---------------------------------------------------------------------------------------------

interface ServerMemoryResult {
  readonly kind: 'server-memory';
  readonly n: number;
  /** The pushed `elicitation/create` request as the server sent it, and its JSON size. */
  readonly pushJson: string;
  readonly pushJsonBytes: number;
  /** The original request's params (with the modern `_meta`), and their JSON size. */
  readonly paramsJson: string;
  readonly paramsJsonBytes: number;
  /** Heap per parsed copy, N copies kept in an array. */
  readonly pushHeapPerCopy: number;
  readonly paramsHeapPerCopy: number;
  /** The server alone: heap per suspended `ask_name` call, and per call once every push was answered. */
  readonly serverPerSuspended: number;
  readonly serverPerFinished: number;
  readonly wrong: Wrong;
}

/** The heap `n` values made by `make` take, per value. */
async function heapPerCopy(n: number, make: (i: number) => unknown): Promise<number> {
  const keep: unknown[] = new Array(n).fill(null);
  const before = (await settle()).heapUsed;
  for (let i = 0; i < n; i++) keep[i] = make(i);
  const after = (await settle()).heapUsed;
  const perCopy = (after - before) / n;
  keep.fill(null);
  return perCopy;
}

async function serverMemory(lib: Lib, o: ChildOptions): Promise<ServerMemoryResult> {
  const wrong = new Wrong();
  const [client, serverSide] = lib.createMemoryPair();
  await createRelatedPushServer().connect(serverSide as never);
  const pushIds: number[] = new Array(o.n + 1000).fill(0);
  let pushes = 0;
  let results = 0;
  let samplePush: JsonRpcMessage | undefined;
  client.onmessage = (message) => {
    const m = message as { method?: string; id?: number; result?: { content?: Array<{ text?: string }> } };
    if (m.method === 'elicitation/create') {
      samplePush ??= message;
      pushIds[pushes++] = m.id!;
    } else if (m.id !== undefined && m.id >= 0 && m.result) {
      results++;
      if (m.result.content?.[0]?.text !== 'Hello, x!') wrong.add(`server alone: ${JSON.stringify(m.result).slice(0, 160)}`);
    }
  };
  await client.start();
  await client.send({ jsonrpc: '2.0', id: -1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'mrtr-bench', version: '1.0.0' } } });
  await sleep(20);
  await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const waitFor = async (done: () => boolean) => {
    for (let i = 0; !done(); i++) {
      if (i > 6000) throw new Error('the legacy server did not answer in time');
      await sleep(5);
    }
  };
  const round = async (count: number, firstId: number, answer: boolean) => {
    pushes = 0;
    for (let i = 0; i < count; i++) await client.send({ jsonrpc: '2.0', id: firstId + i, method: 'tools/call', params: { name: 'ask_name', arguments: {} } });
    await waitFor(() => pushes >= count);
    if (!answer) return;
    results = 0;
    for (let i = 0; i < count; i++) await client.send({ jsonrpc: '2.0', id: pushIds[i]!, result: { action: 'accept', content: { name: 'x' } } });
    await waitFor(() => results >= count);
  };

  for (let r = 0; r < (o.quick ? 2 : 3); r++) await round(o.quick ? 150 : 300, 1_000_000 + r * 1000, true);
  const pushJson = JSON.stringify(samplePush);
  const paramsJson = askParamsText;
  // At least 10,000 copies: the heap moves by a few hundred KB between collections anyway.
  const copies = Math.max(o.n, 10_000);
  const pushHeapPerCopy = await heapPerCopy(copies, (i) => JSON.parse(pushJson.replace(/"id":\d+/, `"id":${i}`)));
  const paramsHeapPerCopy = await heapPerCopy(copies, () => JSON.parse(paramsJson));

  const h0 = (await settle()).heapUsed;
  await round(o.n, 0, false);
  const h1 = (await settle()).heapUsed;
  results = 0;
  for (let i = 0; i < o.n; i++) await client.send({ jsonrpc: '2.0', id: pushIds[i]!, result: { action: 'accept', content: { name: 'x' } } });
  await waitFor(() => results >= o.n);
  const h2 = (await settle()).heapUsed;
  await client.close();
  return {
    kind: 'server-memory',
    n: o.n,
    pushJson,
    pushJsonBytes: Buffer.byteLength(pushJson),
    paramsJson,
    paramsJsonBytes: Buffer.byteLength(paramsJson),
    pushHeapPerCopy,
    paramsHeapPerCopy,
    serverPerSuspended: (h1 - h0) / o.n,
    serverPerFinished: (h2 - h0) / o.n,
    wrong,
  };
}

// ---------------------------------------------------------------------------------------------
// Child: latency of a plain call and of a full MRTR round
// ---------------------------------------------------------------------------------------------

interface RoundStats {
  readonly first: Stats;
  readonly retry: Stats;
  readonly round: Stats;
}

interface LatencyCell {
  readonly transport: 'direct' | 'http';
  readonly echo: Stats;
  /** `collectMs` default (15 ms). */
  readonly roundDefault: RoundStats;
  /** `collectMs: 0`. */
  readonly roundCollect0: RoundStats;
}

interface LatencyResult {
  readonly kind: 'latency';
  readonly cells: LatencyCell[];
  /** The legacy server alone, driven by a bare in-memory client: `echo`, and `ask_name` with its push answered. */
  readonly serverAlone: { readonly echo: Stats; readonly round: Stats };
  readonly wrong: Wrong;
}

/** The legacy server's own share of a call: unmodified pushServer, a bare client on an in-memory pipe. */
async function serverAloneLatency(lib: Lib, counts: { warm: number; n: number }, wrong: Wrong): Promise<LatencyResult['serverAlone']> {
  const [client, serverSide] = lib.createMemoryPair();
  await createPushServer().connect(serverSide as never);
  const waiting = new Map<number, (message: Json) => void>();
  let onPush: ((push: Json) => void) | undefined;
  client.onmessage = (message) => {
    const m = message as Json;
    if (m['method'] === 'elicitation/create') onPush?.(m);
    else if (typeof m['id'] === 'number') {
      waiting.get(m['id'])?.(m);
      waiting.delete(m['id']);
    }
  };
  await client.start();
  const request = (id: number, method: string, params: Json) =>
    new Promise<Json>((resolve) => {
      waiting.set(id, resolve);
      void client.send({ jsonrpc: '2.0', id, method, params });
    });
  await request(0, 'initialize', { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'mrtr-bench', version: '1.0.0' } });
  await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const textOf = (m: Json) => ((m['result'] as Json | undefined)?.['content'] as Array<{ text?: unknown }> | undefined)?.[0]?.text;
  let id = 0;
  const echo = async (count: number) => {
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const n = ++id;
      const t = performance.now();
      const m = await request(n, 'tools/call', { name: 'echo', arguments: { text: `e${n}` } });
      samples.push(performance.now() - t);
      if (textOf(m) !== `e${n}`) wrong.add(`server alone echo ${n}: ${JSON.stringify(m).slice(0, 160)}`);
    }
    return samples;
  };
  const round = async (count: number) => {
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const n = ++id;
      const t = performance.now();
      const pushed = new Promise<Json>((resolve) => (onPush = resolve));
      const answer = request(n, 'tools/call', { name: 'ask_name', arguments: {} });
      const push = await pushed;
      void client.send({ jsonrpc: '2.0', id: push['id'] as number, result: { action: 'accept', content: { name: `s${n}` } } });
      const m = await answer;
      samples.push(performance.now() - t);
      if (textOf(m) !== `Hello, s${n}!`) wrong.add(`server alone ask ${n}: ${JSON.stringify(m).slice(0, 160)}`);
    }
    return samples;
  };
  await echo(counts.warm);
  await round(counts.warm);
  const result = { echo: stats(await echo(counts.n)), round: stats(await round(counts.n)) };
  await client.close();
  return result;
}

async function latency(lib: Lib, o: ChildOptions): Promise<LatencyResult> {
  const wrong = new Wrong();
  const cells: LatencyCell[] = [];
  const plain = o.quick ? { warm: 100, n: 300 } : { warm: 500, n: 2000 };
  // A default round waits collectMs (15 ms) for further pushes: fewer iterations keep the run short.
  const slow = o.quick ? { warm: 10, n: 60 } : { warm: 30, n: 300 };
  let id = 0;
  for (const transport of ['direct', 'http'] as const) {
    const wrapDefault = lib.wrapLegacyServer({ upstream: () => createPushServer(), mrtr: new lib.MrtrBroker({ parkTimeoutMs: PARK_TIMEOUT_MS }) });
    const wrap0 = lib.wrapLegacyServer({ upstream: () => createPushServer(), mrtr: new lib.MrtrBroker({ parkTimeoutMs: PARK_TIMEOUT_MS, collectMs: 0 }) });
    const echo = async (call: Caller, count: number) => {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) {
        const n = ++id;
        const t = performance.now();
        const answer = await call(echoText(n, `e${n}`), 'echo');
        samples.push(performance.now() - t);
        const problem = checkText(answer, n, `e${n}`);
        if (problem) wrong.add(`${transport} echo ${n}: ${problem}`);
      }
      return samples;
    };
    const rounds = async (call: Caller, count: number) => {
      const first: number[] = [];
      const retry: number[] = [];
      const round: number[] = [];
      for (let i = 0; i < count; i++) {
        const n = ++id;
        const t0 = performance.now();
        const got = stateOf(await call(askText(n), 'ask_name'), n);
        const t1 = performance.now();
        if ('wrong' in got) {
          wrong.add(`${transport} ask ${n}: ${got.wrong}`);
          continue;
        }
        const r = ++id;
        const answer = await call(retryText(r, got.state, `v${n}`), 'ask_name');
        const t2 = performance.now();
        const problem = checkText(answer, r, `Hello, v${n}!`);
        if (problem) {
          wrong.add(`${transport} retry ${r}: ${problem}`);
          continue;
        }
        first.push(t1 - t0);
        retry.push(t2 - t1);
        round.push(t2 - t0);
      }
      return { first: stats(first), retry: stats(retry), round: stats(round) };
    };
    const callDefault = transport === 'http' ? httpCaller(wrapDefault) : directCaller(wrapDefault);
    const call0 = transport === 'http' ? httpCaller(wrap0) : directCaller(wrap0);
    await echo(callDefault, plain.warm);
    await rounds(call0, plain.warm);
    await rounds(callDefault, slow.warm);
    const echoStats = stats(await echo(callDefault, plain.n));
    const roundCollect0 = await rounds(call0, plain.n);
    const roundDefault = await rounds(callDefault, slow.n);
    cells.push({ transport, echo: echoStats, roundDefault, roundCollect0 });
    await Promise.all([wrapDefault.close(), wrap0.close()]);
  }
  const serverAlone = await serverAloneLatency(lib, plain, wrong);
  return { kind: 'latency', cells, serverAlone, wrong };
}

// ---------------------------------------------------------------------------------------------
// Child: how many calls one principal can park with the unmodified pushServer
// ---------------------------------------------------------------------------------------------

interface ProbeResult {
  readonly kind: 'probe';
  readonly waitedMs: number;
  readonly calls: Array<{ readonly call: number; readonly outcome: string; readonly ms: number }>;
  readonly parked: number;
  readonly upstreamSessions: number;
  /** The parked calls, resumed: each must greet its name. */
  readonly resumedOk: number;
}

async function probe(lib: Lib, o: ChildOptions): Promise<ProbeResult> {
  const broker = new lib.MrtrBroker({ parkTimeoutMs: PARK_TIMEOUT_MS });
  const wrap = lib.wrapLegacyServer({ upstream: () => createPushServer(), mrtr: broker });
  const call = directCaller(wrap);
  const wait = 1500;
  const calls: Array<{ call: number; outcome: string; ms: number }> = [];
  const states: Array<[number, string]> = [];
  const late: Array<{ index: number; started: number; answer: Promise<JsonRpcResponse | undefined> }> = [];
  const describe = (message: JsonRpcResponse | undefined, n: number): string => {
    const got = stateOf(message, n);
    if ('state' in got) {
      states.push([n, got.state]);
      return 'input_required';
    }
    const result = resultOf(message, n);
    return typeof result === 'string' ? result : `${String(result['resultType'])}: ${JSON.stringify((result['content'] as Array<{ text?: string }> | undefined)?.[0]?.text)}`;
  };
  for (let n = 1; n <= 6; n++) {
    const started = performance.now();
    const answer = call(askText(n), 'ask_name');
    const first = await Promise.race([answer, sleep(wait).then(() => 'timeout' as const)]);
    if (first === 'timeout') {
      calls.push({ call: n, outcome: `no answer within ${wait} ms`, ms: wait });
      late.push({ index: calls.length - 1, started, answer });
    } else calls.push({ call: n, outcome: describe(first, n), ms: performance.now() - started });
  }
  const parked = broker.parked;
  const upstreamSessions = wrap.pool.sessions().length;
  if (o.probeWait) {
    for (const l of late) {
      const got = await Promise.race([l.answer, sleep(15_000).then(() => 'timeout' as const)]);
      const entry = calls[l.index]!;
      calls[l.index] = got === 'timeout' ? { ...entry, outcome: 'no answer within 15 s' } : { call: entry.call, outcome: `${describe(got, entry.call)} (late)`, ms: performance.now() - l.started };
    }
  }
  let resumedOk = 0;
  for (const [n, state] of states) {
    const r = 100 + n;
    if (!checkText(await call(retryText(r, state, `p${n}`), 'ask_name'), r, `Hello, p${n}!`)) resumedOk++;
  }
  await wrap.close();
  return { kind: 'probe', waitedMs: wait, calls, parked, upstreamSessions, resumedOk };
}

// ---------------------------------------------------------------------------------------------
// Child entry
// ---------------------------------------------------------------------------------------------

interface ChildOptions {
  readonly child: string;
  readonly libDir: string;
  readonly ext: string;
  readonly out: string;
  readonly n: number;
  readonly transport: 'direct' | 'http';
  readonly loader: string;
  readonly quick: boolean;
  readonly probeWait: boolean;
  readonly snapshotPrefix?: string;
}

function option(args: readonly string[], name: string): string | undefined {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

async function runChild(args: readonly string[]): Promise<void> {
  const snapshotPrefix = option(args, 'snapshot');
  const o: ChildOptions = {
    child: option(args, 'child')!,
    libDir: option(args, 'libdir')!,
    ext: option(args, 'ext') ?? '.js',
    out: option(args, 'out')!,
    n: Number(option(args, 'n') ?? 10_000),
    transport: option(args, 'transport') === 'http' ? 'http' : 'direct',
    loader: option(args, 'loader') ?? 'node',
    quick: args.includes('--quick'),
    probeWait: args.includes('--probe-wait'),
    ...(snapshotPrefix ? { snapshotPrefix } : {}),
  };
  const lib = await loadLib(o.libDir, o.ext);
  const run = { 'wrap-memory': wrapMemory, 'server-memory': serverMemory, latency, probe }[o.child];
  if (!run) throw new Error(`unknown child ${o.child}`);
  const result = await run(lib, o);
  writeFileSync(o.out, JSON.stringify(result, null, 1));
  // The legacy server's pending pushes hold timers; nothing else is left to wait for.
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Parent: build, run the children, report
// ---------------------------------------------------------------------------------------------

const root = resolve(import.meta.dirname, '..');
const resultsDir = join(root, 'bench', 'results');
const buildDir = join(resultsDir, '.mrtr-build');

/**
 * lib/, the push server fixture and this file as JavaScript (types erased, one file at a time);
 * a file whose JavaScript is newer than its source is kept.
 */
async function build(): Promise<void> {
  const sources: string[] = [join(root, 'fixtures', 'servers', 'pushServer.ts'), join(root, 'bench', 'mrtr.ts')];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(path);
    }
  };
  walk(join(root, 'lib'));
  const outOf = (source: string) => join(buildDir, relative(root, source)).replace(/\.ts$/, '.js');
  const mtime = (path: string) => {
    try {
      return statSync(path).mtimeMs;
    } catch {
      return -1;
    }
  };
  const stale = sources.filter((source) => mtime(outOf(source)) < mtime(source));
  if (stale.length === 0) return;
  const ts = (await import('typescript')).default;
  for (const source of stale) {
    const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
      fileName: source,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true, rewriteRelativeImportExtensions: true },
    });
    const out = outOf(source);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
}

interface Spawned<T> {
  readonly ok: boolean;
  readonly result?: T;
  readonly error?: string;
}

let childSeq = 0;

/** Starts one measurement in a fresh `node --expose-gc` and returns what it wrote. */
function child<T>(args: readonly string[], options: { tsx?: boolean; timeoutMs: number; lib: { dir: string; ext: string } }): Promise<Spawned<T>> {
  const out = join(buildDir, `child-${process.pid}-${++childSeq}.json`);
  const script = options.tsx ? join(root, 'bench', 'mrtr.ts') : join(buildDir, 'bench', 'mrtr.js');
  const nodeArgs = ['--expose-gc', ...(options.tsx ? ['--import', 'tsx'] : []), script, ...args, `--libdir=${options.lib.dir}`, `--ext=${options.lib.ext}`, `--out=${out}`, `--loader=${options.tsx ? 'tsx' : 'node'}`];
  return new Promise((done) => {
    const proc = spawn(process.execPath, nodeArgs, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(signal ? `killed by ${signal}` : `exit code ${code}`);
        done({ ok: true, result: JSON.parse(readFileSync(out, 'utf8')) as T });
      } catch (e) {
        done({ ok: false, error: `${args.join(' ')}: ${e instanceof Error ? e.message : String(e)}` });
      } finally {
        rmSync(out, { force: true });
      }
    });
  });
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
const us = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} ms` : `${Math.round(x)} µs`);
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);

/** What one parked-call memory run says per call, with the server alone and the messages. */
function perCall(w: WrapMemoryResult, s: ServerMemoryResult | undefined) {
  const total = (w.parked.heapUsed - w.baseline.heapUsed) / w.n;
  const rss = (w.parked.rss - w.baseline.rss) / w.n;
  const residue = (w.resumed.heapUsed - w.baseline.heapUsed) / w.n;
  const wrapAlone = s ? total - s.serverPerSuspended : undefined;
  const beyond = s && wrapAlone !== undefined ? wrapAlone - s.paramsHeapPerCopy : undefined;
  const wrapResidue = s ? residue - s.serverPerFinished : undefined;
  return { total, rss, residue, wrapAlone, beyond, wrapResidue };
}

/** Per parked call, what the heap gained between two snapshots, by kind of object. */
function snapshotDiff(baseline: string, parked: string, n: number): Array<{ what: string; bytes: number; count: number }> {
  interface Snapshot {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  }
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const before = read(baseline);
  const nfBefore = before.snapshot.meta.node_fields.length;
  const known = new Set<number>();
  for (let i = 0; i < before.nodes.length; i += nfBefore) known.add(before.nodes[i + 2]!);
  const s = read(parked);
  const meta = s.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const edgeCount = meta.node_fields.indexOf('edge_count');
  const firstEdge: number[] = [];
  for (let i = 0, e = 0; i < s.nodes.length / nf; i++) {
    firstEdge.push(e);
    e += s.nodes[i * nf + edgeCount]!;
  }
  const named = (node: number, kinds: readonly string[]) => {
    const names: string[] = [];
    const count = s.nodes[node * nf + edgeCount]!;
    for (let k = 0; k < count; k++) {
      const e = (firstEdge[node]! + k) * ef;
      const kind = edgeTypes[s.edges[e]!]!;
      if (kinds.includes(kind)) names.push(`${kind === 'internal' ? '@' : ''}${s.strings[s.edges[e + 1]!]!}`);
    }
    return names;
  };
  const edgeTo = (node: number, name: string) => {
    const count = s.nodes[node * nf + edgeCount]!;
    for (let k = 0; k < count; k++) {
      const e = (firstEdge[node]! + k) * ef;
      if (edgeTypes[s.edges[e]!] === 'internal' && s.strings[s.edges[e + 1]!] === name) return s.edges[e + 2]! / nf;
    }
    return undefined;
  };
  const groups = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < s.nodes.length / nf; i++) {
    if (known.has(s.nodes[i * nf + 2]!)) continue;
    const type = nodeTypes[s.nodes[i * nf]!]!;
    const name = s.strings[s.nodes[i * nf + 1]!]!;
    let what = `${type} ${name}`;
    if (type === 'closure') {
      const context = edgeTo(i, 'context');
      what = `closure ${name || '(anonymous)'} capturing [${context === undefined ? '' : named(context, ['context']).join(', ')}]`;
    } else if (type === 'object' && (name === 'Object' || name === 'system / Context')) {
      what = `${name === 'Object' ? 'object' : 'context'} {${named(i, ['property', 'context']).filter((p) => p !== '__proto__').slice(0, 12).join(', ')}}`;
    } else if (type.includes('string') || type === 'number') what = type;
    const g = groups.get(what) ?? { bytes: 0, count: 0 };
    g.bytes += s.nodes[i * nf + 3]!;
    g.count++;
    groups.set(what, g);
  }
  return [...groups].map(([what, g]) => ({ what, bytes: g.bytes / n, count: g.count / n })).sort((a, b) => b.bytes - a.bytes);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (option(args, 'child')) return runChild(args);
  const quick = args.includes('--quick');
  const alsoTsx = args.includes('--tsx');
  const profile = args.includes('--profile');
  const libOption = option(args, 'lib');
  const only = option(args, 'only');
  const unknown = args.filter((a) => !['--quick', '--tsx', '--profile'].includes(a) && !a.startsWith('--lib=') && a !== '--only=memory' && a !== '--only=latency');
  if (unknown.length > 0) {
    console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npx tsx bench/mrtr.ts [--quick] [--tsx] [--profile] [--lib=DIR] [--only=memory|latency]`);
    process.exit(2);
  }
  const memory = only !== 'latency';
  const timing = only !== 'memory';
  const n = quick ? 1_000 : 10_000;
  const timeoutMs = quick ? 60_000 : 150_000;
  const started = performance.now();
  const load = loadavg()[0]!;
  console.log(`MRTR bench (${quick ? 'quick' : 'full'}): ${n.toLocaleString('en-US')} parked calls; node ${process.version}, ${cpus().length} CPUs, load average ${load.toFixed(2)}`);
  await build();
  const lib = libOption ? { dir: resolve(libOption), ext: '.js' } : { dir: join(buildDir, 'lib'), ext: '.js' };
  const libLabel = libOption ? `compiled lib at ${relative(root, lib.dir) || '.'}` : 'lib/ transpiled (TypeScript transpileModule)';
  console.log(`measuring ${libLabel}; built in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const failures: string[] = [];
  const take = <T>(s: Spawned<T> | undefined): T | undefined => {
    if (s && !s.ok) failures.push(s.error ?? 'a child failed');
    return s?.result;
  };
  const base = { timeoutMs, lib };
  const q = quick ? ['--quick'] : [];
  const wrapRun = (transport: 'direct' | 'http', more: readonly string[] = [], options: Partial<typeof base> & { tsx?: boolean } = {}) =>
    child<WrapMemoryResult>(['--child=wrap-memory', `--n=${n}`, `--transport=${transport}`, ...q, ...more], { ...base, ...options });
  const profileDir = join(resultsDir, 'profiles');
  if (profile) mkdirSync(profileDir, { recursive: true });
  // Memory runs two children at a time (heap sizes do not depend on CPU contention); latency runs alone.
  const none = Promise.resolve(undefined);
  const [direct, server] = memory ? await Promise.all([wrapRun('direct'), child<ServerMemoryResult>(['--child=server-memory', `--n=${n}`, ...q], base)]) : [];
  const [http, probeRun] = memory ? await Promise.all([wrapRun('http'), child<ProbeResult>(['--child=probe', ...(quick ? [] : ['--probe-wait'])], base)]) : [];
  const [tsxSpawned, profileSpawned] = await Promise.all([
    memory && alsoTsx ? wrapRun('direct', [], { tsx: true, lib: { dir: join(root, 'lib'), ext: '.ts' } }) : none,
    memory && profile ? child<WrapMemoryResult>(['--child=wrap-memory', '--n=2000', '--transport=direct', `--snapshot=${join(profileDir, 'mrtr')}`, ...q], base) : none,
  ]);
  const lat = take(timing ? await child<LatencyResult>(['--child=latency', ...q], base) : undefined);
  const wrapDirect = take(direct);
  const serverAlone = take(server);
  const wrapHttp = take(http);
  const probeResult = take(probeRun);
  const tsxRun = take(tsxSpawned);
  const profileRun = take(profileSpawned);

  // --- Report -----------------------------------------------------------------------------------
  const lines: string[] = [];
  const say = (s = '') => lines.push(s);
  const memoryRows: Array<[string, WrapMemoryResult | undefined]> = [
    ['serveModern (in process)', wrapDirect],
    ['wrap.fetch (Streamable HTTP, in process)', wrapHttp],
    ['serveModern, lib run under the tsx loader', tsxRun],
  ];
  say();
  say(`1. Memory per parked call: ${n.toLocaleString('en-US')} parked at once, one principal and capability set`);
  say(`   ${pad('', 42)}${lpad('total', 10)}${lpad('wrap', 10)}${lpad('beyond', 10)}${lpad('rss', 10)}${lpad('after', 10)}${lpad('park', 9)}${lpad('resume', 9)}  sessions`);
  say(`   ${pad('', 42)}${lpad('', 10)}${lpad('alone', 10)}${lpad('messages', 10)}${lpad('', 10)}${lpad('resume', 10)}${lpad('', 9)}${lpad('', 9)}`);
  const summary: Record<string, unknown> = {};
  for (const [label, w] of memoryRows) {
    if (!w) continue;
    const p = perCall(w, serverAlone);
    summary[`${w.transport}${w.loader === 'tsx' ? '-tsx' : ''}`] = p;
    say(
      `   ${pad(label, 42)}${lpad(kb(p.total), 10)}${lpad(p.wrapAlone === undefined ? '?' : kb(p.wrapAlone), 10)}${lpad(p.beyond === undefined ? '?' : kb(p.beyond), 10)}${lpad(kb(p.rss), 10)}${lpad(kb(p.residue), 10)}${lpad(`${(w.parkMs / 1000).toFixed(1)} s`, 9)}${lpad(`${(w.resumeMs / 1000).toFixed(1)} s`, 9)}  ${w.upstreamSessions}`,
    );
  }
  if (serverAlone) {
    say(`   legacy server alone, per suspended call: ${kb(serverAlone.serverPerSuspended)} (per finished call, left behind: ${kb(serverAlone.serverPerFinished)})`);
    say(`   the messages: pushed request ${serverAlone.pushJsonBytes} B of JSON, ${kb(serverAlone.pushHeapPerCopy)} of heap per parsed copy;`);
    say(`                 original request params ${serverAlone.paramsJsonBytes} B of JSON, ${kb(serverAlone.paramsHeapPerCopy)} of heap per parsed copy`);
  }
  if (wrapDirect) {
    const p = perCall(wrapDirect, serverAlone);
    if (p.beyond !== undefined) say(`   goal: under 4 KB per parked call beyond the messages → ${kb(p.beyond)} (serveModern): ${p.beyond < 4096 ? 'met' : 'NOT met'}`);
    say(`   after resuming all: broker.parked ${wrapDirect.parkedAfterResuming} (was ${wrapDirect.parkedAfterParking}), upstream calls in flight ${wrapDirect.inFlightAfter}, session holds ${wrapDirect.holdsAfter}; heap ${kb(p.residue)} per call above baseline${p.wrapResidue !== undefined ? `, the legacy server alone leaves ${kb(serverAlone!.serverPerFinished)} per finished call → wrap ${p.wrapResidue < 256 ? `≈ 0 (${kb(p.wrapResidue)}, within noise)` : kb(p.wrapResidue)}` : ''}`);
  }
  say('   total: heap per parked call, wrap and in-process legacy server; wrap alone: minus the server alone;');
  say('   beyond messages: minus the original params too (the pushed request is the server\'s own object in process, counted in the server alone).');
  if (probeResult) {
    say();
    say(`   probe, unmodified pushServer (its push names no request), one principal, calls one after another:`);
    say(`   ${probeResult.calls.map((c) => `#${c.call} ${c.outcome} (${c.ms >= 1000 ? `${(c.ms / 1000).toFixed(1)} s` : `${Math.round(c.ms)} ms`})`).join('; ')}`);
    say(`   → ${probeResult.parked} parked on ${probeResult.upstreamSessions} upstream sessions; ${probeResult.resumedOk} of them resumed correctly.`);
  }
  if (lat) {
    say();
    say(`2. Latency, one call at a time (p50 / p99); load average ${load.toFixed(2)} at the start`);
    say(`   ${pad('', 34)}${lpad('n', 6)}${lpad('p50', 10)}${lpad('p99', 10)}${lpad('round/2×echo', 14)}${lpad('round/echo', 12)}   (p50; p99)`);
    for (const c of lat.cells) {
      const where = c.transport === 'http' ? 'wrap.fetch' : 'serveModern';
      say(`   ${pad(`${where}: echo`, 34)}${lpad(String(c.echo.n), 6)}${lpad(us(c.echo.p50Us), 10)}${lpad(us(c.echo.p99Us), 10)}`);
      for (const [label, r] of [
        ['round, collectMs 15 (default)', c.roundDefault],
        ['round, collectMs 0', c.roundCollect0],
      ] as const) {
        const ratio = (a: number, b: number) => (a / b).toFixed(1);
        say(`   ${pad(`${where}: ${label}`, 34)}${lpad(String(r.round.n), 6)}${lpad(us(r.round.p50Us), 10)}${lpad(us(r.round.p99Us), 10)}${lpad(`${ratio(r.round.p50Us, 2 * c.echo.p50Us)}; ${ratio(r.round.p99Us, 2 * c.echo.p99Us)}`, 14)}${lpad(`${ratio(r.round.p50Us, c.echo.p50Us)}; ${ratio(r.round.p99Us, c.echo.p99Us)}`, 12)}`);
        say(`   ${pad('     first call → input_required', 34)}${lpad('', 6)}${lpad(us(r.first.p50Us), 10)}${lpad(us(r.first.p99Us), 10)}`);
        say(`   ${pad('     retry → result', 34)}${lpad('', 6)}${lpad(us(r.retry.p50Us), 10)}${lpad(us(r.retry.p99Us), 10)}`);
      }
    }
    const alone = lat.serverAlone;
    say(`   legacy server alone, bare in-memory client: echo ${us(alone.echo.p50Us)} / ${us(alone.echo.p99Us)}; ask_name with its push answered ${us(alone.round.p50Us)} / ${us(alone.round.p99Us)} (n ${alone.round.n})`);
  }
  let profileTop: Array<{ what: string; bytes: number; count: number }> | undefined;
  if (profileRun?.snapshots) {
    profileTop = snapshotDiff(profileRun.snapshots.baseline, profileRun.snapshots.parked, profileRun.n).slice(0, 40);
    say();
    say(`3. Heap gained per parked call by kind of object (${profileRun.n} parked; snapshots in ${relative(root, profileDir)}/), wrap and in-process server:`);
    for (const row of profileTop.slice(0, 30)) say(`   ${lpad(row.bytes.toFixed(0), 6)} B ${lpad(row.count.toFixed(2), 6)}×  ${row.what.slice(0, 150)}`);
  }
  const wrongTotal = (wrapDirect?.wrong.count ?? 0) + (wrapHttp?.wrong.count ?? 0) + (tsxRun?.wrong.count ?? 0) + (serverAlone?.wrong.count ?? 0) + (lat?.wrong.count ?? 0) + (profileRun?.wrong.count ?? 0);
  say();
  for (const r of [wrapDirect, wrapHttp, tsxRun, serverAlone, lat, profileRun]) for (const w of r?.wrong.first ?? []) say(`   WRONG ${w}`);
  for (const f of failures) say(`   FAILED ${f}`);
  say(`wrong answers: ${wrongTotal}; ${((performance.now() - started) / 1000).toFixed(1)} s in all`);
  console.log(lines.join('\n'));

  let commit: string | undefined;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    commit = undefined;
  }
  const report = {
    date: new Date().toISOString(),
    quick,
    loadAverage: load,
    node: process.version,
    cpus: cpus().length,
    commit,
    lib: libLabel,
    n,
    goalBeyondMessagesBytes: 4096,
    perParkedCall: summary,
    memory: { direct: wrapDirect, http: wrapHttp, tsx: tsxRun, server: serverAlone, profile: profileRun && { ...profileRun, top: profileTop } },
    probe: probeResult,
    latency: lat,
    wrongAnswers: wrongTotal,
    failures,
  };
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, 'mrtr.json');
  writeFileSync(`${file}.tmp`, JSON.stringify(report, null, 2));
  renameSync(`${file}.tmp`, file);
  console.log(`wrote ${relative(root, file)}`);
  process.exit(wrongTotal > 0 || failures.length > 0 ? 1 : 0);
}

await main();
