/**
 * `npm run bench:first [-- --quick]` (also run by `npm run bench`): how long a stdio host waits
 * for its first answer, from the moment it starts the command to the first line it reads back.
 * A host that starts `connect` or `serve --stdio` sends its first request at once; a modern-first
 * one (the AI SDK) gives `server/discover` one second before it falls back to `initialize`. Per
 * server, measured side by side in the same rounds (the order rotating every round):
 *
 *   - baseline: the legacy server alone, started by the host and sent `initialize` (what a legacy
 *     host waits for directly; the server's own start is most of it);
 *   - `mcp-dual-era connect -- <server>`, a modern host's `server/discover`;
 *   - `mcp-dual-era serve --stdio -- <server>`, a modern host's `server/discover`.
 *
 * Servers: server-everything 2026.8.31 (a real one, heavy to start) and the v1 echo server of the
 * wrap bench (light). The command runs compiled (bench/shared/build.ts), as an installed copy does.
 * Every answer is checked; the exit status is non-zero only for a wrong one. Writes
 * bench/results/first.json.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { MetaKey } from '../lib/core/era.ts';
import { buildEchoServer, buildLib } from './shared/build.ts';
import { banner, environment, writeResults } from './shared/format.ts';
import { latencyStats as statsOf, type LatencyStats } from './shared/stats.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const unknown = args.filter((a) => a !== '--quick');
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run bench:first -- [--quick]`);
  process.exit(2);
}

const plan = quick ? { rounds: 4, warmRounds: 1 } : { rounds: 30, warmRounds: 3 };
/** The goal: the first answer within this long of the host starting us, at the median. */
const GOAL_MS = 500;
/** What the AI SDK gives `server/discover` over stdio before it falls back to `initialize`. */
const AI_SDK_DISCOVERY_MS = 1000;
const OP_TIMEOUT_MS = 15_000;

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

class Wrong extends Error {}

const META = {
  [MetaKey.protocolVersion]: '2026-07-28',
  [MetaKey.clientInfo]: { name: 'first-answer-bench', version: '1.0.0' },
  [MetaKey.clientCapabilities]: {},
};
const DISCOVER = { jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: META } };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'first-answer-bench', version: '1.0.0' } },
};

/**
 * Starts `command`, writes `first` as soon as the process exists (as hosts do), and resolves with
 * the milliseconds until the first line on its stdout, checked by `check`. The process is stopped
 * and waited for afterwards, untimed.
 */
function firstAnswer(
  command: readonly string[],
  first: unknown,
  check: (answer: Record<string, unknown>) => string | undefined,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
    let text = '';
    let settled = false;
    const timer = setTimeout(() => finish(new Error(`no answer within ${OP_TIMEOUT_MS} ms`)), OP_TIMEOUT_MS);
    const finish = (outcome: number | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin.end();
      child.kill('SIGTERM');
      const done = () => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
      if (child.exitCode !== null || child.signalCode !== null) done();
      else child.once('exit', done);
    };
    child.once('spawn', () => child.stdin.write(`${JSON.stringify(first)}\n`));
    child.once('error', (e) => finish(e));
    child.once('exit', () => finish(new Wrong(`exited before answering: ${text.slice(0, 200)}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      text += chunk;
      const nl = text.indexOf('\n');
      if (nl === -1) return;
      const ms = performance.now() - t0;
      let answer: Record<string, unknown>;
      try {
        answer = JSON.parse(text.slice(0, nl)) as Record<string, unknown>;
      } catch {
        return finish(new Wrong(`not JSON: ${text.slice(0, 200)}`));
      }
      const problem = check(answer);
      finish(problem ? new Wrong(problem) : ms);
    });
  });
}

const initializeProblem = (a: Record<string, unknown>) =>
  a['id'] === 0 && typeof (a['result'] as { protocolVersion?: unknown } | undefined)?.protocolVersion === 'string'
    ? undefined
    : `not an initialize result: ${JSON.stringify(a).slice(0, 200)}`;
const discoverProblem = (a: Record<string, unknown>) => {
  const r = a['result'] as { supportedVersions?: unknown; resultType?: unknown } | undefined;
  return a['id'] === 0 && Array.isArray(r?.supportedVersions) && r.supportedVersions.includes('2026-07-28') && r.resultType === 'complete'
    ? undefined
    : `not a DiscoverResult: ${JSON.stringify(a).slice(0, 200)}`;
};

export interface FirstRow {
  readonly key: string;
  readonly label: string;
  readonly stats: LatencyStats;
  /** p50 ÷ the baseline's p50. */
  readonly ratioP50: number;
  /** p50 − the baseline's p50: what we add to the server's own start. */
  readonly addedP50Ms: number;
  /** Runs within the AI SDK's discovery wait. */
  readonly withinDiscovery: number;
}

export interface FirstTarget {
  readonly key: string;
  readonly label: string;
  readonly rows: FirstRow[];
  readonly errors: number;
  readonly errorSamples: string[];
}

const cli = buildLib();
const echo = buildEchoServer();
const servers: Array<{ key: string; label: string; command: string[] }> = [
  { key: 'everything', label: 'server-everything 2026.8.31', command: [process.execPath, EVERYTHING, 'stdio'] },
  { key: 'echo', label: 'v1 echo server (bench/servers/echoServer.ts)', command: [process.execPath, echo] },
];

async function runTarget(server: (typeof servers)[number]): Promise<FirstTarget> {
  const ops = [
    { key: 'alone', label: 'the server alone: initialize', run: () => firstAnswer(server.command, INITIALIZE, initializeProblem) },
    {
      key: 'connect',
      label: 'connect: server/discover',
      run: () => firstAnswer([process.execPath, cli, 'connect', '--quiet', '--', ...server.command], DISCOVER, discoverProblem),
    },
    {
      key: 'serve-stdio',
      label: 'serve --stdio: server/discover',
      run: () => firstAnswer([process.execPath, cli, 'serve', '--stdio', '--quiet', '--', ...server.command], DISCOVER, discoverProblem),
    },
  ];
  const samples = new Map(ops.map((o) => [o.key, [] as number[]]));
  const errorSamples: string[] = [];
  let errors = 0;
  const total = plan.warmRounds + plan.rounds;
  for (let round = 0; round < total; round++) {
    const shift = round % ops.length;
    for (const op of [...ops.slice(shift), ...ops.slice(0, shift)]) {
      try {
        const ms = await op.run();
        if (round >= plan.warmRounds) samples.get(op.key)!.push(ms);
      } catch (e) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(`${op.label}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  const base = statsOf(samples.get('alone')!);
  const rows = ops.map((o): FirstRow => {
    const all = samples.get(o.key)!;
    const stats = statsOf(all);
    return {
      key: o.key,
      label: o.label,
      stats,
      ratioP50: stats.p50Ms / base.p50Ms,
      addedP50Ms: stats.p50Ms - base.p50Ms,
      withinDiscovery: all.filter((ms) => ms < AI_SDK_DISCOVERY_MS).length,
    };
  });
  return { key: server.key, label: server.label, rows, errors, errorSamples };
}

console.log(banner('first-answer bench'));
console.log(
  `${quick ? 'quick: ' : ''}${plan.rounds} rounds after ${plan.warmRounds} unmeasured, each starting every contender once (the order rotating); the command compiled`,
);
const startedAt = Date.now();
const targets: FirstTarget[] = [];
const failures: string[] = [];
for (const server of servers) {
  process.stderr.write(`  ${server.label}: ${plan.warmRounds + plan.rounds} rounds…\n`);
  const t = await runTarget(server);
  targets.push(t);
  if (t.errors > 0) failures.push(`${server.label}: ${t.errors} wrong or missing answer(s): ${t.errorSamples.join(' | ')}`);
}

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '-');
console.log('');
for (const t of targets) {
  for (const r of t.rows) {
    const goal = r.key === 'alone' ? '' : ` ${r.stats.p50Ms <= GOAL_MS ? '✓' : '✗'} (goal p50 ≤ ${GOAL_MS} ms)`;
    console.log(
      `${t.label.padEnd(46)} ${r.label.padEnd(32)} p50 ${ms(r.stats.p50Ms).padStart(5)} ms  p99 ${ms(r.stats.p99Ms).padStart(5)} ms  ${r.ratioP50.toFixed(2)}× alone  +${ms(r.addedP50Ms)} ms  ${r.withinDiscovery}/${r.stats.n} within ${AI_SDK_DISCOVERY_MS} ms${goal}`,
    );
  }
}
for (const f of failures) console.error(`FAIL ${f}`);
const elapsedSeconds = (Date.now() - startedAt) / 1000;
writeResults('first.json', {
  generatedAt: new Date().toISOString(),
  environment: environment(),
  options: { ...plan, quick },
  goal: { p50Ms: GOAL_MS, aiSdkDiscoveryMs: AI_SDK_DISCOVERY_MS },
  targets,
  failures,
  elapsedSeconds,
});
if (failures.length > 0) process.exitCode = 1;
