/**
 * Plain-call throughput of a replica in a fleet against a `serve` alone: modern `tools/call` of
 * the push server's `echo` (it never pushes), `concurrency` calls in flight from one closed-loop
 * load generator (bench/wrap/load.ts, every answer checked), in rounds that alternate the two, the
 * order swapping every round; each round is a fresh set of keep-alive connections, an unmeasured
 * lead-in, then a measured window. The ratio is the fleet replica's calls per second over all its
 * windows ÷ the lone `serve`'s. The upstream processes each front has are counted after each round:
 * how many server processes share the two cores moves throughput more than the front does, so the
 * bench starts both with the same bound on upstream sessions and the report says what they had.
 */
import { httpDriver, runPhase } from '../wrap/load.ts';
import { ascending, percentile } from '../shared/stats.ts';
import type { Wrong } from '../mrtr/requests.ts';

export interface ThroughputSide {
  /** Correct calls answered within the measured windows, and those windows' total length. */
  readonly calls: number;
  readonly seconds: number;
  readonly callsPerSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly errors: number;
  /** Calls per second of each round, in order. */
  readonly perRound: readonly number[];
  /** The most upstream server processes the front had after a round (sessions and spares). */
  readonly upstreamProcesses: number;
}

export interface ThroughputResult {
  readonly concurrency: number;
  readonly rounds: number;
  readonly roundMs: number;
  readonly leadInMs: number;
  readonly warmupMs: number;
  readonly fleet: ThroughputSide;
  readonly alone: ThroughputSide;
  /** Fleet replica ÷ `serve` alone, calls per second over every window. */
  readonly ratio: number;
  /** The median over the rounds of the fleet replica's round ÷ the lone one's round. */
  readonly pairedRatio: number;
}

export interface ThroughputPlan {
  readonly concurrency: number;
  readonly rounds: number;
  readonly roundMs: number;
  readonly leadInMs: number;
  readonly warmupMs: number;
}

/** A front to measure: its endpoint, and how many upstream processes it has now. */
export interface Front {
  readonly url: URL;
  readonly processes: () => number;
}

interface Accumulated {
  processes: number;
  calls: number;
  ns: number;
  latencies: number[];
  errors: number;
  perRound: number[];
}

/** One measured window of `url` (after its lead-in), added to `into`. */
async function window(
  front: Front,
  plan: ThroughputPlan,
  measuredMs: number,
  into: Accumulated | undefined,
  wrong: Wrong,
  label: string,
): Promise<void> {
  const driver = httpDriver({ url: front.url, modernAnswer: true }, plan.concurrency);
  try {
    if (plan.leadInMs > 0) await runPhase(driver, plan.concurrency, plan.leadInMs);
    const phase = await runPhase(driver, plan.concurrency, measuredMs);
    for (const s of phase.errorSamples) wrong.add(`${label}: ${s}`);
    if (phase.errors > phase.errorSamples.length) wrong.count += phase.errors - phase.errorSamples.length;
    if (!into) return;
    into.calls += phase.completedInWindow;
    into.ns += phase.windowNs;
    into.errors += phase.errors;
    for (const ns of phase.latenciesNs) into.latencies.push(ns / 1000);
    into.perRound.push(phase.completedInWindow / (phase.windowNs / 1e9));
    into.processes = Math.max(into.processes, front.processes());
  } finally {
    await driver.close();
  }
}

function side(a: Accumulated): ThroughputSide {
  const sorted = ascending(a.latencies);
  return {
    calls: a.calls,
    seconds: a.ns / 1e9,
    callsPerSecond: a.calls / (a.ns / 1e9),
    p50Us: percentile(sorted, 0.5),
    p99Us: percentile(sorted, 0.99),
    errors: a.errors,
    perRound: a.perRound,
    upstreamProcesses: a.processes,
  };
}

/** Measures the fleet replica at `fleet` against the lone `serve` at `alone`. */
export async function plainThroughput(fleet: Front, alone: Front, plan: ThroughputPlan, wrong: Wrong): Promise<ThroughputResult> {
  const empty = (): Accumulated => ({ processes: 0, calls: 0, ns: 0, latencies: [], errors: 0, perRound: [] });
  const f = empty();
  const s = empty();
  // Warm-up: both fronts and their servers hot, unmeasured.
  await window(fleet, plan, plan.warmupMs, undefined, wrong, 'fleet replica warm-up');
  await window(alone, plan, plan.warmupMs, undefined, wrong, 'serve alone warm-up');
  for (let r = 0; r < plan.rounds; r++) {
    const order =
      r % 2 === 0
        ? ([
            [fleet, f, 'fleet replica'],
            [alone, s, 'serve alone'],
          ] as const)
        : ([
            [alone, s, 'serve alone'],
            [fleet, f, 'fleet replica'],
          ] as const);
    for (const [url, into, label] of order) await window(url, plan, plan.roundMs, into, wrong, label);
  }
  const fs = side(f);
  const ss = side(s);
  const ratios = fs.perRound.map((x, i) => x / ss.perRound[i]!);
  return { ...plan, fleet: fs, alone: ss, ratio: fs.callsPerSecond / ss.callsPerSecond, pairedRatio: percentile(ascending(ratios), 0.5) };
}
