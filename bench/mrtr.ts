/**
 * `npx tsx bench/mrtr.ts [--quick] [--tsx] [--profile] [--lib=DIR] [--only=memory|latency]`: what MRTR suspend mode
 * (lib/wrap/mrtr/) costs in the wrap, measured against the goal of the issue: under 4 KB of memory
 * per parked call beyond the messages themselves.
 *
 * 1. Memory. N calls (5,000; 500 with --quick) parked at once, in process, one principal and one
 *    capability set: `wrapLegacyServer({ upstream, mrtr: new MrtrBroker({ parkTimeoutMs: 600000 }),
 *    sessions })`, with room in the pool for one upstream session per parked call (a call that
 *    pushes holds a session of its own while parked). Heap after warm-up and gc, the warm-up's
 *    sessions closed (baseline) → park N `ask_name` calls (each answered `input_required`) → gc →
 *    heap → resume all N (each must answer "Hello, <name>!"; the sessions stay open, idle) → gc →
 *    heap. Separately, in a fresh process: the messages themselves (the pushed request and the
 *    original request params: their JSON size and the heap N parsed copies of each take), and the
 *    legacy server alone as the wrap runs it (N servers, each driven by a bare in-memory client,
 *    each with one call suspended on its push, then with that call finished): in process, the
 *    servers share the heap with the wrap.
 *
 *      per parked call = (heap parked − baseline) / N           wrap and in-process servers
 *      wrap alone      = per parked call − server alone (suspended)
 *      session         = (heap resumed − baseline) / N − server alone (finished)
 *      parked call     = wrap alone − session
 *      beyond messages = parked call − original params          (in process the pushed request is
 *                                                                 the server's own object, already
 *                                                                 counted in "server alone")
 *
 *    The server is pushServer's `ask_name` with one change: it passes `relatedRequestId` and a
 *    10-minute timeout to `elicitInput` (the SDK's default of 60 s is shorter than parking N calls).
 * 2. Latency, one call at a time (unmodified pushServer): a plain `echo` and a full `ask_name`
 *    round (first call → `input_required`, retry → result) taken in turn through the same wrap and
 *    the same caller, so the ratio round ÷ echo is measured side by side: through `wrap.serveModern`,
 *    `wrap.fetch` (Streamable HTTP, in process) and Node's HTTP server on loopback (`serveNodeHttp`,
 *    as `serve` runs the wrap), with the default `collectMs` (15 ms: how long the broker waits for
 *    further pushes before answering) and with `collectMs: 0`; and, for scale, the legacy server
 *    alone (a bare in-memory client answering the push itself).
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
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../lib/core/jsonrpc.ts';
import type { ModernContext } from '../lib/wrap/legacyServer/modernDispatch.ts';
import type * as MrtrModule from '../lib/wrap/mrtr/suspend.ts';
import type * as MemoryModule from '../lib/transport/memory.ts';
import type * as NodeHttpModule from '../lib/transport/nodeHttp.ts';
import type * as WrapModule from '../lib/wrap/legacyServer/wrapLegacyServer.ts';
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

export interface Stats {
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
  readonly serveNodeHttp: (typeof NodeHttpModule)['serveNodeHttp'];
}

async function loadLib(dir: string, ext: string): Promise<Lib> {
  const load = (path: string) => import(pathToFileURL(join(dir, `${path}${ext}`)).href);
  const wrap = (await load('wrap/legacyServer/wrapLegacyServer')) as typeof WrapModule;
  const mrtr = (await load('wrap/mrtr/suspend')) as typeof MrtrModule;
  const memory = (await load('transport/memory')) as typeof MemoryModule;
  const nodeHttp = (await load('transport/nodeHttp')) as typeof NodeHttpModule;
  return { wrapLegacyServer: wrap.wrapLegacyServer, MrtrBroker: mrtr.MrtrBroker, createMemoryPair: memory.createMemoryPair, serveNodeHttp: nodeHttp.serveNodeHttp };
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
  /** After warm-up, with the warm-up's upstream sessions closed again. */
  readonly baseline: Usage;
  /** N calls parked, each on an upstream session of its own. */
  readonly parked: Usage;
  /** Every call resumed and answered; its upstream session still open, idle. */
  readonly resumed: Usage;
  readonly parkMs: number;
  readonly resumeMs: number;
  readonly upstreamSessions: number;
  readonly upstreamSessionsAfterResuming: number;
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
  // A call that pushes holds an upstream session of its own while it is parked: room for all of
  // them, and none closed for idleness before the heap is read after resuming.
  const room = o.n + 1000;
  const wrap = lib.wrapLegacyServer({ upstream: () => createRelatedPushServer(), mrtr: broker, sessions: { max: room, perKey: room, idleMs: PARK_TIMEOUT_MS } });
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
  const idle = () => wrap.pool.sessions().every(({ session }) => session.inFlight === 0 && session.holds === 0);
  const untilIdle = async () => {
    for (let i = 0; i < 100 && !idle(); i++) await sleep(10);
  };

  // Warm-up: every code path hot (the broker learns that ask_name pushes); then its sessions are
  // closed, so the measured calls open theirs from the baseline on.
  const warm = o.quick ? { rounds: 2, calls: 100 } : { rounds: 3, calls: 200 };
  for (let round = 0; round < warm.rounds; round++) {
    const states: string[] = new Array(warm.calls);
    await park(warm.calls, 1_000_000 + round * 1000, states);
    await resume(states, 2_000_000 + round * 1000);
  }
  await untilIdle();
  await Promise.all(wrap.pool.sessions().map(({ session }) => session.close()));
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
  await untilIdle();
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
    upstreamSessionsAfterResuming: sessions.length,
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

/** A bare legacy client on an in-memory pipe to one server: no SDK, no wrap. */
interface BareClient {
  /** Sends a request and resolves with its answer. */
  request(method: string, params: Json): Promise<Json>;
  /** Answers a request the server pushed. */
  answer(pushId: number, result: Json): void;
  /** Called with each pushed `elicitation/create`. */
  onPush: ((push: Json) => void) | undefined;
}

/** Connects `server` to a bare client and initializes the session (elicitation declared). */
async function bareClient(lib: Lib, server: McpServer): Promise<BareClient> {
  const [client, serverSide] = lib.createMemoryPair();
  await server.connect(serverSide as never);
  const waiting = new Map<number, (message: Json) => void>();
  let id = 0;
  const bare: BareClient = {
    request: (method, params) =>
      new Promise<Json>((resolve) => {
        const n = ++id;
        waiting.set(n, resolve);
        void client.send({ jsonrpc: '2.0', id: n, method, params });
      }),
    answer: (pushId, result) => void client.send({ jsonrpc: '2.0', id: pushId, result }),
    onPush: undefined,
  };
  client.onmessage = (message) => {
    const m = message as Json;
    if (m['method'] === 'elicitation/create') bare.onPush?.(m);
    else if (typeof m['id'] === 'number') {
      waiting.get(m['id'])?.(m);
      waiting.delete(m['id']);
    }
  };
  await client.start();
  await bare.request('initialize', { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'mrtr-bench', version: '1.0.0' } });
  await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return bare;
}

/** The text of the first content block of a `tools/call` answer. */
const textOf = (m: Json) => ((m['result'] as Json | undefined)?.['content'] as Array<{ text?: unknown }> | undefined)?.[0]?.text;

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
  /**
   * The server alone, as the wrap runs it (one server per upstream session, one call each): heap
   * per server with its `ask_name` call suspended on the push, and per server once that call finished.
   */
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
  let samplePush: Json | undefined;
  /** One server and client, its ask_name call suspended on the push: resolves with a function that answers it. */
  const suspend = async (): Promise<() => Promise<void>> => {
    const client = await bareClient(lib, createRelatedPushServer());
    const pushed = new Promise<Json>((resolve) => (client.onPush = resolve));
    const answer = client.request('tools/call', { name: 'ask_name', arguments: {} });
    const push = await pushed;
    samplePush ??= push;
    return async () => {
      client.answer(push['id'] as number, { action: 'accept', content: { name: 'x' } });
      const m = await answer;
      if (textOf(m) !== 'Hello, x!') wrong.add(`server alone: ${JSON.stringify(m).slice(0, 160)}`);
    };
  };
  const limit = 64;
  const suspendAll = async (count: number, into: Array<() => Promise<void>>) => forEachLimit(count, limit, async (i) => void (into[i] = await suspend()));
  const finishAll = async (from: Array<() => Promise<void>>) => forEachLimit(from.length, limit, (i) => from[i]!());

  for (let r = 0; r < (o.quick ? 2 : 3); r++) {
    const warm: Array<() => Promise<void>> = new Array(o.quick ? 100 : 200);
    await suspendAll(warm.length, warm);
    await finishAll(warm);
  }
  const pushJson = JSON.stringify(samplePush);
  const paramsJson = askParamsText;
  // At least 10,000 copies: the heap moves by a few hundred KB between collections anyway.
  const copies = Math.max(o.n, 10_000);
  const pushHeapPerCopy = await heapPerCopy(copies, (i) => JSON.parse(pushJson.replace(/"id":\d+/, `"id":${i}`)));
  const paramsHeapPerCopy = await heapPerCopy(copies, () => JSON.parse(paramsJson));

  const finishers: Array<() => Promise<void>> = new Array(o.n);
  const h0 = (await settle()).heapUsed;
  await suspendAll(o.n, finishers);
  const h1 = (await settle()).heapUsed;
  await finishAll(finishers);
  const h2 = (await settle()).heapUsed;
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

export interface RoundStats {
  readonly first: Stats;
  readonly retry: Stats;
  readonly round: Stats;
}

/** Where the calls enter the wrap: `serveModern` (no transport), `wrap.fetch` (Web), or Node's HTTP server on loopback (as `serve` runs it). */
type LatencyTransport = 'direct' | 'http' | 'node-http';

/**
 * One wrap, one caller: plain `echo` calls and full `ask_name` rounds taken in turn (echo then
 * round, round then echo), so both see the same machine and the same warm wrap.
 */
export interface LatencyCell {
  readonly transport: LatencyTransport;
  /** The broker's `collectMs` (15 is the default). */
  readonly collectMs: number;
  readonly echo: Stats;
  readonly rounds: RoundStats;
  /** round ÷ echo, at p50 and at p99. */
  readonly ratioP50: number;
  readonly ratioP99: number;
  /** Median over the pairs of round ÷ the echo taken next to it. */
  readonly pairedRatio: number;
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
  const client = await bareClient(lib, createPushServer());
  let id = 0;
  const echo = async (count: number) => {
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const n = ++id;
      const t = performance.now();
      const m = await client.request('tools/call', { name: 'echo', arguments: { text: `e${n}` } });
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
      const pushed = new Promise<Json>((resolve) => (client.onPush = resolve));
      const answer = client.request('tools/call', { name: 'ask_name', arguments: {} });
      const push = await pushed;
      client.answer(push['id'] as number, { action: 'accept', content: { name: `s${n}` } });
      const m = await answer;
      samples.push(performance.now() - t);
      if (textOf(m) !== `Hello, s${n}!`) wrong.add(`server alone ask ${n}: ${JSON.stringify(m).slice(0, 160)}`);
    }
    return samples;
  };
  await echo(counts.warm);
  await round(counts.warm);
  return { echo: stats(await echo(counts.n)), round: stats(await round(counts.n)) };
}

/** A caller over Node's HTTP server on loopback (`serveNodeHttp`, as `serve` runs the wrap), one keep-alive socket. */
async function nodeHttpCaller(lib: Lib, wrap: Wrap): Promise<{ call: Caller; close(): Promise<void> }> {
  const running = await lib.serveNodeHttp(wrap, { port: 0 });
  const { hostname, port } = new URL(running.origin);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call: Caller = (text, name) =>
    new Promise((resolve, reject) => {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': Buffer.byteLength(text),
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': name,
      };
      const req = httpRequest({ agent, hostname, port, path: '/mcp', method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          try {
            if (!String(res.headers['content-type']).includes('text/event-stream')) return resolve(JSON.parse(body) as JsonRpcResponse);
            // An SSE answer: the last data line is the response.
            const data = body.split('\n').filter((l) => l.startsWith('data:')).pop();
            resolve(data ? (JSON.parse(data.slice(5)) as JsonRpcResponse) : undefined);
          } catch {
            resolve(undefined);
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(text);
    });
  return {
    call,
    async close() {
      agent.destroy();
      await running.close();
    },
  };
}

async function latency(lib: Lib, o: ChildOptions): Promise<LatencyResult> {
  const wrong = new Wrong();
  const cells: LatencyCell[] = [];
  // Pairs (an echo and a round) per cell. A default round waits collectMs (15 ms) for further pushes: fewer pairs keep the run short.
  const fast = o.quick ? { warm: 100, n: 300 } : { warm: 500, n: 2000 };
  const slow = o.quick ? { warm: 10, n: 60 } : { warm: 30, n: 300 };
  let id = 0;
  for (const transport of ['direct', 'http', 'node-http'] as const) {
    for (const collectMs of [0, 15]) {
      const wrap = lib.wrapLegacyServer({ upstream: () => createPushServer(), mrtr: new lib.MrtrBroker({ parkTimeoutMs: PARK_TIMEOUT_MS, collectMs }) });
      const node = transport === 'node-http' ? await nodeHttpCaller(lib, wrap) : undefined;
      const call = node?.call ?? (transport === 'http' ? httpCaller(wrap) : directCaller(wrap));
      const echo = async (): Promise<number | undefined> => {
        const n = ++id;
        const t = performance.now();
        const answer = await call(echoText(n, `e${n}`), 'echo');
        const ms = performance.now() - t;
        const problem = checkText(answer, n, `e${n}`);
        if (!problem) return ms;
        wrong.add(`${transport} echo ${n}: ${problem}`);
        return undefined;
      };
      const round = async (): Promise<{ first: number; retry: number } | undefined> => {
        const n = ++id;
        const t0 = performance.now();
        const got = stateOf(await call(askText(n), 'ask_name'), n);
        const t1 = performance.now();
        if ('wrong' in got) {
          wrong.add(`${transport} ask ${n}: ${got.wrong}`);
          return undefined;
        }
        const r = ++id;
        const answer = await call(retryText(r, got.state, `v${n}`), 'ask_name');
        const t2 = performance.now();
        const problem = checkText(answer, r, `Hello, v${n}!`);
        if (!problem) return { first: t1 - t0, retry: t2 - t1 };
        wrong.add(`${transport} retry ${r}: ${problem}`);
        return undefined;
      };
      const counts = collectMs === 0 ? fast : slow;
      const echoes: number[] = [];
      const first: number[] = [];
      const retry: number[] = [];
      const rounds: number[] = [];
      const pairs: number[] = [];
      for (let i = 0; i < counts.warm + counts.n; i++) {
        // Alternate which goes first, so neither always follows the other.
        let e: number | undefined;
        let r: { first: number; retry: number } | undefined;
        if (i % 2 === 0) {
          e = await echo();
          r = await round();
        } else {
          r = await round();
          e = await echo();
        }
        if (i < counts.warm || e === undefined || r === undefined) continue;
        echoes.push(e);
        first.push(r.first);
        retry.push(r.retry);
        rounds.push(r.first + r.retry);
        pairs.push((r.first + r.retry) / e);
      }
      const echoStats = stats(echoes);
      const roundStats = { first: stats(first), retry: stats(retry), round: stats(rounds) };
      const pairsSorted = [...pairs].sort((a, b) => a - b);
      cells.push({
        transport,
        collectMs,
        echo: echoStats,
        rounds: roundStats,
        ratioP50: roundStats.round.p50Us / echoStats.p50Us,
        ratioP99: roundStats.round.p99Us / echoStats.p99Us,
        pairedRatio: percentile(pairsSorted, 50),
      });
      await node?.close();
      await wrap.close();
    }
  }
  const serverAlone = await serverAloneLatency(lib, fast, wrong);
  return { kind: 'latency', cells, serverAlone, wrong };
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
    ...(snapshotPrefix ? { snapshotPrefix } : {}),
  };
  const lib = await loadLib(o.libDir, o.ext);
  const run = { 'wrap-memory': wrapMemory, 'server-memory': serverMemory, latency }[o.child];
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

/**
 * What one parked-call memory run says per call, with the server alone and the messages. A parked
 * call holds an upstream session of its own; the sessions stay open, idle, after resuming, which
 * tells the session's share from the parked call's.
 */
function perCall(w: WrapMemoryResult, s: ServerMemoryResult | undefined) {
  const total = (w.parked.heapUsed - w.baseline.heapUsed) / w.n;
  const rss = (w.parked.rss - w.baseline.rss) / w.n;
  const idle = (w.resumed.heapUsed - w.baseline.heapUsed) / w.n;
  if (!s) return { total, rss, idle };
  const wrapAlone = total - s.serverPerSuspended;
  const session = idle - s.serverPerFinished;
  const call = wrapAlone - session;
  return { total, rss, idle, wrapAlone, session, call, beyond: call - s.paramsHeapPerCopy, beyondWithSession: wrapAlone - s.paramsHeapPerCopy };
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
  const n = quick ? 500 : 5_000;
  // Generous: on a shared 2-core machine a child can take several times its quiet-machine time.
  const timeoutMs = quick ? 240_000 : 900_000;
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
  const [http, tsxSpawned] = await Promise.all([memory ? wrapRun('http') : none, memory && alsoTsx ? wrapRun('direct', [], { tsx: true, lib: { dir: join(root, 'lib'), ext: '.ts' } }) : none]);
  const profileSpawned = memory && profile ? await child<WrapMemoryResult>(['--child=wrap-memory', '--n=2000', '--transport=direct', `--snapshot=${join(profileDir, 'mrtr')}`, ...q], base) : undefined;
  const lat = take(timing ? await child<LatencyResult>(['--child=latency', ...q], base) : undefined);
  const wrapDirect = take(direct);
  const serverAlone = take(server);
  const wrapHttp = take(http);
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
  say(`1. Memory per parked call: ${n.toLocaleString('en-US')} parked at once, one principal and capability set, each on an upstream session of its own`);
  say(`   ${pad('', 42)}${lpad('total', 10)}${lpad('wrap', 10)}${lpad('of which', 10)}${lpad('parked', 10)}${lpad('beyond', 10)}${lpad('rss', 10)}${lpad('park', 9)}${lpad('resume', 9)}  sessions`);
  say(`   ${pad('', 42)}${lpad('', 10)}${lpad('alone', 10)}${lpad('session', 10)}${lpad('call', 10)}${lpad('messages', 10)}${lpad('', 10)}${lpad('', 9)}${lpad('', 9)}`);
  const summary: Record<string, unknown> = {};
  const maybe = (v: number | undefined) => (v === undefined ? '?' : kb(v));
  for (const [label, w] of memoryRows) {
    if (!w) continue;
    const p = perCall(w, serverAlone);
    summary[`${w.transport}${w.loader === 'tsx' ? '-tsx' : ''}`] = p;
    say(
      `   ${pad(label, 42)}${lpad(kb(p.total), 10)}${lpad(maybe(p.wrapAlone), 10)}${lpad(maybe(p.session), 10)}${lpad(maybe(p.call), 10)}${lpad(maybe(p.beyond), 10)}${lpad(kb(p.rss), 10)}${lpad(`${(w.parkMs / 1000).toFixed(1)} s`, 9)}${lpad(`${(w.resumeMs / 1000).toFixed(1)} s`, 9)}  ${w.upstreamSessions}`,
    );
  }
  if (serverAlone) {
    say(`   legacy server alone, one per session: ${kb(serverAlone.serverPerSuspended)} with its call suspended, ${kb(serverAlone.serverPerFinished)} once the call finished`);
    say(`   the messages: pushed request ${serverAlone.pushJsonBytes} B of JSON, ${kb(serverAlone.pushHeapPerCopy)} of heap per parsed copy;`);
    say(`                 original request params ${serverAlone.paramsJsonBytes} B of JSON, ${kb(serverAlone.paramsHeapPerCopy)} of heap per parsed copy`);
  }
  if (wrapDirect) {
    const p = perCall(wrapDirect, serverAlone);
    if (p.beyond !== undefined) say(`   goal: under 4 KB per parked call beyond the messages → ${kb(p.beyond)} (serveModern), and ${maybe(p.session)} more for the upstream session it holds: ${p.beyond < 4096 ? 'met' : 'NOT met'}`);
    say(`   after resuming all: broker.parked ${wrapDirect.parkedAfterResuming} (was ${wrapDirect.parkedAfterParking}), upstream calls in flight ${wrapDirect.inFlightAfter}, session holds ${wrapDirect.holdsAfter}, sessions open (idle) ${wrapDirect.upstreamSessionsAfterResuming}`);
  }
  say('   total: heap per parked call, wrap and in-process legacy servers; wrap alone: minus the server alone; of which session: what the wrap keeps');
  say('   per upstream session beyond a bare client of the server, read once the calls resumed (sessions idle, minus the idle servers);');
  say('   parked call: wrap alone minus its session;');
  say('   beyond messages: minus the original params too (the pushed request is the server\'s own object in process, counted in the server alone).');
  if (lat) {
    say();
    say(`2. Latency, one call at a time: a plain echo and a full round (first call → input_required, retry → result) in turn, through the same wrap (p50 / p99)`);
    say(`   ${pad('', 44)}${lpad('pairs', 6)}${lpad('echo p50', 10)}${lpad('p99', 10)}${lpad('round p50', 11)}${lpad('p99', 10)}${lpad('round ÷ echo', 14)}${lpad('p99', 8)}${lpad('paired', 8)}`);
    const where = { direct: 'serveModern', http: 'wrap.fetch', 'node-http': 'Node HTTP (serve)' } as const;
    for (const c of lat.cells) {
      const x = (v: number) => `${v.toFixed(1)}×`;
      say(
        `   ${pad(`${where[c.transport]}, collectMs ${c.collectMs}${c.collectMs === 15 ? ' (default)' : ''}`, 44)}${lpad(String(c.rounds.round.n), 6)}${lpad(us(c.echo.p50Us), 10)}${lpad(us(c.echo.p99Us), 10)}${lpad(us(c.rounds.round.p50Us), 11)}${lpad(us(c.rounds.round.p99Us), 10)}${lpad(x(c.ratioP50), 14)}${lpad(x(c.ratioP99), 8)}${lpad(x(c.pairedRatio), 8)}`,
      );
      say(`   ${pad('     first call → input_required; retry → result', 44)}${lpad('', 6)}${lpad('', 20)}${lpad(us(c.rounds.first.p50Us), 11)}${lpad(us(c.rounds.retry.p50Us), 10)}`);
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
