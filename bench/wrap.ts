/**
 * `npm run bench:wrap [-- --quick] [-- --filter=TEXT] [-- --concurrency=N[,N…]] [-- --profile] [-- --tsx] [-- --ref=GITREF]`
 * (also run by `npm run bench`): calls per second and p50/p99 latency of modern `tools/call` requests through the wrap, at
 * concurrency 1, 16 and 64, against the same legacy stdio server (bench/servers/echoServer.ts) behind
 *
 *   - pass-through: bench/passthrough.ts, HTTP body → one stdio child → HTTP body, nothing else
 *     (the ceiling for any HTTP front of a stdio server on this machine);
 *   - mcp-proxy 6.7.19 on its 2026-07-28 route (the same modern requests and headers);
 *   - direct: a legacy client on the server's own stdio: the v1 SDK `Client` (the reference the
 *     issue names) and raw newline-delimited requests (the stdio ceiling, same client as the front);
 *
 * and the wrap's stdio front (`serve --stdio`) against direct. One in-process load generator;
 * every answer is checked. Prints a table and the ratios against the goals, writes
 * bench/results/wrap.json. Timings are reported, never asserted; the exit status is non-zero
 * only for wrong answers (or a contender that cannot start).
 *
 * Every Node process of the bench (the fronts, the servers, this load generator: see package.json and
 * bench/all.ts) runs with V8's `--no-memory-reducer`. Otherwise each process gets an idle-time full
 * garbage collection about 100 s after its last one (the memory reducer's watchdog), and that
 * collection, unlike the others, keeps no map that no live object uses: every optimised function
 * built on such a map (request, response and socket shapes: the whole request path of an HTTP
 * front) is deoptimised and compiled again under load. In steady service that recurs at most every
 * 100 s and costs well under 1%; in the bench it lands in whichever cell runs 100 s after that
 * contender's start, so it measured the bench's schedule (the contender with the longest request
 * path, started first, took it in its concurrency-1 cell) rather than the contenders.
 *
 * `--quick` shortens every phase; `--filter=TEXT[,TEXT…]` keeps the contenders whose key or label
 * contains one of the TEXTs; `--concurrency=N[,N…]` measures only those of 1, 16 and 64; `--profile` runs the fronts under `node --cpu-prof` (profiles in bench/results/profiles/,
 * see bench/wrap/profileSummary.ts); `--tsx` runs the wrap and the pass-through from TypeScript
 * through the tsx loader instead of compiling them first (quicker to start, but tsx's keepNames
 * helpers make the wrap's closures dearer); `--ref=GITREF` measures lib/ as committed at GITREF
 * (exported with `git archive`) rather than the working tree.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { buildEchoServer, buildLib, commitOf, exportLib, libIsDirty, transpile } from './wrap/build.ts';
import { httpDriver, initializeLegacy, LineDriver, percentile, runPhase, sdkDriver, type Driver, type PhaseResult } from './wrap/load.ts';
import { RESULTS_DIR, writeResults } from './resultsFile.ts';
import { BENCH_NODE_FLAGS, childPids, cpuMicros, freePort, machineBusyMicros, start, stop, waitFor, type Started } from './wrap/procs.ts';

/** The goals of the issue, for the wrap over HTTP. */
const GOAL = { minVsPassthrough: 0.85, minVsMcpProxy: 2.5, maxAddedP50Us: 100, addedP50Concurrency: 1 } as const;
const ALL_CONCURRENCIES = [1, 16, 64] as const;
/** Share of the machine's cores used by other processes during a cell above which the report warns. */
const OTHER_LOAD_WARNING = 0.1;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const profile = args.includes('--profile');
const viaTsx = args.includes('--tsx');
const filter = args.find((a) => a.startsWith('--filter='))?.slice('--filter='.length).toLowerCase();
const ref = args.find((a) => a.startsWith('--ref='))?.slice('--ref='.length);
const only = args.find((a) => a.startsWith('--concurrency='))?.slice('--concurrency='.length);
const CONCURRENCIES: readonly number[] = only === undefined ? ALL_CONCURRENCIES : ALL_CONCURRENCIES.filter((c) => only.split(',').includes(String(c)));
const unknown = args.filter((a) => a !== '--quick' && a !== '--profile' && a !== '--tsx' && !a.startsWith('--filter=') && !a.startsWith('--ref=') && !a.startsWith('--concurrency='));
if (unknown.length > 0 || CONCURRENCIES.length === 0) {
  console.error(`${unknown.length > 0 ? `unknown argument(s): ${unknown.join(' ')}` : `--concurrency takes some of ${ALL_CONCURRENCIES.join(', ')}`}\nusage: npm run bench:wrap -- [--quick] [--filter=TEXT[,TEXT…]] [--concurrency=N[,N…]] [--profile] [--tsx] [--ref=GITREF]`);
  process.exit(2);
}
/**
 * Each contender first runs `startWarmupMs` at concurrency `startWarmupConcurrency`, unmeasured, so
 * that it is measured as the long-running process it is meant to be: on this 2-core machine the
 * wrap needs well over 5,000 calls (≈ 10 s) before V8 has optimised its hot path, and without this
 * the first cells would measure the JIT. Then each cell warms up again at its own concurrency.
 *
 * A cell's measured time is cut into `slices` of `sliceMs`, and at each concurrency the contenders
 * take turns slice by slice (rotating who goes first, and reversing the order every other slice so
 * that no contender always runs right after the same one), so a burst of other work on the machine
 * lands on every contender alike instead of on whoever was running then. Each slice follows an
 * unmeasured lead-in of `leadInMs` at the same concurrency: while the others took their turns a
 * contender sat idle and its caches went to them, and the figures are of a contender under
 * steady load (at concurrency 1 a cold first few hundred calls otherwise weigh on whoever has the
 * most code on its path).
 */
const timing = quick
  ? { startWarmupMs: 3000, startWarmupConcurrency: 16, warmupMs: 500, slices: 2, sliceMs: 1000, leadInMs: 100 }
  : { startWarmupMs: 15_000, startWarmupConcurrency: 16, warmupMs: 3000, slices: 5, sliceMs: 1000, leadInMs: 300 };

const root = join(import.meta.dirname, '..');
const profileDir = join(RESULTS_DIR, 'profiles');
const node = process.execPath;
const MCP_PROXY_BIN = join(root, 'node_modules', 'mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs');

/** A started contender: how to drive it and which processes do its work. */
interface Running {
  /** A driver for one cell (HTTP: a fresh Agent sized to the concurrency; stdio: the one pipe). */
  driver(concurrency: number): Driver;
  /** Whether each cell's driver is its own (closed after the cell) rather than the one shared pipe. */
  readonly driverPerCell: boolean;
  /** The front's process, if it has one of its own. */
  readonly frontPid?: number;
  /** The legacy server's process(es): found once the front has spawned them. */
  serverPids(): number[];
  stop(): Promise<void>;
}

interface Contender {
  readonly key: 'passthrough' | 'wrap-http' | 'mcp-proxy' | 'direct-sdk' | 'direct-raw' | 'wrap-stdio';
  readonly label: string;
  readonly describe: string;
  start(programs: Programs): Promise<Running>;
}

/** How to run each program: node arguments up to (not including) the program's own arguments. */
interface Programs {
  readonly echo: string;
  readonly wrapCli: readonly string[];
  readonly passthrough: readonly string[];
}

const profileFlags = (key: string): string[] => (profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, key)}`] : []);

/** The children seen now, or the ones seen before if none are (the front has not spawned them yet, or is gone). */
const latest = (now: number[], before: number[]): number[] => (now.length > 0 ? now : before);

/** An HTTP front we start as a process, serving modern requests at `url`. */
async function httpFront(key: Contender['key'], command: string[], url: (port: number) => string, modernAnswer: boolean): Promise<Running> {
  const port = await freePort();
  const argv = command.map((a) => a.replace('{port}', String(port)));
  const proc = start(node, [...BENCH_NODE_FLAGS, ...profileFlags(key), ...argv], { cwd: root });
  const target = { url: new URL(url(port)), modernAnswer };
  let servers: number[] = [];
  try {
    await waitFor(
      key,
      async () => {
        const probe = httpDriver(target, 1);
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          const answer = await Promise.race([probe.call(0, 'ready'), new Promise<string>((r) => (timer = setTimeout(() => r('no answer'), 5000)))]);
          return answer === undefined;
        } finally {
          clearTimeout(timer);
          await probe.close();
        }
      },
      30_000,
      proc,
    );
  } catch (e) {
    await stop(proc, childPids(proc.pid));
    throw e;
  }
  servers = childPids(proc.pid);
  return {
    driver: (c) => httpDriver(target, c),
    driverPerCell: true,
    frontPid: proc.pid,
    serverPids: () => (servers = latest(childPids(proc.pid), servers)),
    stop: () => stop(proc, servers),
  };
}

/** A stdio process spoken to with newline-delimited JSON-RPC (the stdio front, or the server itself). */
async function stdioProcess(proc: Started, modern: boolean, legacyHandshake: boolean, isFront: boolean): Promise<Running> {
  const driver = new LineDriver(proc.child, modern);
  proc.child.once('exit', () => driver.failAll('the process exited'));
  let servers: number[] = [];
  try {
    if (legacyHandshake) await initializeLegacy(driver);
    const ready = await Promise.race([driver.call(0, 'ready'), new Promise<string>((r) => setTimeout(() => r('no answer within 30 s'), 30_000).unref())]);
    if (ready !== undefined) throw new Error(`not ready: ${ready}\n${proc.log()}`);
  } catch (e) {
    await stop(proc, childPids(proc.pid));
    throw e;
  }
  if (isFront) servers = childPids(proc.pid);
  return {
    driver: () => driver,
    driverPerCell: false,
    ...(isFront ? { frontPid: proc.pid } : {}),
    serverPids: () => (isFront ? (servers = latest(childPids(proc.pid), servers)) : [proc.pid]),
    stop: () => stop(proc, servers, () => void driver.close()),
  };
}

const CONTENDERS: readonly Contender[] = [
  {
    key: 'wrap-http',
    label: 'wrap (HTTP)',
    describe: 'mcp-dual-era serve --port N -- node echoServer.mjs, modern requests',
    start: ({ echo, wrapCli }) => httpFront('wrap-http', [...wrapCli, 'serve', '--quiet', '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo], (p) => `http://127.0.0.1:${p}/mcp`, true),
  },
  {
    key: 'passthrough',
    label: 'pass-through',
    describe: 'bench/passthrough.ts: body → stdin line, stdout line → body, no translation',
    start: ({ echo, passthrough }) => httpFront('passthrough', [...passthrough, '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo], (p) => `http://127.0.0.1:${p}/`, false),
  },
  {
    key: 'mcp-proxy',
    label: 'mcp-proxy 6.7.19',
    describe: 'mcp-proxy --host 127.0.0.1 --port N -- node echoServer.mjs, its 2026-07-28 route at /mcp',
    start: ({ echo }) => httpFront('mcp-proxy', [MCP_PROXY_BIN, '--host', '127.0.0.1', '--port', '{port}', '--', node, ...BENCH_NODE_FLAGS, echo], (p) => `http://127.0.0.1:${p}/mcp`, true),
  },
  {
    key: 'direct-sdk',
    label: 'direct (SDK client)',
    describe: 'v1 SDK Client over StdioClientTransport, legacy session on the server itself',
    async start({ echo }) {
      const d = await sdkDriver(node, [...BENCH_NODE_FLAGS, echo], root);
      const ready = await d.call(0, 'ready');
      if (ready !== undefined) throw new Error(`direct-sdk not ready: ${ready}`);
      return { driver: () => d, driverPerCell: false, serverPids: () => (d.pid ? [d.pid] : []), stop: () => d.close() };
    },
  },
  {
    key: 'direct-raw',
    label: 'direct (raw lines)',
    describe: 'legacy requests written as lines to the server itself (the bench client of the stdio front)',
    start: ({ echo }) => stdioProcess(start(node, [...BENCH_NODE_FLAGS, echo], { cwd: root, protocol: true }), false, true, false),
  },
  {
    key: 'wrap-stdio',
    label: 'wrap (stdio)',
    describe: 'mcp-dual-era serve --stdio -- node echoServer.mjs, modern request lines',
    start: ({ echo, wrapCli }) => stdioProcess(start(node, [...BENCH_NODE_FLAGS, ...profileFlags('wrap-stdio'), ...wrapCli, 'serve', '--stdio', '--quiet', '--', node, ...BENCH_NODE_FLAGS, echo], { cwd: root, protocol: true }), true, false, true),
  },
];

interface CpuShare {
  /** CPU time per correct call, in microseconds: the load generator (this process), the front, the server. */
  readonly generatorUs: number;
  readonly frontUs: number | null;
  readonly serverUs: number;
  /** All of it over the wall time, as a share of the machine's cores. */
  readonly machineBusy: number;
  /** CPU the rest of the machine (processes not in this cell) used meanwhile, as a share of its cores. */
  readonly otherBusy: number | null;
}

export interface Cell {
  readonly contender: Contender['key'];
  readonly label: string;
  readonly concurrency: number;
  readonly calls: number;
  readonly callsPerSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
  readonly errors: number;
  readonly errorSamples: readonly string[];
  readonly cpu: CpuShare | null;
}

function sumCpu(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += cpuMicros(pid) ?? 0;
  return total;
}

/** What a cell's slices add up to. */
interface Tally {
  latenciesNs: number[];
  inWindow: number;
  windowNs: number;
  errors: number;
  errorSamples: string[];
  genUs: number;
  frontUs: number | null;
  serverUs: number;
  otherUs: number | null;
}

function newTally(hasFront: boolean): Tally {
  return { latenciesNs: [], inWindow: 0, windowNs: 0, errors: 0, errorSamples: [], genUs: 0, frontUs: hasFront ? 0 : null, serverUs: 0, otherUs: 0 };
}

function addErrors(t: Tally, phase: PhaseResult): void {
  t.errors += phase.errors;
  for (const e of phase.errorSamples) if (t.errorSamples.length < 5) t.errorSamples.push(e);
}

/** One measured slice of a cell, with the CPU each process spent meanwhile. */
async function measureSlice(running: Running, driver: Driver, concurrency: number, tally: Tally): Promise<void> {
  if (timing.leadInMs > 0) addErrors(tally, await runPhase(driver, concurrency, timing.leadInMs));
  const servers = running.serverPids();
  const before = { gen: process.cpuUsage(), front: running.frontPid ? cpuMicros(running.frontPid) : undefined, server: sumCpu(servers), machine: machineBusyMicros() };
  const phase = await runPhase(driver, concurrency, timing.sliceMs);
  const gen = process.cpuUsage(before.gen);
  const frontAfter = running.frontPid ? cpuMicros(running.frontPid) : undefined;
  const serverAfter = sumCpu(servers);
  const machineAfter = machineBusyMicros();
  for (const v of phase.latenciesNs) tally.latenciesNs.push(v);
  // A call still in flight at the deadline counts half: the slice began with every worker idle, so
  // as much work is missing at its start as spills over its end (unbiased for a closed loop).
  tally.inWindow += (phase.completedInWindow + phase.latenciesNs.length) / 2;
  tally.windowNs += phase.windowNs;
  addErrors(tally, phase);
  const genUs = gen.user + gen.system;
  const frontUs = before.front !== undefined && frontAfter !== undefined ? frontAfter - before.front : null;
  const serverUs = serverAfter - before.server;
  tally.genUs += genUs;
  if (tally.frontUs !== null) tally.frontUs = frontUs === null ? null : tally.frontUs + frontUs;
  tally.serverUs += serverUs;
  if (tally.otherUs !== null) tally.otherUs = before.machine !== undefined && machineAfter !== undefined ? tally.otherUs + Math.max(0, machineAfter - before.machine - genUs - (frontUs ?? 0) - serverUs) : null;
}

function cellOf(c: Contender, concurrency: number, t: Tally): Cell {
  const sorted = Float64Array.from(t.latenciesNs).sort();
  const calls = sorted.length;
  const wallS = t.windowNs / 1e9;
  let sum = 0;
  for (const v of sorted) sum += v;
  const cores = cpus().length;
  return {
    contender: c.key,
    label: c.label,
    concurrency,
    calls,
    callsPerSecond: wallS > 0 ? t.inWindow / wallS : 0,
    p50Us: percentile(sorted, 0.5) / 1e3,
    p99Us: percentile(sorted, 0.99) / 1e3,
    meanUs: calls > 0 ? sum / calls / 1e3 : NaN,
    errors: t.errors,
    errorSamples: t.errorSamples,
    cpu:
      calls > 0
        ? {
            generatorUs: t.genUs / calls,
            frontUs: t.frontUs === null ? null : t.frontUs / calls,
            serverUs: t.serverUs / calls,
            machineBusy: (t.genUs + (t.frontUs ?? 0) + t.serverUs) / 1e6 / wallS / cores,
            otherBusy: t.otherUs === null ? null : t.otherUs / 1e6 / wallS / cores,
          }
        : null,
  };
}

// ---------------------------------------------------------------------------------------------

const fmt0 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const fmt1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

function printTable(cells: readonly Cell[]): void {
  const head = ['contender', 'conc', 'calls/s', 'p50 µs', 'p99 µs', 'errors', 'cpu µs/call gen', 'front', 'server', 'cores busy', 'other load'];
  const body = cells.map((c) => [
    c.label,
    String(c.concurrency),
    fmt0.format(c.callsPerSecond),
    fmt0.format(c.p50Us),
    fmt0.format(c.p99Us),
    String(c.errors),
    c.cpu ? fmt1.format(c.cpu.generatorUs) : '-',
    c.cpu?.frontUs != null ? fmt1.format(c.cpu.frontUs) : '-',
    c.cpu ? fmt1.format(c.cpu.serverUs) : '-',
    c.cpu ? `${Math.round(c.cpu.machineBusy * 100)}%` : '-',
    c.cpu?.otherBusy != null ? `${Math.round(c.cpu.otherBusy * 100)}%` : '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((s, i) => (i === 0 ? s.padEnd(widths[i]!) : s.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  let last = '';
  for (const [i, b] of body.entries()) {
    if (last && cells[i]!.contender !== last) console.log('');
    last = cells[i]!.contender;
    console.log(line(b));
  }
}

export interface Comparison {
  readonly concurrency: number;
  readonly candidate: Contender['key'];
  readonly reference: Contender['key'];
  /** candidate calls/s ÷ reference calls/s. */
  readonly throughputRatio: number;
  /** candidate p50 − reference p50, µs. */
  readonly addedP50Us: number;
  readonly addedP99Us: number;
}

function compare(cells: readonly Cell[], candidate: Contender['key'], reference: Contender['key']): Comparison[] {
  const out: Comparison[] = [];
  for (const concurrency of CONCURRENCIES) {
    const a = cells.find((c) => c.contender === candidate && c.concurrency === concurrency);
    const b = cells.find((c) => c.contender === reference && c.concurrency === concurrency);
    if (!a || !b || a.calls === 0 || b.calls === 0) continue;
    out.push({ concurrency, candidate, reference, throughputRatio: a.callsPerSecond / b.callsPerSecond, addedP50Us: a.p50Us - b.p50Us, addedP99Us: a.p99Us - b.p99Us });
  }
  return out;
}

interface GoalCheck {
  readonly goal: string;
  readonly concurrency: number;
  readonly value: number;
  readonly holds: boolean;
}

// ---------------------------------------------------------------------------------------------

const cpuList = cpus();
console.log(`mcp-dual-era wrap bench — node ${process.version}, ${process.platform}/${process.arch}, ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown CPU'}`);
console.log(
  `${quick ? 'quick: ' : ''}each contender warmed ${timing.startWarmupMs / 1000} s at concurrency ${timing.startWarmupConcurrency}, then per cell ` +
    `${timing.warmupMs / 1000} s warm-up + ${(timing.slices * timing.sliceMs) / 1000} s measured in ${timing.slices} slices taken in turn with the other contenders (each after a ${timing.leadInMs} ms unmeasured lead-in), ` +
    `closed loop, concurrency ${CONCURRENCIES.join(', ')}; ` +
    `modern tools/call with full _meta and routing headers; every answer checked${profile ? '; PROFILING (--cpu-prof): slower than normal' : ''}`,
);
console.log(
  viaTsx
    ? 'the wrap and the pass-through run from TypeScript through the tsx loader (--tsx: its keepNames helpers cost the wrap ≈ 10% more CPU than the compiled code); the echo server is plain JavaScript'
    : 'the wrap (lib/ compiled by tsc, as npm run build does), the pass-through and the echo server run as plain JavaScript under node, as mcp-proxy does',
);
let libState: { readonly commit: string | null; readonly source: string };
try {
  libState =
    ref !== undefined
      ? { commit: commitOf(ref), source: `lib/ as committed at ${ref}` }
      : { commit: commitOf('HEAD'), source: libIsDirty() ? 'lib/ of the working tree, with uncommitted changes' : 'lib/ of the working tree, as committed' };
} catch {
  libState = { commit: null, source: ref !== undefined ? `lib/ at ${ref}` : 'lib/ of the working tree (not a git checkout)' };
}
console.log(`the wrap measured: ${libState.source}${libState.commit ? ` (${ref !== undefined ? 'commit' : 'HEAD'} ${libState.commit})` : ''}`);
console.log(
  `every Node process of the bench runs with ${BENCH_NODE_FLAGS.join(' ')}${process.execArgv.some((a) => BENCH_NODE_FLAGS.includes(a)) ? '' : ' (this load generator does not: run it through npm run bench:wrap)'}: ` +
    'V8 would otherwise drop every unused map in an idle-time collection ~100 s after a process\'s last one and recompile its request path inside whichever cell that lands in',
);
console.log(`the load generator runs in this process and shares the ${cpuList.length} cores with the fronts and the server (its share is the "gen" column);`);
console.log('"cores busy" is this cell\'s processes, "other load" everything else on the machine meanwhile (anything well above 0% disturbs the cell)');
console.log('');

const filters = filter?.split(',').filter((f) => f.length > 0) ?? [];
const chosen = CONTENDERS.filter((c) => filters.length === 0 || filters.some((f) => c.key.includes(f) || c.label.toLowerCase().includes(f)));
if (chosen.length === 0) {
  console.log(`no wrap-bench contender matches --filter=${filter}; nothing to do`);
  process.exit(0);
}

const startedAt = Date.now();
const exported = ref !== undefined ? exportLib(ref) : undefined;
const programs: Programs = viaTsx
  ? { echo: buildEchoServer(), wrapCli: exported?.cli ?? ['--import', 'tsx', 'lib/cli/main.ts'], passthrough: ['--import', 'tsx', 'bench/passthrough.ts'] }
  : { echo: buildEchoServer(), wrapCli: [buildLib(exported?.dir)], passthrough: [transpile(join('bench', 'passthrough.ts'))] };
const running = new Map<Contender['key'], Running>();
const failures: string[] = [];
for (const c of chosen) {
  try {
    running.set(c.key, await c.start(programs));
  } catch (e) {
    const message = `${c.label} did not start: ${e instanceof Error ? e.message : String(e)}`;
    console.error(`FAIL ${message}`);
    failures.push(message);
  }
}

for (const c of chosen) {
  const r = running.get(c.key);
  if (!r) continue;
  process.stderr.write(`  warming ${c.label}: ${timing.startWarmupMs / 1000} s at concurrency ${timing.startWarmupConcurrency}…\n`);
  const driver = r.driver(timing.startWarmupConcurrency);
  const warm = await runPhase(driver, timing.startWarmupConcurrency, timing.startWarmupMs);
  if (r.driverPerCell) await driver.close();
  if (warm.errors > 0) {
    const message = `${c.label} while warming up: ${warm.errors} wrong answer(s): ${warm.errorSamples.join(' | ')}`;
    console.error(`FAIL ${message}`);
    failures.push(message);
  }
}

const cells: Cell[] = [];
for (const [round, concurrency] of CONCURRENCIES.entries()) {
  const live = chosen.filter((c) => running.has(c.key));
  const drivers = new Map(live.map((c) => [c.key, running.get(c.key)!.driver(concurrency)]));
  const tallies = new Map(live.map((c) => [c.key, newTally(running.get(c.key)!.frontPid !== undefined)]));
  process.stderr.write(`  concurrency ${concurrency}: warming each contender ${timing.warmupMs / 1000} s, then ${timing.slices} slices of ${timing.sliceMs / 1000} s each (after a ${timing.leadInMs} ms lead-in), in turn…\n`);
  for (const c of live) addErrors(tallies.get(c.key)!, await runPhase(drivers.get(c.key)!, concurrency, timing.warmupMs));
  for (let slice = 0; slice < timing.slices; slice++) {
    // Who goes first rotates every slice, and the order is reversed every other slice: each contender
    // follows both of its neighbours, not always the same one (whose leftovers would always land on it).
    const shift = (slice + round) % live.length;
    const rotated = [...live.slice(shift), ...live.slice(0, shift)];
    for (const c of (slice + round) % 2 === 0 ? rotated : rotated.reverse()) await measureSlice(running.get(c.key)!, drivers.get(c.key)!, concurrency, tallies.get(c.key)!);
  }
  for (const c of live) {
    if (running.get(c.key)!.driverPerCell) await drivers.get(c.key)!.close();
    const cell = cellOf(c, concurrency, tallies.get(c.key)!);
    cells.push(cell);
    if (cell.errors > 0) {
      const message = `${c.label} at concurrency ${concurrency}: ${cell.errors} wrong answer(s): ${cell.errorSamples.join(' | ')}`;
      console.error(`FAIL ${message}`);
      failures.push(message);
    }
  }
}
await Promise.all([...running.values()].map((r) => r.stop().catch(() => {})));

const rank = new Map(CONTENDERS.map((c, i) => [c.key, i]));
cells.sort((a, b) => rank.get(a.contender)! - rank.get(b.contender)! || a.concurrency - b.concurrency);
console.log('');
printTable(cells);

const vsPassthrough = compare(cells, 'wrap-http', 'passthrough');
const vsProxy = compare(cells, 'wrap-http', 'mcp-proxy');
const vsDirectSdk = compare(cells, 'wrap-http', 'direct-sdk');
const stdioVsSdk = compare(cells, 'wrap-stdio', 'direct-sdk');
const stdioVsRaw = compare(cells, 'wrap-stdio', 'direct-raw');

const goals: GoalCheck[] = [
  ...vsPassthrough.map((c) => ({ goal: `throughput ≥ ${GOAL.minVsPassthrough}× pass-through`, concurrency: c.concurrency, value: c.throughputRatio, holds: c.throughputRatio >= GOAL.minVsPassthrough })),
  ...vsProxy.map((c) => ({ goal: `throughput ≥ ${GOAL.minVsMcpProxy}× mcp-proxy`, concurrency: c.concurrency, value: c.throughputRatio, holds: c.throughputRatio >= GOAL.minVsMcpProxy })),
  ...vsPassthrough
    .filter((c) => c.concurrency === GOAL.addedP50Concurrency)
    .map((c) => ({ goal: `added p50 ≤ ${GOAL.maxAddedP50Us} µs over pass-through`, concurrency: c.concurrency, value: c.addedP50Us, holds: c.addedP50Us <= GOAL.maxAddedP50Us })),
];

const sign = (n: number): string => `${n >= 0 ? '+' : '−'}${fmt0.format(Math.abs(n))}`;
console.log('');
console.log('wrap (HTTP) against the goals:');
if (goals.length === 0) console.log('  not measured (the wrap or its references were filtered out or failed)');
for (const g of goals) {
  const shown = g.goal.startsWith('added') ? `${sign(g.value)} µs` : `${g.value.toFixed(2)}×`;
  console.log(`  c=${String(g.concurrency).padEnd(3)} ${g.goal.padEnd(40)} ${shown.padStart(9)}  ${g.holds ? 'HOLDS' : 'MISSED'}`);
}
const related = (title: string, list: readonly Comparison[]) => {
  if (list.length === 0) return;
  console.log(title);
  for (const c of list) console.log(`  c=${String(c.concurrency).padEnd(3)} ${c.throughputRatio.toFixed(2)}× throughput, p50 ${sign(c.addedP50Us)} µs, p99 ${sign(c.addedP99Us)} µs`);
};
related('wrap (HTTP) against direct (SDK client), for reference:', vsDirectSdk);
related('wrap (stdio) against direct (SDK client):', stdioVsSdk);
related('wrap (stdio) against direct (raw lines, the same client as the stdio front):', stdioVsRaw);
const disturbed = cells.filter((c) => (c.cpu?.otherBusy ?? 0) > OTHER_LOAD_WARNING);
if (disturbed.length > 0) {
  console.log('');
  console.log(
    `WARNING: other processes kept the machine more than ${OTHER_LOAD_WARNING * 100}% busy during ${disturbed.length} of ${cells.length} cells ` +
      `(up to ${Math.round(Math.max(...disturbed.map((c) => c.cpu!.otherBusy!)) * 100)}%): those numbers understate every contender; rerun on a quiet machine`,
  );
}
const missed = goals.filter((g) => !g.holds);
const elapsedS = (Date.now() - startedAt) / 1000;
console.log('');
console.log(goals.length === 0 ? 'goals: not measured' : missed.length === 0 ? `goals: all ${goals.length} HOLD` : `goals: ${missed.length} of ${goals.length} MISSED (reported, not asserted)`);
console.log(`(${elapsedS.toFixed(1)} s; calls/s = correct answers in the measured slices ÷ their length, a call that ends after its slice counting half; latency = send to checked answer; cpu = /proc time ÷ calls)`);
if (profile) console.log(`CPU profiles written under ${join('bench', 'results', 'profiles')}/ (summarise with: npx tsx bench/wrap/profileSummary.ts FILE)`);

const report = {
  generatedAt: new Date().toISOString(),
  wrap: libState,
  environment: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpuList.length, cpuModel: cpuList[0]?.model.trim() ?? null },
  options: { ...timing, nodeFlags: BENCH_NODE_FLAGS, generatorFlags: process.execArgv.filter((a) => BENCH_NODE_FLAGS.includes(a)), quick, profile, tsx: viaTsx, ref: ref ?? null, filter: filter ?? null, concurrencies: CONCURRENCIES },
  server: 'bench/servers/echoServer.ts (v1 SDK McpServer, one echo tool), transpiled to plain JavaScript, run with node',
  request: 'modern tools/call echo with _meta protocolVersion 2026-07-28, clientInfo, clientCapabilities, traceparent; headers MCP-Protocol-Version, Mcp-Method, Mcp-Name',
  contenders: chosen.map((c) => ({ key: c.key, label: c.label, describe: c.describe })),
  goals: { definition: GOAL, checks: goals, holds: goals.length > 0 && missed.length === 0 },
  comparisons: { vsPassthrough, vsProxy, vsDirectSdk, stdioVsSdk, stdioVsRaw },
  failures,
  elapsedSeconds: elapsedS,
  cells,
};
writeResults('wrap.json', report);

if (failures.length > 0) {
  console.error('wrong answers (or a contender that could not start): that is a bug, not a timing');
  process.exitCode = 1;
}
