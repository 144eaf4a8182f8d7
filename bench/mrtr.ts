/**
 * `npm run bench:mrtr [-- --quick] [-- --tsx] [-- --profile] [-- --lib=DIR] [-- --only=memory|latency]`
 * (also run by `npm run bench`): what MRTR suspend mode (lib/wrap/mrtr/) costs in the wrap.
 *
 * - Memory per parked call, against the goal: under 4 KB beyond the messages themselves. N calls
 *   (5,000; 500 with --quick) parked at once through the wrap (bench/mrtr/wrapMemory.ts), less the
 *   legacy servers and the messages measured alone in a process of their own
 *   (bench/mrtr/serverMemory.ts); the arithmetic is bench/mrtr/perParkedCall.ts's.
 * - Latency, against a plain call: a full round (`input_required`, then the retry) ÷ a plain `echo`,
 *   taken in turn through the same wrap and caller (bench/mrtr/latency.ts), through `serveModern`,
 *   `wrap.fetch`, Node's HTTP server and the stdio front in process, with the default `collectMs`
 *   (15 ms) and with 0; and through `serve --stdio` as users run it, the CLI and the push server
 *   each a process of their own.
 *
 * Each measurement runs in a fresh `node --expose-gc` (bench/mrtr/children.ts) on lib/ compiled by
 * the shared build step as `npm run build` does (tsx's esbuild transform wraps closures in
 * `__name(fn, "…")`, which gives each its own property storage and inflates per-call memory).
 * `--tsx` also measures memory under the tsx loader; `--lib=DIR` measures a compiled lib/ folder
 * instead (`dist`, an older build: either module layout); `--profile` writes heap snapshots of
 * 2,000 parked calls to bench/results/profiles/ and prints what each adds, by kind of object;
 * `--only` runs one part. Prints a table, writes bench/results/mrtr.json; timings are reported,
 * never asserted: the exit status is non-zero only for a wrong answer or a failed child.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { buildLib, gitCommit, transpile } from './shared/build.ts';
import { int, RESULTS_DIR, writeResults } from './shared/format.ts';
import { buildChild, child, type LibLocation, type Spawned } from './mrtr/children.ts';
import { heapDiff } from './mrtr/heapDiff.ts';
import type { LatencyResult } from './mrtr/latency.ts';
import type { ServerMemoryResult } from './mrtr/serverMemory.ts';
import { perCallSummary, summaryLines, wrongCount, type MrtrMeasured } from './mrtr/summary.ts';
import type { WrapMemoryResult } from './mrtr/wrapMemory.ts';

const GOAL_BEYOND_MESSAGES_BYTES = 4096;
const USAGE = 'usage: npm run bench:mrtr -- [--quick] [--tsx] [--profile] [--lib=DIR] [--only=memory|latency]';

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const unknown = args.filter(
  (a) => !['--quick', '--tsx', '--profile', '--only=memory', '--only=latency'].includes(a) && !a.startsWith('--lib='),
);
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\n${USAGE}`);
  process.exit(2);
}
const quick = args.includes('--quick');
const libOption = option('lib');
const only = option('only');
const n = quick ? 500 : 5_000;
// Generous: on a shared 2-core machine a child can take several times its quiet-machine time.
const timeoutMs = quick ? 240_000 : 900_000;
const root = resolve(import.meta.dirname, '..');
const profileDir = join(RESULTS_DIR, 'profiles');

const started = performance.now();
const load = loadavg()[0]!;
console.log(
  `MRTR bench (${quick ? 'quick' : 'full'}): ${int.format(n)} parked calls; node ${process.version}, ${cpus().length} CPUs, load average ${load.toFixed(2)}`,
);
const lib: LibLocation = libOption ? { dir: resolve(libOption), ext: '.js' } : { dir: join(buildLib(), '..', '..'), ext: '.js' };
buildChild();
const libLabel = libOption ? `compiled lib at ${relative(root, lib.dir) || '.'}` : 'lib/ compiled (tsc, tsconfig.build.json)';
console.log(`measuring ${libLabel}; built in ${((performance.now() - started) / 1000).toFixed(1)} s`);

const failures: string[] = [];
const take = <T>(s: Spawned<T> | undefined): T | undefined => {
  if (s && !s.ok) failures.push(s.error ?? 'a child failed');
  return s?.result;
};
const q = quick ? ['--quick'] : [];
const memory = only !== 'latency';
const none = Promise.resolve(undefined);
/** Parked-call memory through the wrap: under the tsx loader on lib/ itself, or with heap snapshots of 2,000 calls. */
const wrapRun = (transport: 'direct' | 'http', how: { tsx?: boolean; snapshot?: string } = {}) =>
  child<WrapMemoryResult>(
    [
      '--scenario=wrap-memory',
      `--n=${how.snapshot ? 2000 : n}`,
      `--transport=${transport}`,
      ...q,
      ...(how.snapshot ? [`--snapshot=${how.snapshot}`] : []),
    ],
    how.tsx ? { timeoutMs, tsx: true, lib: { dir: join(root, 'lib'), ext: '.ts' } } : { timeoutMs, lib },
  );
if (args.includes('--profile')) mkdirSync(profileDir, { recursive: true });
// Memory runs two children at a time (heap sizes do not depend on CPU contention); latency runs alone.
const [direct, server] = memory
  ? await Promise.all([wrapRun('direct'), child<ServerMemoryResult>(['--scenario=server-memory', `--n=${n}`, ...q], { timeoutMs, lib })])
  : [];
const [http, tsxRun] = await Promise.all([
  memory ? wrapRun('http') : none,
  memory && args.includes('--tsx') ? wrapRun('direct', { tsx: true }) : none,
]);
const profiled = memory && args.includes('--profile') ? await wrapRun('direct', { snapshot: join(profileDir, 'mrtr') }) : undefined;
// The cells through processes run the CLI of the lib measured (when it has one) and the push server as JavaScript.
const cli = join(lib.dir, 'cli', 'main.js');
const processes =
  lib.ext === '.js' && existsSync(cli)
    ? [`--cli=${cli}`, `--push-server=${transpile(join('fixtures', 'servers', 'pushServerStdio.ts'))}`]
    : [];
const lat = only !== 'memory' ? await child<LatencyResult>(['--scenario=latency', ...q, ...processes], { timeoutMs, lib }) : undefined;

const profileRun = take(profiled);
const measured: MrtrMeasured = {
  n,
  goalBytes: GOAL_BEYOND_MESSAGES_BYTES,
  direct: take(direct),
  server: take(server),
  http: take(http),
  tsx: take(tsxRun),
  latency: take(lat),
  profile: profileRun?.snapshots && {
    run: profileRun,
    top: heapDiff(profileRun.snapshots.baseline, profileRun.snapshots.parked, profileRun.n).slice(0, 40),
    dir: relative(root, profileDir),
  },
  failures,
};
const wrongTotal = wrongCount(measured);
console.log(
  [...summaryLines(measured), `wrong answers: ${wrongTotal}; ${((performance.now() - started) / 1000).toFixed(1)} s in all`].join('\n'),
);

const commit = gitCommit();
writeResults('mrtr.json', {
  date: new Date().toISOString(),
  quick,
  loadAverage: load,
  node: process.version,
  cpus: cpus().length,
  commit,
  lib: libLabel,
  n,
  goalBeyondMessagesBytes: GOAL_BEYOND_MESSAGES_BYTES,
  perParkedCall: perCallSummary(measured),
  memory: {
    direct: measured.direct,
    http: measured.http,
    tsx: measured.tsx,
    server: measured.server,
    profile: measured.profile && { ...measured.profile.run, top: measured.profile.top },
  },
  latency: measured.latency,
  wrongAnswers: wrongTotal,
  failures,
});
process.exit(wrongTotal > 0 || failures.length > 0 ? 1 : 0);
