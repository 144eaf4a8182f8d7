/**
 * One probe-bench target's rounds: the warm-up, then every round running the baseline and each
 * fresh probe once (the order rotating), then cached probes from a filled verdict cache; each
 * operation's latency and its ratio to the baseline, at p50, p99 and paired by round.
 */
import { probe, VerdictCache } from '../../lib/client.ts';
import { latencyStats as statsOf, pairedRatio, type LatencyStats as Stats } from '../shared/stats.ts';
import { expectVerdict, type Suite } from './suites.ts';

export type { LatencyStats as Stats } from '../shared/stats.ts';

const now = () => performance.now();

export interface Row {
  readonly key: string;
  readonly label: string;
  readonly stats: Stats;
  /** p50 ÷ the baseline's p50, and likewise p99. */
  readonly ratioP50: number;
  readonly ratioP99: number;
  /** Median over the rounds of (this round's time ÷ the baseline's time in the same round; cached: its median). */
  readonly pairedRatio: number;
}

export interface TargetResult {
  readonly key: Suite['key'];
  readonly label: string;
  readonly server: string;
  readonly rounds: number;
  readonly rows: Row[];
  readonly errors: number;
  readonly errorSamples: string[];
}

/** A single operation that takes longer than this is a failure (a hang), not a sample. */
const OP_TIMEOUT_MS = 30_000;

function withTimeout<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no result within ${OP_TIMEOUT_MS} ms`)), OP_TIMEOUT_MS)),
    ),
  ]).finally(() => clearTimeout(timer));
}

/** How many rounds go unmeasured first, and how many cached probes each round takes. */
export interface RoundPlan {
  readonly warmRounds: number;
  readonly cachedPerRound: number;
}

/** Runs `suite`'s rounds (the order rotating every round), then its cached probes, and sums them up. */
export async function runSuite(suite: Suite, plan: RoundPlan): Promise<TargetResult> {
  const ops = [suite.baseline, ...suite.candidates];
  const samples = new Map<string, number[]>(ops.map((o) => [o.key, []]));
  const cachedSamples: number[] = [];
  /** Per measured round: each op's time (NaN when it failed), and the median cached probe. */
  const perRound: Array<Map<string, number>> = [];
  const errorSamples: string[] = [];
  let errors = 0;
  const fail = (what: string, e: unknown) => {
    errors++;
    if (errorSamples.length < 5) errorSamples.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  };

  const cache = new VerdictCache();
  try {
    expectVerdict(await withTimeout('filling the verdict cache', probe(suite.target, { cache })), 'probe', suite.http);
  } catch (e) {
    fail('filling the verdict cache', e);
  }

  const total = plan.warmRounds + suite.rounds;
  for (let round = 0; round < total; round++) {
    const measured = round >= plan.warmRounds;
    const shift = round % ops.length;
    const order = [...ops.slice(shift), ...ops.slice(0, shift)];
    const times = new Map<string, number>();
    for (const op of order) {
      try {
        const ms = await withTimeout(op.label, op.run());
        times.set(op.key, ms);
        if (measured) samples.get(op.key)!.push(ms);
      } catch (e) {
        times.set(op.key, NaN);
        fail(op.label, e);
      }
    }
    const cachedRound: number[] = [];
    for (let i = 0; i < plan.cachedPerRound; i++) {
      try {
        const t0 = now();
        const r = await probe(suite.target, { cache });
        const ms = now() - t0;
        expectVerdict(r, 'cache', suite.http);
        cachedRound.push(ms);
      } catch (e) {
        fail('cached probe', e);
      }
    }
    if (measured) {
      for (const ms of cachedRound) cachedSamples.push(ms);
      times.set('cached', statsOf(cachedRound).p50Ms);
      perRound.push(times);
    }
    if ((round + 1) % Math.ceil(total / 5) === 0) process.stderr.write(`  ${suite.label}: ${round + 1} of ${total} rounds\n`);
  }

  const base = statsOf(samples.get(suite.baseline.key)!);
  const paired = (key: string) =>
    pairedRatio(
      perRound.map((t) => t.get(key)!),
      perRound.map((t) => t.get(suite.baseline.key)!),
    );
  const row = (key: string, label: string, stats: Stats): Row => ({
    key,
    label,
    stats,
    ratioP50: stats.p50Ms / base.p50Ms,
    ratioP99: stats.p99Ms / base.p99Ms,
    pairedRatio: key === suite.baseline.key ? 1 : paired(key),
  });
  const rows: Row[] = [
    row(suite.baseline.key, suite.baseline.label, base),
    ...suite.candidates.map((c) => row(c.key, c.label, statsOf(samples.get(c.key)!))),
    row('cached', 'probe, cached (verdict cache hit: no process, no request)', statsOf(cachedSamples)),
  ];
  return { key: suite.key, label: suite.label, server: suite.server, rounds: suite.rounds, rows, errors, errorSamples };
}
