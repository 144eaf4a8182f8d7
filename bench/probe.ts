/**
 * `npm run bench:probe [-- --quick]` (also run by `npm run bench`): what `probe` costs against a
 * legacy server, as a ratio to what a legacy client pays to connect to that server anyway, each
 * measured side by side in the same rounds (the order rotating every round):
 *
 *   - stdio, the v1 echo server (bench/servers/echoServer.ts) as a child process. Baseline: the v1
 *     SDK `Client` connecting over `StdioClientTransport` (spawn + `initialize` +
 *     `notifications/initialized`). Against it: a fresh probe (spawn + `server/discover` → legacy,
 *     the process kept, as `wrapModernClient` keeps it), and that probe followed by `initialize` +
 *     `notifications/initialized` on the probed process (all a wrapped client pays before its first call);
 *   - Streamable HTTP, server-everything's own sessionful server. Baseline: the `initialize` POST
 *     and its answer. Against it: a fresh probe (`server/discover` POST → legacy `initialize` POST
 *     → DELETE of that session);
 *   - HTTP+SSE, server-everything's 2024-11-05 server. Baseline: GET /sse, the endpoint event,
 *     the `initialize` POST and its answer on the stream. Against it: a fresh probe
 *     (`server/discover` → Streamable HTTP `initialize` refused → the same as the baseline);
 *
 * and, for each, a probe answered from the verdict cache. Fresh = `cache: false`; cached = a
 * `VerdictCache` holding the verdict. Every verdict and every answer is checked; the exit status is
 * non-zero only for a wrong one. Timings are reported, never asserted. Writes bench/results/probe.json.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_LEGACY_VERSION } from '../lib/core/era.ts';
import type { JsonRpcMessage } from '../lib/core/jsonrpc.ts';
import { probe, VerdictCache, type ProbeResult, type ProbeTarget } from '../lib/client.ts';
import { mediaType, readSse } from '../lib/transport/sse.ts';
import type { StdioChildTransport } from '../lib/transport/stdioChild.ts';
import { startEverythingHttp } from '../spec/helpers/everything.ts';
import { latencyStats as statsOf, type LatencyStats as Stats } from './measure.ts';
import { writeResults } from './resultsFile.ts';
import { buildEchoServer } from './wrap/build.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const unknown = args.filter((a) => a !== '--quick');
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run bench:probe -- [--quick]`);
  process.exit(2);
}

/** Rounds per target (each runs every timed operation once), unmeasured warm-up rounds, cached probes per round. */
const plan = quick ? { stdioRounds: 6, httpRounds: 30, warmRounds: 2, cachedPerRound: 50 } : { stdioRounds: 60, httpRounds: 300, warmRounds: 5, cachedPerRound: 100 };
/** A single operation that takes longer than this is a failure (a hang), not a sample. */
const OP_TIMEOUT_MS = 30_000;

const root = join(import.meta.dirname, '..');
const CLIENT_INFO = { name: 'probe-bench', version: '1.0.0' };

/** A wrong answer or verdict: a bug, reported, never a sample. */
class Wrong extends Error {}

const now = () => performance.now();

function initializeRequest(id: string): JsonRpcMessage {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: LATEST_LEGACY_VERSION, capabilities: {}, clientInfo: CLIENT_INFO } };
}

/** `undefined` when `answer` is an `initialize` result, else what is wrong with it. */
function initializeProblem(answer: unknown): string | undefined {
  const result = (answer as { result?: { protocolVersion?: unknown; serverInfo?: { name?: unknown } } } | undefined)?.result;
  if (!result) return `not an initialize result: ${JSON.stringify(answer)?.slice(0, 200)}`;
  if (typeof result.protocolVersion !== 'string' || typeof result.serverInfo?.name !== 'string') return `initialize result without protocolVersion or serverInfo: ${JSON.stringify(result).slice(0, 200)}`;
  return undefined;
}

function expectVerdict(r: ProbeResult, source: ProbeResult['source'], http: 'streamable' | 'sse' | undefined): void {
  const v = r.verdict;
  if (v.era !== 'legacy' || r.source !== source || (http !== undefined && v.http !== http)) {
    throw new Wrong(`verdict ${JSON.stringify(v)} from ${r.source}; expected legacy${http ? ` (${http})` : ''} from ${source}`);
  }
}

/** Resolves once no process has `pid` (the SDK's stdio close does not wait for the exit). */
async function gone(pid: number | null | undefined): Promise<void> {
  if (!pid) return;
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends `message` on a probed stdio process and resolves with the answer of the same id. */
function ask(proc: StdioChildTransport, id: string, message: JsonRpcMessage): Promise<JsonRpcMessage> {
  return new Promise((resolve, reject) => {
    proc.onmessage = (m) => {
      if ('id' in m && m.id === id && !('method' in m)) resolve(m);
    };
    proc.onclose = () => reject(new Wrong('the probed process exited before answering initialize'));
    proc.send(message).catch(reject);
  });
}

/** An SSE event's data as JSON; `undefined` for an empty event (one that primes the stream for resumption) or one that is not JSON. */
function jsonOf(data: string): unknown {
  if (data.trim() === '') return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The first JSON-RPC answer with `id` in a POST's body (JSON or SSE). */
async function answerOf(res: Response, id: string): Promise<unknown> {
  if (mediaType(res) !== 'text/event-stream' || !res.body) return res.json();
  let found: unknown;
  await readSse(res.body, {
    onEvent: (e) => {
      const m = jsonOf(e.data) as { id?: unknown } | undefined;
      if (m?.id === id) found ??= m;
    },
    done: () => found !== undefined,
  });
  return found;
}

// ---------------------------------------------------------------------------------------------

/** One timed operation: resolves with the milliseconds of its timed part (clean-up comes after, untimed). */
interface Op {
  readonly key: string;
  readonly label: string;
  run(): Promise<number>;
}

export interface Suite {
  readonly key: 'stdio' | 'streamable' | 'sse';
  readonly label: string;
  readonly server: string;
  readonly rounds: number;
  readonly baseline: Op;
  readonly candidates: readonly Op[];
  readonly target: ProbeTarget;
  readonly http: 'streamable' | 'sse' | undefined;
  close(): Promise<void>;
}

let seq = 0;
const nextId = () => `probe-bench-${++seq}`;

function stdioSuite(echo: string): Suite {
  const target = { command: process.execPath, args: [echo], cwd: root, stderr: 'inherit' as const };
  return {
    key: 'stdio',
    label: 'stdio',
    server: 'bench/servers/echoServer.ts (v1 SDK McpServer), a child process per connection',
    rounds: plan.stdioRounds,
    target,
    http: undefined,
    baseline: {
      key: 'connect',
      label: 'legacy client connects (v1 SDK Client: spawn + initialize + initialized)',
      async run() {
        const transport = new StdioClientTransport({ command: target.command, args: target.args, cwd: root, stderr: 'inherit' });
        const client = new Client(CLIENT_INFO, { capabilities: {} });
        const t0 = now();
        await client.connect(transport);
        const ms = now() - t0;
        const name = client.getServerVersion()?.name;
        const pid = transport.pid;
        await client.close();
        await gone(pid);
        if (name !== 'bench-echo') throw new Wrong(`the SDK client connected to ${JSON.stringify(name)}`);
        return ms;
      },
    },
    candidates: [
      {
        key: 'probe',
        label: 'probe, fresh (spawn + server/discover → legacy, process kept)',
        async run() {
          const t0 = now();
          const r = await probe(target, { cache: false, keepProcess: true });
          const ms = now() - t0;
          await r.process?.close();
          expectVerdict(r, 'probe', undefined);
          if (!r.process) throw new Wrong('the probe did not hand the process over');
          if (r.roundTrips !== 1) throw new Wrong(`${r.roundTrips} round trips on stdio`);
          return ms;
        },
      },
      {
        key: 'probe+connect',
        label: 'probe, fresh, then initialize + initialized on the probed process',
        async run() {
          const t0 = now();
          const r = await probe(target, { cache: false, keepProcess: true });
          const proc = r.process;
          if (!proc) throw new Wrong('the probe did not hand the process over');
          try {
            const id = nextId();
            const answer = await ask(proc, id, initializeRequest(id));
            await proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
            const ms = now() - t0;
            expectVerdict(r, 'probe', undefined);
            const problem = initializeProblem(answer);
            if (problem) throw new Wrong(problem);
            return ms;
          } finally {
            await proc.close();
          }
        },
      },
    ],
    close: async () => {},
  };
}

/** A fresh probe of an HTTP endpoint, which must find the legacy transport `http`. */
function freshHttpProbe(url: URL, http: 'streamable' | 'sse', label: string): Op {
  return {
    key: 'probe',
    label,
    async run() {
      const t0 = now();
      const r = await probe({ url }, { cache: false });
      const ms = now() - t0;
      expectVerdict(r, 'probe', http);
      return ms;
    },
  };
}

async function streamableSuite(): Promise<Suite> {
  const server = await startEverythingHttp('streamableHttp');
  const url = server.url;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  return {
    key: 'streamable',
    label: 'Streamable HTTP',
    server: `server-everything streamableHttp (sessionful, ${url.pathname}), its own process`,
    rounds: plan.httpRounds,
    target: { url },
    http: 'streamable',
    baseline: {
      key: 'connect',
      label: 'legacy client connects (the initialize POST and its answer)',
      async run() {
        const id = nextId();
        const t0 = now();
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initializeRequest(id)) });
        const answer = await answerOf(res, id);
        const ms = now() - t0;
        const session = res.headers.get('mcp-session-id');
        if (session) await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session, 'mcp-protocol-version': LATEST_LEGACY_VERSION } }).then((r) => r.body?.cancel());
        const problem = initializeProblem(answer) ?? (session ? undefined : 'no Mcp-Session-Id on the initialize answer');
        if (problem) throw new Wrong(problem);
        return ms;
      },
    },
    candidates: [
      freshHttpProbe(url, 'streamable', 'probe, fresh (server/discover POST → legacy initialize POST → DELETE)'),
    ],
    close: () => server.close(),
  };
}

async function sseSuite(): Promise<Suite> {
  const server = await startEverythingHttp('sse');
  const url = server.url;
  return {
    key: 'sse',
    label: 'HTTP+SSE',
    server: `server-everything sse (2024-11-05 HTTP+SSE, ${url.pathname}), its own process`,
    rounds: plan.httpRounds,
    target: { url },
    http: 'sse',
    baseline: {
      key: 'connect',
      label: 'legacy client connects (GET /sse, endpoint event, initialize POST, answer on the stream)',
      async run() {
        const id = nextId();
        const stream = new AbortController();
        let onEndpoint!: (path: string) => void;
        let onAnswer!: (message: unknown) => void;
        const endpoint = new Promise<string>((r) => (onEndpoint = r));
        const answered = new Promise<unknown>((r) => (onAnswer = r));
        const t0 = now();
        const res = await fetch(url, { headers: { accept: 'text/event-stream' }, signal: stream.signal });
        if (!res.ok || !res.body) throw new Wrong(`GET ${url.pathname} answered HTTP ${res.status}`);
        const reading = readSse(res.body, {
          onEvent: (e) => {
            if (e.event === 'endpoint') return onEndpoint(e.data);
            const message = jsonOf(e.data) as { id?: unknown } | undefined;
            if (message?.id === id) onAnswer(message);
          },
        }).catch(() => {});
        const post = await fetch(new URL(await endpoint, url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(initializeRequest(id)) });
        await post.body?.cancel();
        const answer = await answered;
        const ms = now() - t0;
        stream.abort();
        await reading;
        const problem = initializeProblem(answer);
        if (problem) throw new Wrong(problem);
        return ms;
      },
    },
    candidates: [
      freshHttpProbe(url, 'sse', 'probe, fresh (server/discover → Streamable HTTP initialize refused → GET /sse + initialize POST)'),
    ],
    close: () => server.close(),
  };
}

// ---------------------------------------------------------------------------------------------

export type { LatencyStats as Stats } from './measure.ts';

export interface Row {
  readonly key: string;
  readonly label: string;
  readonly stats: Stats;
  /** p50 ÷ the baseline's p50, and likewise p99. */
  readonly ratioP50: number;
  readonly ratioP99: number;
  /** Median over the rounds of (this round's time ÷ the baseline's time in the same round; cached: its median). */
  readonly pairedRatio: number;
}

export interface TargetResult {
  readonly key: Suite['key'];
  readonly label: string;
  readonly server: string;
  readonly rounds: number;
  readonly rows: Row[];
  readonly errors: number;
  readonly errorSamples: string[];
}

function withTimeout<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no result within ${OP_TIMEOUT_MS} ms`)), OP_TIMEOUT_MS)))]).finally(() => clearTimeout(timer));
}

async function runSuite(suite: Suite): Promise<TargetResult> {
  const ops = [suite.baseline, ...suite.candidates];
  const samples = new Map<string, number[]>(ops.map((o) => [o.key, []]));
  const cachedSamples: number[] = [];
  /** Per measured round: each op's time (NaN when it failed), and the median cached probe. */
  const perRound: Array<Map<string, number>> = [];
  const errorSamples: string[] = [];
  let errors = 0;
  const fail = (what: string, e: unknown) => {
    errors++;
    if (errorSamples.length < 5) errorSamples.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  };

  const cache = new VerdictCache();
  try {
    expectVerdict(await withTimeout('filling the verdict cache', probe(suite.target, { cache })), 'probe', suite.http);
  } catch (e) {
    fail('filling the verdict cache', e);
  }

  const total = plan.warmRounds + suite.rounds;
  for (let round = 0; round < total; round++) {
    const measured = round >= plan.warmRounds;
    const shift = round % ops.length;
    const order = [...ops.slice(shift), ...ops.slice(0, shift)];
    const times = new Map<string, number>();
    for (const op of order) {
      try {
        const ms = await withTimeout(op.label, op.run());
        times.set(op.key, ms);
        if (measured) samples.get(op.key)!.push(ms);
      } catch (e) {
        times.set(op.key, NaN);
        fail(op.label, e);
      }
    }
    const cachedRound: number[] = [];
    for (let i = 0; i < plan.cachedPerRound; i++) {
      try {
        const t0 = now();
        const r = await probe(suite.target, { cache });
        const ms = now() - t0;
        expectVerdict(r, 'cache', suite.http);
        cachedRound.push(ms);
      } catch (e) {
        fail('cached probe', e);
      }
    }
    if (measured) {
      for (const ms of cachedRound) cachedSamples.push(ms);
      times.set('cached', statsOf(cachedRound).p50Ms);
      perRound.push(times);
    }
    if ((round + 1) % Math.ceil(total / 5) === 0) process.stderr.write(`  ${suite.label}: ${round + 1} of ${total} rounds\n`);
  }

  const base = statsOf(samples.get(suite.baseline.key)!);
  const median = (values: number[]) => statsOf(values.filter((v) => Number.isFinite(v))).p50Ms;
  const paired = (key: string) => median(perRound.map((t) => t.get(key)! / t.get(suite.baseline.key)!));
  const row = (key: string, label: string, stats: Stats): Row => ({ key, label, stats, ratioP50: stats.p50Ms / base.p50Ms, ratioP99: stats.p99Ms / base.p99Ms, pairedRatio: key === suite.baseline.key ? 1 : paired(key) });
  const rows: Row[] = [
    row(suite.baseline.key, suite.baseline.label, base),
    ...suite.candidates.map((c) => row(c.key, c.label, statsOf(samples.get(c.key)!))),
    row('cached', 'probe, cached (verdict cache hit: no process, no request)', statsOf(cachedSamples)),
  ];
  return { key: suite.key, label: suite.label, server: suite.server, rounds: suite.rounds, rows, errors, errorSamples };
}

// ---------------------------------------------------------------------------------------------

const ms = (x: number) => (!Number.isFinite(x) ? '-' : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x >= 0.01 ? x.toFixed(3) : x.toExponential(1));
const ratio = (x: number) => (!Number.isFinite(x) ? '-' : x >= 0.01 ? `${x.toFixed(2)}×` : `${x.toExponential(1)}×`);

function printTable(results: readonly TargetResult[]): void {
  const head = ['target', 'operation', 'n', 'p50 ms', 'p99 ms', '÷ connect p50', 'p99', 'paired'];
  const body = results.flatMap((t) => t.rows.map((r) => [t.label, r.label, String(r.stats.n), ms(r.stats.p50Ms), ms(r.stats.p99Ms), ratio(r.ratioP50), ratio(r.ratioP99), ratio(r.pairedRatio)]));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  let last = '';
  for (const b of body) {
    if (last && b[0] !== last) console.log('');
    last = b[0]!;
    console.log(line(b));
  }
}

const cpuList = cpus();
console.log(`mcp-dual-era probe bench — node ${process.version}, ${process.platform}/${process.arch}, ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown CPU'}`);
console.log(
  `${quick ? 'quick: ' : ''}${plan.stdioRounds} rounds on stdio and ${plan.httpRounds} over HTTP after ${plan.warmRounds} unmeasured, each running the baseline and every fresh probe once ` +
    `(the order rotating), then ${plan.cachedPerRound} cached probes; lib/ through the tsx loader; the servers run as their own processes on this machine`,
);
console.log('');

const startedAt = Date.now();
const failures: string[] = [];
const results: TargetResult[] = [];
const makers: Array<[string, () => Promise<Suite>]> = [
  ['stdio', async () => stdioSuite(buildEchoServer())],
  ['Streamable HTTP', streamableSuite],
  ['HTTP+SSE', sseSuite],
];
for (const [label, make] of makers) {
  let suite: Suite;
  try {
    suite = await make();
  } catch (e) {
    const message = `${label}: the server did not start: ${e instanceof Error ? e.message : String(e)}`;
    console.error(`FAIL ${message}`);
    failures.push(message);
    continue;
  }
  process.stderr.write(`  ${label}: ${plan.warmRounds + suite.rounds} rounds…\n`);
  try {
    const result = await runSuite(suite);
    results.push(result);
    if (result.errors > 0) {
      const message = `${label}: ${result.errors} wrong answer(s) or verdict(s): ${result.errorSamples.join(' | ')}`;
      console.error(`FAIL ${message}`);
      failures.push(message);
    }
  } finally {
    await suite.close();
  }
}

printTable(results);
const elapsedS = (Date.now() - startedAt) / 1000;
console.log('');
console.log(`(${elapsedS.toFixed(1)} s; ÷ connect = this operation's p50 (p99) over the baseline's, measured in the same rounds; paired = median over the rounds of the per-round ratio)`);

const report = {
  generatedAt: new Date().toISOString(),
  environment: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpuList.length, cpuModel: cpuList[0]?.model.trim() ?? null },
  options: { ...plan, quick },
  lib: 'lib/ of the working tree through the tsx loader (the probe is dominated by processes and round trips, not by its own code)',
  targets: results,
  failures,
  elapsedSeconds: elapsedS,
};
writeResults('probe.json', report);
if (failures.length > 0) {
  console.error('wrong answers or verdicts (or a server that could not start): that is a bug, not a timing');
  process.exitCode = 1;
}
// The SDK's stdio client and fetch's keep-alive sockets can hold the loop open a little longer.
setTimeout(() => process.exit(), 2000).unref();
