/**
 * The benches' statistics, on one scale: percentiles take p in [0, 1] (0.5 is the median, 0.99 the
 * 99th percentile), nearest rank on sorted values; a summary keeps the unit of its samples. Not the
 * timing loops (bench/measure.ts) nor how a figure is printed (bench/shared/format.ts).
 */

/** Nearest-rank percentile of ascending `sorted` values, p in [0, 1]; NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The values in ascending order, as a new array. */
export function ascending(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** The median (the mean of the two middle values of an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  const s = ascending(values);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The arithmetic mean; NaN when there are no values. */
export function mean(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return values.length > 0 ? sum / values.length : NaN;
}

/** How many samples, their nearest-rank p50 and p99, and their mean, in the samples' own unit. */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
}

/** The {@link Summary} of `samples` (a mean of 0 when there are none, as the reports have always had it). */
export function summarize(samples: readonly number[]): Summary {
  const sorted = ascending(samples);
  return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), mean: sorted.length > 0 ? mean(sorted) : 0 };
}

/** Latency of timed operations, in milliseconds (the probe and first-answer benches). */
export interface LatencyStats {
  readonly n: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
}

/** The {@link LatencyStats} of samples in milliseconds. */
export function latencyStats(samplesMs: readonly number[]): LatencyStats {
  const s = summarize(samplesMs);
  return { n: s.n, p50Ms: s.p50, p99Ms: s.p99, meanMs: s.mean };
}

/** Latency in microseconds (the MRTR bench's calls). */
export interface Stats {
  readonly n: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
}

/** The {@link Stats} of samples taken in milliseconds. */
export function microStats(samplesMs: readonly number[]): Stats {
  const s = summarize(samplesMs);
  return { n: s.n, p50Us: s.p50 * 1000, p99Us: s.p99 * 1000, meanUs: s.mean * 1000 };
}

/**
 * The nearest-rank median of per-pair ratios `candidate[i] ÷ baseline[i]`, pairs where either side
 * is not finite left out: a ratio that is less sensitive to drift than the ratio of two medians.
 */
export function pairedRatio(candidate: readonly number[], baseline: readonly number[]): number {
  const ratios = candidate.map((c, i) => c / baseline[i]!).filter((r) => Number.isFinite(r));
  return percentile(ascending(ratios), 0.5);
}
