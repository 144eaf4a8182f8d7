/**
 * `npm run bench [-- --node=PATH] [-- --quick] [-- --filter=TEXT] [-- --profile] [-- --tsx] [-- --ref=GITREF]`: the
 * translator bench (bench/translate.ts), the wrap bench (bench/wrap.ts), the MRTR bench (bench/mrtr.ts:
 * a full round against a plain call, memory per parked call), the probe bench (bench/probe.ts),
 * the first-answer bench (bench/first.ts: how long a stdio host waits for our first answer) and
 * the fleet bench (bench/fleet.ts: a retry forwarded between two replicas of `serve --fleet`,
 * plain-call throughput in a fleet, Redis commands per call; on the machine's Redis) and the callers
 * bench (bench/callers.ts: 1, 100, 200 and 1,000 distinct callers through `serve`, isolated and
 * sharing sessions, mcp-proxy and the pass-through), the front bench (bench/front.ts: the HTTP
 * front's own CPU and bytes per call, and our own part of tracing every request) and the tasks
 * bench (bench/tasks.ts: a `tasks/get` poll of a working task against a plain call, in one process
 * and forwarded between two replicas of `serve --fleet`), each in a fresh process so none's JIT or
 * heap state leaks into another. `--quick` goes to all; `--filter` to the translator and wrap
 * benches (the others are then left out); `--profile`, `--tsx` and `--ref` only concern the wrap
 * bench.
 *
 * Then it combines their reports with the machine, the peers' versions and the commit into
 * bench/results/latest.json (and a dated copy beside it), and a run without options writes
 * bench/RESULTS.md and bench/chart.svg from it (`npm run bench:report` does that from a saved run).
 * `--node=PATH` runs every bench, and every process they start, on that Node binary (e.g.
 * node_modules/node24/bin/node): a full run on another Node than this script's is saved as
 * bench/results/latest-node<version>.json, and RESULTS.md lists its ratios beside the main run's.
 * Exits non-zero when a bench does (a wrong answer, never a timing).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { LATEST, latestOn, readOtherNodeRuns, readRun, updateReadme, writeReport } from './report.ts';
import type { Machine, Peer, Run } from './report/types.ts';
import { BENCH_NODE_FLAGS } from './wrap/procs.ts';

const USAGE = 'usage: npm run bench -- [--node=PATH] [--quick] [--filter=TEXT] [--profile] [--tsx] [--ref=GITREF]';
const given = process.argv.slice(2);
const nodeArg = given.find((a) => a.startsWith('--node='));
/** The options that shape what is measured (`--node` only says on which Node). */
const args = given.filter((a) => a !== nodeArg);
const wrapOnly = (a: string) => a === '--profile' || a === '--tsx' || a.startsWith('--ref=');
const known = (a: string) => a === '--quick' || a.startsWith('--filter=') || wrapOnly(a);
const unknown = args.filter((a) => !known(a));
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\n${USAGE}`);
  process.exit(2);
}
/** The Node every bench runs on (and every process it starts): this one, or `--node`'s binary. */
const nodeBinary = nodeArg ? resolve(nodeArg.slice('--node='.length)) : process.execPath;
let nodeVersion: string;
try {
  nodeVersion = execFileSync(nodeBinary, ['--version'], { encoding: 'utf8' }).trim();
} catch (e) {
  console.error(`--node: ${nodeBinary} does not run (${e instanceof Error ? e.message : String(e)})\n${USAGE}`);
  process.exit(2);
}
/** A run on another Node than the one running this script is kept beside the main run, not in its place. */
const otherNode = nodeBinary !== process.execPath && nodeVersion !== process.version;
const benchEnv = { ...process.env, PATH: `${dirname(nodeBinary)}${delimiter}${process.env['PATH'] ?? ''}` };
const quick = args.includes('--quick');
const filtered = args.some((a) => a.startsWith('--filter='));

const root = join(import.meta.dirname, '..');
const resultsDir = join(root, 'bench', 'results');

/** Each bench: its script, its Node flags, its arguments, the report it writes (the wrap bench's flags: see bench/wrap.ts). */
const BENCHES = [
  { key: 'translate', script: 'translate.ts', node: [], args: args.filter((a) => !wrapOnly(a)), report: 'translate.json', run: true },
  { key: 'wrap', script: 'wrap.ts', node: BENCH_NODE_FLAGS, args, report: 'wrap.json', run: true },
  { key: 'mrtr', script: 'mrtr.ts', node: [], args: quick ? ['--quick'] : [], report: 'mrtr.json', run: !filtered },
  { key: 'probe', script: 'probe.ts', node: [], args: quick ? ['--quick'] : [], report: 'probe.json', run: !filtered },
  { key: 'first', script: 'first.ts', node: [], args: quick ? ['--quick'] : [], report: 'first.json', run: !filtered },
  { key: 'fleet', script: 'fleet.ts', node: BENCH_NODE_FLAGS, args: quick ? ['--quick'] : [], report: 'fleet.json', run: !filtered },
  { key: 'front', script: 'front.ts', node: [], args: quick ? ['--quick'] : [], report: 'front.json', run: !filtered },
  { key: 'callers', script: 'callers.ts', node: BENCH_NODE_FLAGS, args: quick ? ['--quick'] : [], report: 'callers.json', run: !filtered },
  { key: 'tasks', script: 'tasks.ts', node: [], args: quick ? ['--quick'] : [], report: 'tasks.json', run: !filtered },
] as const;

const PEERS: ReadonlyArray<{ name: string; role: string }> = [
  {
    name: '@modelcontextprotocol/sdk',
    role: 'v1 SDK: every legacy server the benches run (echo and push servers, the conformance fixture whose tool runs as a task) and the legacy clients (direct calls, the connect baseline)',
  },
  { name: 'mcp-proxy', role: 'wrap and callers benches: the comparison front on its 2026-07-28 route' },
  {
    name: '@modelcontextprotocol/server-everything',
    role: 'probe bench: the legacy Streamable HTTP and HTTP+SSE servers; first-answer bench: a legacy stdio server; callers bench: the server behind every front',
  },
  { name: '@modelcontextprotocol/client', role: 'v2 SDK client: not driven by the benches (interop specs); for the record' },
  { name: '@modelcontextprotocol/server', role: 'v2 SDK server: not driven by the benches (interop specs); for the record' },
  {
    name: '@opentelemetry/sdk-trace-node',
    role: "wrap bench: the SDK in the traced fronts' processes (every request, and 10%); front bench: every request traced, against a stand-in",
  },
  {
    name: 'redis',
    role: "fleet and tasks benches: the replicas' Redis client (node-redis), and the fleet bench's MONITOR of their commands",
  },
  { name: 'typescript', role: 'compiles lib/ for the wrap, MRTR, first-answer, fleet and tasks benches' },
  { name: 'tsx', role: 'runs the benches (and lib/ for the translator and probe benches)' },
];

function versionOf(name: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

function osName(): string {
  try {
    const text = readFileSync('/etc/os-release', 'utf8');
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(text)?.[1];
    if (pretty) return pretty;
  } catch {
    /* not Linux, or no os-release */
  }
  return process.platform;
}

function machine(): Machine {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown CPU',
    cores: list.length,
    memoryBytes: totalmem(),
    os: osName(),
    kernel: release(),
    arch: process.arch,
    node: nodeVersion,
  };
}

function commit(): Run['commit'] {
  const git = (...a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    // The report files themselves do not make a checkout dirty.
    const dirty = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/RESULTS.md', ':!bench/chart.svg').length > 0;
    return { hash: git('rev-parse', 'HEAD'), dirty };
  } catch {
    return { hash: null, dirty: false };
  }
}

const started = Date.now();
const loadStart = loadavg();
mkdirSync(resultsDir, { recursive: true });
const exitCodes: Record<string, number> = {};
const parts: Record<string, unknown> = {};
for (const bench of BENCHES) {
  if (!bench.run) continue;
  const report = join(resultsDir, bench.report);
  // A bench that fails before writing its report must not leave an older one to be combined.
  rmSync(report, { force: true });
  if (Object.keys(exitCodes).length > 0) console.log('');
  const r = spawnSync(nodeBinary, [...bench.node, '--import', 'tsx', join(import.meta.dirname, bench.script), ...bench.args], {
    stdio: 'inherit',
    cwd: root,
    env: benchEnv,
  });
  exitCodes[bench.key] = r.status ?? 1;
  if (existsSync(report)) parts[bench.key] = JSON.parse(readFileSync(report, 'utf8'));
}

const run: Run = {
  schema: 1,
  generatedAt: new Date().toISOString(),
  args,
  quick,
  commit: commit(),
  machine: machine(),
  load: { start: loadStart, end: loadavg() },
  peers: PEERS.map((p): Peer => ({ name: p.name, version: versionOf(p.name), role: p.role })),
  exitCodes,
  elapsedSeconds: (Date.now() - started) / 1000,
  parts: parts as Run['parts'],
};
const saved = otherNode ? latestOn(nodeVersion) : LATEST;
writeFileSync(saved, `${JSON.stringify(run, null, 2)}\n`);
const dated = join(
  resultsDir,
  `run-${run.generatedAt.replace(/[:.]/g, '-')}${otherNode ? `-node${nodeVersion}` : ''}${quick ? '-quick' : ''}.json`,
);
copyFileSync(saved, dated);
console.log('');
console.log(`combined results written to ${relative(root, saved)} (a copy: ${relative(root, dated)})`);
if (args.length === 0 && otherNode) {
  // Beside the main run: RESULTS.md is written again from it, with this run's ratios next to its own.
  if (existsSync(LATEST)) {
    const main = readRun(LATEST);
    const written = writeReport(main, undefined, readOtherNodeRuns(main));
    console.log(
      `wrote ${relative(root, written.results)} from ${relative(root, LATEST)} (${main.machine.node}), with this run on ${nodeVersion} beside it`,
    );
  } else console.log(`no main run (${relative(root, LATEST)}) to put this one beside: run npm run bench first, then npm run bench:report`);
} else if (args.length === 0) {
  const written = writeReport(run, undefined, readOtherNodeRuns(run));
  const readme = updateReadme(join(root, 'docs/speed.md'), run);
  console.log(
    `wrote ${relative(root, written.results)} and ${relative(root, written.chart)}${readme ? ', and the speed table in docs/speed.md' : ''}`,
  );
} else {
  console.log(`a run with options leaves bench/RESULTS.md as it is; npm run bench:report writes it from this run`);
}
process.exitCode = Object.values(exitCodes).some((c) => c !== 0) ? 1 : 0;
