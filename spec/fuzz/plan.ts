/**
 * The fuzz targets and how many cases each gets: a short plan for `npm test` and the full one for
 * `npm run fuzz` (at least 100,000 cases). A case is one input to one target: a translator call,
 * one HTTP request, one stdio line, one message into the bridge. `FUZZ_RUNS` scales a plan to about that many cases in all,
 * `FUZZ_SEED` fixes the seed, `FUZZ_TARGET` runs one target (with `FUZZ_PATH`, replays a failure).
 */
import { createBridgeFixture, fuzzBridge, type BridgeFixture } from './bridge.ts';
import { createHttpFixture, finalChecks, fuzzHttpFront, type HttpFixture } from './httpFront.ts';
import { seedFromEnv, trapProcessErrors, type FuzzReport } from './runner.ts';
import { fuzzStdioFront } from './stdioFront.ts';
import { fuzzTranslators } from './translators.ts';

export type TargetName = 'translators' | 'http-fetch' | 'http-node' | 'stdio' | 'bridge';

/**
 * Property runs per target (an HTTP run sends one to three requests; a stdio run writes one to
 * eight lines; a bridge run is a legacy session of two to seven messages).
 */
export type Plan = Readonly<Record<TargetName, number>>;

export const SHORT: Plan = { translators: 4000, 'http-fetch': 1500, 'http-node': 100, stdio: 250, bridge: 200 };
export const FULL: Plan = { translators: 60_000, 'http-fetch': 15_000, 'http-node': 1_500, stdio: 2_500, bridge: 4_000 };

/** About how many cases one run of each target is. */
const CASES_PER_RUN: Plan = { translators: 1, 'http-fetch': 2, 'http-node': 2, stdio: 4.5, bridge: 4.5 };

/** The plan scaled to `FUZZ_RUNS` cases in all, when it is set. */
export function planFromEnv(base: Plan): Plan {
  const wanted = Number(process.env['FUZZ_RUNS'] ?? NaN);
  if (!Number.isFinite(wanted) || wanted <= 0) return base;
  const total = (Object.keys(base) as TargetName[]).reduce((n, t) => n + base[t] * CASES_PER_RUN[t], 0);
  const scale = wanted / total;
  return Object.fromEntries(
    (Object.keys(base) as TargetName[]).map((t) => [t, Math.max(1, Math.round(base[t] * scale))]),
  ) as unknown as Plan;
}

export interface FuzzOutcome {
  readonly seed: number;
  readonly reports: FuzzReport[];
  /** Failures: a property's counterexample, an unhandled rejection, what the run left behind. */
  readonly failures: string[];
}

/** Runs a plan; never throws (failures are reported). */
export async function runPlan(plan: Plan, log: (line: string) => void = () => {}): Promise<FuzzOutcome> {
  const seed = seedFromEnv();
  const only = process.env['FUZZ_TARGET'] as TargetName | undefined;
  const path = process.env['FUZZ_PATH'];
  const reports: FuzzReport[] = [];
  const failures: string[] = [];
  const trap = trapProcessErrors();
  const fixtures: Partial<Record<'fetch' | 'node', HttpFixture>> = {};
  const fixture = async (front: 'fetch' | 'node') => (fixtures[front] ??= await createHttpFixture({ front }));
  let bridged: BridgeFixture | undefined;
  const targets: Record<TargetName, (runs: number) => Promise<number>> = {
    translators: (runs) => fuzzTranslators({ runs, seed, ...(path ? { path } : {}) }),
    'http-fetch': async (runs) => fuzzHttpFront(await fixture('fetch'), { runs, seed, front: 'fetch', ...(path ? { path } : {}) }),
    'http-node': async (runs) => fuzzHttpFront(await fixture('node'), { runs, seed, front: 'node', ...(path ? { path } : {}) }),
    stdio: async (runs) => fuzzStdioFront(await fixture('fetch'), { runs, seed, ...(path ? { path } : {}) }),
    bridge: async (runs) => fuzzBridge((bridged ??= await createBridgeFixture()), { runs, seed, ...(path ? { path } : {}) }),
  };
  try {
    for (const target of Object.keys(plan) as TargetName[]) {
      if (only && target !== only) continue;
      const started = performance.now();
      try {
        const cases = await targets[target](plan[target]);
        const report = { target, cases, ms: Math.round(performance.now() - started) };
        reports.push(report);
        log(`${target}: ${cases} cases in ${(report.ms / 1000).toFixed(1)} s`);
      } catch (e) {
        failures.push(e instanceof Error ? e.message : String(e));
      }
    }
    // The run leaves the wraps usable: the call parked through it resumes, an ordinary call works.
    for (const f of Object.values(fixtures)) failures.push(...(await finalChecks(f)).map((p) => `after the run: ${p}`));
  } finally {
    for (const f of Object.values(fixtures)) await f.close();
    await bridged?.close();
    trap.release();
  }
  failures.push(...trap.fired);
  if (failures.length > 0) failures.push(`seed ${seed} (replay with FUZZ_SEED=${seed})`);
  return { seed, reports, failures };
}
