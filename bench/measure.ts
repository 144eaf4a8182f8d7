/**
 * The timing harness: warm-up, an adaptive iteration count per side, then several samples of the
 * baseline and the candidate, alternating (and swapping which goes first) so both see the same
 * machine state. Reports the median ns per operation of each side. Not the statistics themselves
 * (bench/shared/stats.ts, whose latency figures this module also hands on).
 */
import { median } from './shared/stats.ts';

export { latencyStats, type LatencyStats } from './shared/stats.ts';

export interface MeasureOptions {
  /** Minimum wall time of one sample, in milliseconds. */
  readonly sampleMs: number;
  /** Samples per side (≥ 5). */
  readonly samples: number;
  /** Warm-up time per side before calibrating, in milliseconds. */
  readonly warmupMs: number;
}

export interface SideStats {
  /** Median ns per operation over the samples. */
  readonly medianNs: number;
  readonly minNs: number;
  readonly maxNs: number;
  /** Each sample's ns per operation, in the order taken. */
  readonly samplesNs: readonly number[];
  /** Operations per sample. */
  readonly iterations: number;
}

export interface Measurement {
  readonly baseline: SideStats;
  readonly candidate: SideStats;
  /** candidate median / baseline median. */
  readonly ratio: number;
  /** Median of the per-pair ratios (a cross-check that is less sensitive to drift). */
  readonly pairedRatio: number;
}

/** One operation; it returns something so the work cannot be optimised away. */
export type Operation = () => unknown;

/** The last operation's result, kept where the optimiser cannot prove it unused. */
export let sink: unknown;

function runBatch(op: Operation, iterations: number): number {
  const start = process.hrtime.bigint();
  let last: unknown;
  for (let i = 0; i < iterations; i++) last = op();
  const elapsed = Number(process.hrtime.bigint() - start);
  sink = last;
  return elapsed;
}

function warmUp(op: Operation, ms: number): void {
  const until = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
  let n = 1;
  while (process.hrtime.bigint() < until) {
    runBatch(op, n);
    if (n < 1 << 20) n *= 2;
  }
}

/** The iteration count that makes one batch last about `ms`. */
function calibrate(op: Operation, ms: number): number {
  const probeNs = Math.min(20, ms / 4) * 1e6;
  let n = 1;
  for (;;) {
    const t = runBatch(op, n);
    if (t >= probeNs || n >= 1 << 30) return Math.max(1, Math.ceil((n * ms * 1e6) / Math.max(t, 1)));
    n = t > 0 ? Math.min(n * 16, Math.max(n * 2, Math.ceil((n * probeNs * 1.2) / t))) : n * 16;
  }
}

function stats(samplesNs: number[], iterations: number): SideStats {
  return { medianNs: median(samplesNs), minNs: Math.min(...samplesNs), maxNs: Math.max(...samplesNs), samplesNs, iterations };
}

/** Measures `candidate` against `baseline`. */
export function measure(baseline: Operation, candidate: Operation, options: MeasureOptions): Measurement {
  warmUp(baseline, options.warmupMs);
  warmUp(candidate, options.warmupMs);
  const nBase = calibrate(baseline, options.sampleMs);
  const nCand = calibrate(candidate, options.sampleMs);
  const base: number[] = [];
  const cand: number[] = [];
  for (let i = 0; i < options.samples; i++) {
    if (i % 2 === 0) {
      base.push(runBatch(baseline, nBase) / nBase);
      cand.push(runBatch(candidate, nCand) / nCand);
    } else {
      cand.push(runBatch(candidate, nCand) / nCand);
      base.push(runBatch(baseline, nBase) / nBase);
    }
  }
  const baselineStats = stats(base, nBase);
  const candidateStats = stats(cand, nCand);
  return {
    baseline: baselineStats,
    candidate: candidateStats,
    ratio: candidateStats.medianNs / baselineStats.medianNs,
    pairedRatio: median(cand.map((c, i) => c / base[i]!)),
  };
}
