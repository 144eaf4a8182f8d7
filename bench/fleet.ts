/**
 * `npm run bench` runs it (alone: `npx tsx bench/fleet.ts [--quick] [--redis=URL]`): what being a
 * replica of a fleet costs. Two replicas of the real command, `mcp-dual-era serve --fleet <redis>
 * --fleet-name bench-<random>` (compiled by the shared build step, as installed), and one `serve`
 * without `--fleet`, each in front of the legacy push server (fixtures/servers/pushServer.ts over
 * stdio), on loopback, on the machine's Redis (127.0.0.1:6379, or MCP_DUAL_ERA_REDIS, or --redis):
 *
 * 1. a retry forwarded to the replica that parked its call against one resumed there: the first
 *    round to replica A, the retry to A or to B, alternating (bench/fleet/retry.ts); goal: at most
 *    1 ms added at p50;
 * 2. plain-call throughput of a replica against the lone `serve`, 16 calls in flight, alternating
 *    rounds (bench/fleet/throughput.ts); goal: at least 0.97×;
 * 3. Redis commands per plain call (goal 0) and per forwarded retry (expected: one GET), counted
 *    with MONITOR on the replicas' own connections, the heartbeat apart (bench/fleet/commands.ts).
 *
 * The fleet's keys (`mcp-dual-era:bench-<random>:`) are deleted at the end. Prints a table, writes
 * bench/results/fleet.json; timings are reported, never asserted: the exit status is non-zero only
 * for a wrong answer or a failure (a process that did not start). Without a Redis to reach it
 * measures nothing and says so (exit 0).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { redactedUrl } from '../lib/fleet/fleetKeys.ts';
import { buildLib, transpile } from './shared/build.ts';
import { banner, writeResults } from './shared/format.ts';
import { benchRunInfo, finishBench } from './shared/results.ts';
import { Wrong } from './mrtr/requests.ts';
import { endpointCaller } from './fleet/calls.ts';
import { countCommands, type CommandsPlan, type CommandsResult } from './fleet/commands.ts';
import { deleteKeys, fleetBenchArgs, redisVersion } from './fleet/redis.ts';
import { startBareHop, startServe, type Served } from './fleet/replicas.ts';
import { childPids } from './wrap/procs.ts';
import { forwardedRetry, type RetryResult } from './fleet/retry.ts';
import { FLEET_GOALS, summaryLines, type FleetResults } from './fleet/summary.ts';
import { plainThroughput, type ThroughputPlan, type ThroughputResult } from './fleet/throughput.ts';

const { quick, redisUrl } = fleetBenchArgs('usage: npx tsx bench/fleet.ts [--quick] [--redis=URL]');

const plan: { retry: { warm: number; pairs: number }; throughput: ThroughputPlan; commands: CommandsPlan } = quick
  ? {
      retry: { warm: 10, pairs: 60 },
      throughput: { concurrency: 16, rounds: 2, roundMs: 1000, leadInMs: 200, warmupMs: 1000 },
      commands: { idleMs: 1500, plainCalls: 300, concurrency: 16, pairs: 20 },
    }
  : {
      retry: { warm: 60, pairs: 600 },
      throughput: { concurrency: 16, rounds: 6, roundMs: 3000, leadInMs: 300, warmupMs: 3000 },
      commands: { idleMs: 3000, plainCalls: 2000, concurrency: 16, pairs: 100 },
    };

/**
 * Every `serve` of the bench keeps one upstream session for its caller: left to itself, a front
 * opens as many as the first concurrent calls happen to race for, and how many server processes
 * share the two cores moves throughput far more than the front does.
 */
const SERVE_OPTIONS = ['--limit', 'sessions-per-caller=1'];
const SERVER =
  'the legacy push server (fixtures/servers/pushServer.ts, v1 SDK, stdio): `echo` for plain calls, `ask_name` (an elicitation) for rounds';

const started = performance.now();
const load = loadavg()[0]!;
console.log(banner('fleet bench'));
const base = {
  ...benchRunInfo(quick, load, SERVER),
  serveOptions: SERVE_OPTIONS,
  goals: FLEET_GOALS,
};

const reached = await redisVersion(redisUrl);
if ('error' in reached) {
  const results: FleetResults = {
    ...base,
    skipped: `no Redis at ${redactedUrl(redisUrl)} (${reached.error})`,
    wrongAnswers: 0,
    wrongSamples: [],
    failures: [],
    elapsedSeconds: (performance.now() - started) / 1000,
  };
  console.log(summaryLines(results).join('\n'));
  writeResults('fleet.json', results);
  process.exit(0);
}

const fleetName = `bench-${randomBytes(4).toString('hex')}`;
const prefix = `mcp-dual-era:${fleetName}:`;
const cli = buildLib();
const pushServer = transpile(join('fixtures', 'servers', 'pushServerStdio.ts'));
console.log(
  `${quick ? 'quick: ' : ''}fleet ${fleetName} on Redis ${reached.version} at ${redactedUrl(redisUrl)}; serve compiled (${((performance.now() - started) / 1000).toFixed(1)} s to build); load average ${load.toFixed(2)}`,
);

const wrong = new Wrong();
const failures: string[] = [];
const running: Served[] = [];
let retry: RetryResult | undefined;
let throughput: ThroughputResult | undefined;
let commands: CommandsResult | undefined;
let id = 0;
const nextId = () => ++id;
const callers: Array<{ close(): void }> = [];
try {
  const fleet = { redis: redisUrl, name: fleetName };
  // A first (it agrees the fleet's keys in Redis), then B and the lone serve.
  const a = await startServe('replica A', { cli, pushServer, fleet, options: SERVE_OPTIONS });
  running.push(a);
  const others = await Promise.allSettled([
    startServe('replica B', { cli, pushServer, fleet, options: SERVE_OPTIONS }),
    startServe('serve alone', { cli, pushServer, options: SERVE_OPTIONS }),
  ]);
  for (const o of others) if (o.status === 'fulfilled') running.push(o.value);
  const [b, alone] = others.map((o) => {
    if (o.status === 'rejected') throw o.reason;
    return o.value;
  }) as [Served, Served];
  console.log(`replica A ${a.replica} at ${a.url.origin}, replica B ${b.replica} at ${b.url.origin}, serve alone at ${alone.url.origin}`);
  const toA = endpointCaller(a.url);
  const toB = endpointCaller(b.url);
  const hop = await startBareHop(a.url);
  running.push({ label: 'bare hop', url: hop.url, replica: undefined, proc: hop.proc, stop: hop.stop });
  const toHop = endpointCaller(hop.url);
  callers.push(toA, toB, toHop);

  process.stderr.write(`  1. forwarded against local retries: ${plan.retry.warm + plan.retry.pairs} pairs of rounds…\n`);
  retry = await forwardedRetry(
    { call: toA.call, pid: a.proc.pid },
    { call: toB.call, pid: b.proc.pid },
    plan.retry,
    nextId,
    wrong,
    toHop.call,
  );
  process.stderr.write(`  2. plain-call throughput: ${plan.throughput.rounds} rounds of ${plan.throughput.roundMs} ms per side…\n`);
  const front = (s: Served) => ({ url: s.url, processes: () => childPids(s.proc.pid).length });
  throughput = await plainThroughput(front(a), front(alone), plan.throughput, wrong);
  process.stderr.write(
    `  3. Redis commands: ${plan.commands.plainCalls} plain calls, ${plan.commands.pairs} local and ${plan.commands.pairs} forwarded rounds…\n`,
  );
  const replicas = [
    { label: 'A', id: a.replica!, pid: a.proc.pid },
    { label: 'B', id: b.replica!, pid: b.proc.pid },
  ];
  commands = await countCommands(redisUrl, prefix, replicas, { a: toA.call, b: toB.call, aUrl: a.url }, plan.commands, nextId, wrong);
  for (const r of replicas) {
    const beats = commands.heartbeat.byCommand[`${r.label}: SET replica:${r.label}`] ?? 0;
    if (beats === 0)
      failures.push(
        `no heartbeat of replica ${r.label} seen on the connections found for it (${commands.connections[r.label]?.join(', ') || 'none'}): its commands were not counted`,
      );
  }
} catch (e) {
  failures.push(e instanceof Error ? e.message : String(e));
} finally {
  for (const c of callers) c.close();
  await Promise.all(running.map((s) => s.stop()));
  try {
    await deleteKeys(redisUrl, prefix);
  } catch (e) {
    failures.push(`deleting the fleet's keys: ${e instanceof Error ? e.message : String(e)}`);
  }
}

finishBench<FleetResults>(
  'fleet.json',
  {
    ...base,
    redis: { url: redactedUrl(redisUrl), version: reached.version },
    fleetName,
    ...(retry ? { retry } : {}),
    ...(throughput ? { throughput } : {}),
    ...(commands ? { commands } : {}),
  },
  { wrong, failures, started },
  summaryLines,
);
