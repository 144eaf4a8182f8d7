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
 * The targets and their operations: bench/probe/suites.ts; the rounds: bench/probe/runSuite.ts.
 */
import { runSuite, type TargetResult } from './probe/runSuite.ts';
import { sseSuite, stdioSuite, streamableSuite, type Suite } from './probe/suites.ts';
import { buildEchoServer } from './shared/build.ts';
import { banner, consoleTable, environment, formatRatio, ms, writeResults } from './shared/format.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const unknown = args.filter((a) => a !== '--quick');
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run bench:probe -- [--quick]`);
  process.exit(2);
}

/** Rounds per target (each runs every timed operation once), unmeasured warm-up rounds, cached probes per round. */
const plan = quick
  ? { stdioRounds: 6, httpRounds: 30, warmRounds: 2, cachedPerRound: 50 }
  : { stdioRounds: 60, httpRounds: 300, warmRounds: 5, cachedPerRound: 100 };

function table(results: readonly TargetResult[]): string {
  const head = ['target', 'operation', 'n', 'p50 ms', 'p99 ms', '÷ connect p50', 'p99', 'paired'];
  const body = results.flatMap((t) =>
    t.rows.map((r) => [
      t.label,
      r.label,
      String(r.stats.n),
      ms(r.stats.p50Ms),
      ms(r.stats.p99Ms),
      formatRatio(r.ratioP50),
      formatRatio(r.ratioP99),
      formatRatio(r.pairedRatio),
    ]),
  );
  return consoleTable(head, body, { left: 2, groupBy: 0 });
}

console.log(banner('probe bench'));
console.log(
  `${quick ? 'quick: ' : ''}${plan.stdioRounds} rounds on stdio and ${plan.httpRounds} over HTTP after ${plan.warmRounds} unmeasured, each running the baseline and every fresh probe once ` +
    `(the order rotating), then ${plan.cachedPerRound} cached probes; lib/ through the tsx loader; the servers run as their own processes on this machine`,
);
console.log('');

const startedAt = Date.now();
const failures: string[] = [];
const results: TargetResult[] = [];
const makers: Array<[string, () => Promise<Suite>]> = [
  ['stdio', async () => stdioSuite(buildEchoServer(), plan.stdioRounds)],
  ['Streamable HTTP', () => streamableSuite(plan.httpRounds)],
  ['HTTP+SSE', () => sseSuite(plan.httpRounds)],
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
    const result = await runSuite(suite, plan);
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

console.log(table(results));
const elapsedS = (Date.now() - startedAt) / 1000;
console.log('');
console.log(
  `(${elapsedS.toFixed(1)} s; ÷ connect = this operation's p50 (p99) over the baseline's, measured in the same rounds; paired = median over the rounds of the per-round ratio)`,
);

const report = {
  generatedAt: new Date().toISOString(),
  environment: environment(),
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
