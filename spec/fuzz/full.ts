/**
 * `npm run fuzz`: the full fuzz run, at least 100,000 cases over every target (spec/fuzz/plan.ts),
 * each target's count and time printed; on a failure, the counterexample and the seed to replay it.
 */
import { FULL, planFromEnv, runPlan } from './plan.ts';

const started = performance.now();
const outcome = await runPlan(planFromEnv(FULL), (line) => process.stdout.write(`${line}\n`));
const cases = outcome.reports.reduce((n, r) => n + r.cases, 0);
process.stdout.write(`${cases} cases in ${((performance.now() - started) / 1000).toFixed(1)} s, seed ${outcome.seed}\n`);
if (outcome.failures.length > 0) {
  process.stdout.write(`\n${outcome.failures.join('\n\n')}\n`);
  process.exitCode = 1;
}
