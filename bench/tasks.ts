/**
 * `npm run bench:tasks [-- --quick] [-- --redis=URL]` (also run by `npm run bench`): what polling a
 * task costs against a plain call. The legacy server is the conformance fixture
 * (fixtures/servers/conformanceServer.ts, v1 SDK), whose `slow_compute` runs as a 2025-11-25 core
 * task (written on the v1 SDK's tasks API) and stays `working` for as long as it is asked to, and
 * whose `greet` is a plain tool. A modern client that declares the tasks extension
 * (`io.modelcontextprotocol/tasks`) starts one task, and while it works:
 *
 * 1. one process: `tasks/get` of it against a plain `greet` call, in turn, through `wrapLegacyServer`
 *    served by Node's HTTP server (`serveNodeHttp`, as `serve` runs it), the fixture in the same
 *    process;
 * 2. forwarded: two replicas of `mcp-dual-era serve --fleet` (compiled, as installed) in front of the
 *    fixture over stdio, on the machine's Redis (127.0.0.1:6379, or MCP_DUAL_ERA_REDIS, or --redis):
 *    the task started on replica A; `tasks/get` sent to B (forwarded to A, which the task's id
 *    names) against a plain call to B, and against `tasks/get` sent to A itself.
 *
 * One request at a time, every answer checked (the task still `working`, the greeting right); the
 * order of the kinds rotates from round to round (bench/tasks/polls.ts). Ratios at p50 and p99 and
 * paired, side by side in the same run. Prints a table, writes bench/results/tasks.json; timings are
 * reported, never asserted: the exit status is non-zero only for a wrong answer or a failure. Without
 * a Redis to reach, the fleet part is left out and says so.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createConformanceServer } from '../fixtures/servers/conformanceServer.ts';
import { redactedUrl } from '../lib/fleet/fleetKeys.ts';
import { deleteKeys, fleetBenchArgs, redisVersion } from './fleet/redis.ts';
import { startServe, type Served } from './fleet/replicas.ts';
import { Wrong } from './mrtr/requests.ts';
import { loadLib } from './mrtr/scenario.ts';
import { buildLib, transpile } from './shared/build.ts';
import { banner } from './shared/format.ts';
import { benchRunInfo, finishBench } from './shared/results.ts';
import type { PollCell } from './tasks/polls.ts';
import { fleet, oneProcess } from './tasks/settings.ts';
import { summaryLines, type TasksResults } from './tasks/summary.ts';
import { endpoint } from './tasks/wire.ts';

const { quick, redisUrl } = fleetBenchArgs('usage: npm run bench:tasks -- [--quick] [--redis=URL]');
const counts = quick ? { warm: 50, rounds: 300 } : { warm: 300, rounds: 2000 };
/** As in the fleet bench: one upstream session for the bench's one caller in each replica. */
const SERVE_OPTIONS = ['--limit', 'sessions-per-caller=1'];
const SERVER =
  'the legacy conformance fixture (fixtures/servers/conformanceServer.ts, v1 SDK): `slow_compute` run as a 2025-11-25 core task (v1 SDK tasks API), `greet` for plain calls';

const started = performance.now();
const load = loadavg()[0]!;
console.log(banner('tasks bench'));
const cli = buildLib();
const lib = await loadLib(join(cli, '..', '..'), '.js');
console.log(
  `${quick ? 'quick: ' : ''}${counts.rounds} rounds after ${counts.warm} per setting; lib compiled (${((performance.now() - started) / 1000).toFixed(1)} s to build); load average ${load.toFixed(2)}`,
);

const wrong = new Wrong();
const failures: string[] = [];
let id = 0;
const nextId = () => ++id;

let one: PollCell | undefined;
process.stderr.write('  1. one process: tasks/get against a plain call…\n');
try {
  one = await oneProcess(lib, () => createConformanceServer(), endpoint, counts, nextId, wrong);
} catch (e) {
  failures.push(`one process: ${e instanceof Error ? e.message : String(e)}`);
}

let forwarded: PollCell | undefined;
let fleetSkipped: string | undefined;
const reached = await redisVersion(redisUrl);
if ('error' in reached) fleetSkipped = `no Redis at ${redactedUrl(redisUrl)} (${reached.error})`;
else {
  process.stderr.write('  2. two replicas: tasks/get forwarded, against a plain call and a local poll…\n');
  const server = transpile(join('fixtures', 'servers', 'conformanceStdio.ts'));
  const fleetName = `bench-${randomBytes(4).toString('hex')}`;
  const running: Served[] = [];
  const callers: Array<{ close(): void }> = [];
  try {
    const spec = { cli, pushServer: server, fleet: { redis: redisUrl, name: fleetName }, options: SERVE_OPTIONS };
    // A first (it agrees the fleet's keys in Redis), then B.
    const a = await startServe('replica A', spec);
    running.push(a);
    const b = await startServe('replica B', spec);
    running.push(b);
    const toA = endpoint(a.url);
    const toB = endpoint(b.url);
    callers.push(toA, toB);
    forwarded = await fleet(toA.send, toB.send, counts, nextId, wrong);
  } catch (e) {
    failures.push(`fleet: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    for (const c of callers) c.close();
    await Promise.all(running.map((s) => s.stop()));
    try {
      await deleteKeys(redisUrl, `mcp-dual-era:${fleetName}:`);
    } catch (e) {
      failures.push(`deleting the fleet's keys: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

finishBench<TasksResults>(
  'tasks.json',
  {
    ...benchRunInfo(quick, load, SERVER),
    serveOptions: SERVE_OPTIONS,
    ...(one ? { oneProcess: one } : {}),
    ...(fleetSkipped ? { fleetSkipped } : {}),
    ...('error' in reached ? {} : { redis: { url: redactedUrl(redisUrl), version: reached.version } }),
    ...(forwarded ? { fleet: forwarded } : {}),
  },
  { wrong, failures, started },
  summaryLines,
);
