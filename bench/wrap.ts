/**
 * `npm run bench:wrap [-- --quick] [-- --filter=TEXT] [-- --concurrency=N[,N…]] [-- --profile] [-- --tsx] [-- --ref=GITREF]`
 * (also run by `npm run bench`): calls per second and p50/p99 latency of modern `tools/call` requests through the wrap, at
 * concurrency 1, 16 and 64, against the same legacy stdio server (bench/servers/echoServer.ts) behind
 *
 *   - pass-through: bench/passthrough.ts, HTTP body → one stdio child → HTTP body, nothing else
 *     (the ceiling for any HTTP front of a stdio server on this machine);
 *   - mcp-proxy 6.7.19 on its 2026-07-28 route (the same modern requests and headers);
 *   - direct: a legacy client on the server's own stdio: the v1 SDK `Client` (the reference the
 *     issue names) and raw newline-delimited requests (same client as the front);
 *   - stdio relay: bench/stdioRelay.ts, a second process that pipes bytes to the server and back
 *     (the ceiling for any stdio front of a stdio server: the process hop alone);
 *
 * and the wrap's stdio front (`serve --stdio`) against the relay and direct, with a modern client and
 * with a legacy one (its session relayed). One in-process load generator;
 * every answer is checked. Prints a table and the ratios against the goals, writes
 * bench/results/wrap.json. Timings are reported, never asserted; the exit status is non-zero
 * only for wrong answers (or a contender that cannot start).
 * Every Node process of the bench (the fronts, the servers, this load generator: see package.json and
 * bench/all.ts) runs with V8's `--no-memory-reducer`; why is told in bench/RESULTS.md (section 2).
 * The contenders are bench/wrap/contenders.ts; a cell's figures, bench/wrap/cells.ts.
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
import { buildEchoServer, buildLib, commitOf, exportLib, libIsDirty, transpile } from './shared/build.ts';
import { banner, environment, int, RESULTS_DIR, writeResults } from './shared/format.ts';
import { addErrors, cellOf, cellTable, compare, measureSlice, newTally, type Cell, type Comparison, type GoalCheck } from './wrap/cells.ts';
import { CONTENDERS, type Contender, type Programs, type Running } from './wrap/contenders.ts';
import { runPhase } from './wrap/load.ts';
import { BENCH_NODE_FLAGS } from './wrap/procs.ts';

/**
 * The goals: for the wrap over HTTP against the pass-through and mcp-proxy; for the stdio front
 * against the translating relay (the ceiling of any front that translates, which the byte relay is
 * not); with tracing on, sampling 10% of requests against both off (every request traced is held
 * to our own part of its cost instead, measured apart by `npm run bench:front`).
 */
const GOAL = {
  minVsPassthrough: 0.85,
  minVsMcpProxy: 2.5,
  maxAddedP50Us: 100,
  addedP50Concurrency: 1,
  minStdioVsTranslatingRelay: 0.92,
  minSampledVsPlain: 0.95,
} as const;
const ALL_CONCURRENCIES = [1, 16, 64] as const;
/** Share of the machine's cores used by other processes during a cell above which the report warns. */
const OTHER_LOAD_WARNING = 0.1;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const profile = args.includes('--profile');
const viaTsx = args.includes('--tsx');
const filter = args
  .find((a) => a.startsWith('--filter='))
  ?.slice('--filter='.length)
  .toLowerCase();
const ref = args.find((a) => a.startsWith('--ref='))?.slice('--ref='.length);
const only = args.find((a) => a.startsWith('--concurrency='))?.slice('--concurrency='.length);
const CONCURRENCIES: readonly number[] =
  only === undefined ? ALL_CONCURRENCIES : ALL_CONCURRENCIES.filter((c) => only.split(',').includes(String(c)));
const unknown = args.filter(
  (a) =>
    a !== '--quick' &&
    a !== '--profile' &&
    a !== '--tsx' &&
    !a.startsWith('--filter=') &&
    !a.startsWith('--ref=') &&
    !a.startsWith('--concurrency='),
);
if (unknown.length > 0 || CONCURRENCIES.length === 0) {
  console.error(
    `${unknown.length > 0 ? `unknown argument(s): ${unknown.join(' ')}` : `--concurrency takes some of ${ALL_CONCURRENCIES.join(', ')}`}\nusage: npm run bench:wrap -- [--quick] [--filter=TEXT[,TEXT…]] [--concurrency=N[,N…]] [--profile] [--tsx] [--ref=GITREF]`,
  );
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

const profileDir = join(RESULTS_DIR, 'profiles');
const profileFlags = (key: string): string[] => (profile ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, key)}`] : []);

const cpuList = cpus();
console.log(banner('wrap bench'));
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
      : {
          commit: commitOf('HEAD'),
          source: libIsDirty() ? 'lib/ of the working tree, with uncommitted changes' : 'lib/ of the working tree, as committed',
        };
} catch {
  libState = { commit: null, source: ref !== undefined ? `lib/ at ${ref}` : 'lib/ of the working tree (not a git checkout)' };
}
console.log(
  `the wrap measured: ${libState.source}${libState.commit ? ` (${ref !== undefined ? 'commit' : 'HEAD'} ${libState.commit})` : ''}`,
);
console.log(
  `every Node process of the bench runs with ${BENCH_NODE_FLAGS.join(' ')}${process.execArgv.some((a) => BENCH_NODE_FLAGS.includes(a)) ? '' : ' (this load generator does not: run it through npm run bench:wrap)'}: ` +
    "V8 would otherwise drop every unused map in an idle-time collection ~100 s after a process's last one and recompile its request path inside whichever cell that lands in",
);
console.log(
  `the load generator runs in this process and shares the ${cpuList.length} cores with the fronts and the server (its share is the "gen" column);`,
);
console.log(
  '"cores busy" is this cell\'s processes, "other load" everything else on the machine meanwhile (anything well above 0% disturbs the cell)',
);
console.log('');

const filters = filter?.split(',').filter((f) => f.length > 0) ?? [];
const chosen = CONTENDERS.filter(
  (c) => filters.length === 0 || filters.some((f) => c.key.includes(f) || c.label.toLowerCase().includes(f)),
);
if (chosen.length === 0) {
  console.log(`no wrap-bench contender matches --filter=${filter}; nothing to do`);
  process.exit(0);
}

const startedAt = Date.now();
const exported = ref !== undefined ? exportLib(ref) : undefined;
const programs: Programs = viaTsx
  ? {
      echo: buildEchoServer(),
      wrapCli: exported?.cli ?? ['--import', 'tsx', 'lib/cli/main.ts'],
      passthrough: ['--import', 'tsx', 'bench/passthrough.ts'],
      relay: ['--import', 'tsx', 'bench/stdioRelay.ts'],
      profileFlags,
    }
  : {
      echo: buildEchoServer(),
      wrapCli: [buildLib(exported?.dir)],
      passthrough: [transpile(join('bench', 'passthrough.ts'))],
      relay: [transpile(join('bench', 'stdioRelay.ts'))],
      profileFlags,
    };
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
  process.stderr.write(
    `  concurrency ${concurrency}: warming each contender ${timing.warmupMs / 1000} s, then ${timing.slices} slices of ${timing.sliceMs / 1000} s each (after a ${timing.leadInMs} ms lead-in), in turn…\n`,
  );
  for (const c of live) addErrors(tallies.get(c.key)!, await runPhase(drivers.get(c.key)!, concurrency, timing.warmupMs));
  for (let slice = 0; slice < timing.slices; slice++) {
    // Who goes first rotates every slice, and the order is reversed every other slice: each contender
    // follows both of its neighbours, not always the same one (whose leftovers would always land on it).
    const shift = (slice + round) % live.length;
    const rotated = [...live.slice(shift), ...live.slice(0, shift)];
    for (const c of (slice + round) % 2 === 0 ? rotated : rotated.reverse())
      await measureSlice(running.get(c.key)!, drivers.get(c.key)!, concurrency, tallies.get(c.key)!, timing);
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
console.log(cellTable(cells));

const vsPassthrough = compare(cells, 'wrap-http', 'passthrough');
const vsProxy = compare(cells, 'wrap-http', 'mcp-proxy');
const vsDirectSdk = compare(cells, 'wrap-http', 'direct-sdk');
const stdioVsSdk = compare(cells, 'wrap-stdio', 'direct-sdk');
const stdioVsRaw = compare(cells, 'wrap-stdio', 'direct-raw');
const stdioVsRelay = compare(cells, 'wrap-stdio', 'stdio-relay');
const stdioVsParsingRelay = compare(cells, 'wrap-stdio', 'stdio-parsing-relay');
const parsingRelayVsRelay = compare(cells, 'stdio-parsing-relay', 'stdio-relay');
const stdioVsTranslatingRelay = compare(cells, 'wrap-stdio', 'stdio-translating-relay');
const translatingRelayVsRelay = compare(cells, 'stdio-translating-relay', 'stdio-relay');
const stdioLegacyVsRelay = compare(cells, 'wrap-stdio-legacy', 'stdio-relay');
const observedVsPlain = compare(cells, 'wrap-http-observed', 'wrap-http');
const metricsVsPlain = compare(cells, 'wrap-http-metrics', 'wrap-http');
const sampledVsPlain = compare(cells, 'wrap-http-sampled', 'wrap-http');

const goals: GoalCheck[] = [
  ...vsPassthrough.map((c) => ({
    goal: `throughput ≥ ${GOAL.minVsPassthrough}× pass-through`,
    concurrency: c.concurrency,
    value: c.throughputRatio,
    holds: c.throughputRatio >= GOAL.minVsPassthrough,
  })),
  ...vsProxy.map((c) => ({
    goal: `throughput ≥ ${GOAL.minVsMcpProxy}× mcp-proxy`,
    concurrency: c.concurrency,
    value: c.throughputRatio,
    holds: c.throughputRatio >= GOAL.minVsMcpProxy,
  })),
  ...vsPassthrough
    .filter((c) => c.concurrency === GOAL.addedP50Concurrency)
    .map((c) => ({
      goal: `added p50 ≤ ${GOAL.maxAddedP50Us} µs over pass-through`,
      concurrency: c.concurrency,
      value: c.addedP50Us,
      holds: c.addedP50Us <= GOAL.maxAddedP50Us,
    })),
  ...stdioVsTranslatingRelay.map((c) => ({
    goal: `stdio: throughput ≥ ${GOAL.minStdioVsTranslatingRelay}× the translating relay`,
    concurrency: c.concurrency,
    value: c.throughputRatio,
    holds: c.throughputRatio >= GOAL.minStdioVsTranslatingRelay,
  })),
  ...sampledVsPlain.map((c) => ({
    goal: `traced at 10% + metrics ≥ ${GOAL.minSampledVsPlain}× both off`,
    concurrency: c.concurrency,
    value: c.throughputRatio,
    holds: c.throughputRatio >= GOAL.minSampledVsPlain,
  })),
];

const sign = (n: number): string => `${n >= 0 ? '+' : '−'}${int.format(Math.abs(n))}`;
console.log('');
console.log('wrap (HTTP, and stdio against the translating relay) against the goals:');
if (goals.length === 0) console.log('  not measured (the wrap or its references were filtered out or failed)');
for (const g of goals) {
  const shown = g.goal.startsWith('added') ? `${sign(g.value)} µs` : `${g.value.toFixed(2)}×`;
  console.log(`  c=${String(g.concurrency).padEnd(3)} ${g.goal.padEnd(40)} ${shown.padStart(9)}  ${g.holds ? 'HOLDS' : 'MISSED'}`);
}
const related = (title: string, list: readonly Comparison[]) => {
  if (list.length === 0) return;
  console.log(title);
  for (const c of list)
    console.log(
      `  c=${String(c.concurrency).padEnd(3)} ${c.throughputRatio.toFixed(2)}× throughput, p50 ${sign(c.addedP50Us)} µs, p99 ${sign(c.addedP99Us)} µs`,
    );
};
related('wrap (HTTP) against direct (SDK client), for reference:', vsDirectSdk);
related('wrap (stdio) against direct (SDK client):', stdioVsSdk);
related('wrap (stdio) against direct (raw lines, the same client as the stdio front):', stdioVsRaw);
related('wrap (stdio) against the stdio relay (the same server behind a second process that only forwards bytes):', stdioVsRelay);
related('wrap (stdio) against the parsing stdio relay (one that decodes and encodes every line, nothing else):', stdioVsParsingRelay);
related('the parsing stdio relay against the byte relay (what reading the messages costs any front):', parsingRelayVsRelay);
related(
  'wrap (stdio) against the translating stdio relay (modern lines in, legacy lines to the server, modern answers back, nothing else):',
  stdioVsTranslatingRelay,
);
related(
  'the translating stdio relay against the byte relay (what translating costs any front, with a modern client):',
  translatingRelayVsRelay,
);
related(
  'wrap (stdio) with a legacy client against the stdio relay (the same legacy lines, relayed through a legacy session):',
  stdioLegacyVsRelay,
);
related('wrap (HTTP) with spans recorded by the OpenTelemetry SDK and metrics on, against both off:', observedVsPlain);
related('wrap (HTTP) with the SDK sampling 10% of requests and metrics on, against both off:', sampledVsPlain);
related('wrap (HTTP) with metrics on alone, against both off:', metricsVsPlain);
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
console.log(
  goals.length === 0
    ? 'goals: not measured'
    : missed.length === 0
      ? `goals: all ${goals.length} HOLD`
      : `goals: ${missed.length} of ${goals.length} MISSED (reported, not asserted)`,
);
console.log(
  `(${elapsedS.toFixed(1)} s; calls/s = correct answers in the measured slices ÷ their length, a call that ends after its slice counting half; latency = send to checked answer; cpu = /proc time ÷ calls)`,
);
if (profile)
  console.log(
    `CPU profiles written under ${join('bench', 'results', 'profiles')}/ (summarise with: npx tsx bench/wrap/profileSummary.ts FILE)`,
  );

const report = {
  generatedAt: new Date().toISOString(),
  wrap: libState,
  environment: environment(),
  options: {
    ...timing,
    nodeFlags: BENCH_NODE_FLAGS,
    generatorFlags: process.execArgv.filter((a) => BENCH_NODE_FLAGS.includes(a)),
    quick,
    profile,
    tsx: viaTsx,
    ref: ref ?? null,
    filter: filter ?? null,
    concurrencies: CONCURRENCIES,
  },
  server: 'bench/servers/echoServer.ts (v1 SDK McpServer, one echo tool), transpiled to plain JavaScript, run with node',
  request:
    'modern tools/call echo with _meta protocolVersion 2026-07-28, clientInfo, clientCapabilities, traceparent; headers MCP-Protocol-Version, Mcp-Method, Mcp-Name',
  contenders: chosen.map((c) => ({ key: c.key, label: c.label, describe: c.describe })),
  goals: { definition: GOAL, checks: goals, holds: goals.length > 0 && missed.length === 0 },
  comparisons: {
    vsPassthrough,
    vsProxy,
    vsDirectSdk,
    stdioVsSdk,
    stdioVsRaw,
    stdioVsRelay,
    stdioVsParsingRelay,
    parsingRelayVsRelay,
    stdioVsTranslatingRelay,
    translatingRelayVsRelay,
    stdioLegacyVsRelay,
    observedVsPlain,
    sampledVsPlain,
    metricsVsPlain,
  },
  failures,
  elapsedSeconds: elapsedS,
  cells,
};
writeResults('wrap.json', report);

if (failures.length > 0) {
  console.error('wrong answers (or a contender that could not start): that is a bug, not a timing');
  process.exitCode = 1;
}
