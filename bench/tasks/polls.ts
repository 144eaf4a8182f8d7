/**
 * The tasks bench's measurement: one request at a time, each round sends one of every kind (a
 * `tasks/get` poll of a task that stays `working`, a plain call, …), in an order that rotates from
 * round to round so that no kind always follows another, and every answer is checked. Each kind's
 * latency, and the ratios of one kind over another: at p50, at p99, and the median over the rounds
 * of the per-round ratio (less sensitive to drift).
 */
import { microStats, pairedRatio, type Stats } from '../shared/stats.ts';
import type { Wrong } from '../mrtr/requests.ts';
import type { JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
import type { Send, Sent } from './wire.ts';

/** One kind of request: where it is sent, what, and the check of its answer (`undefined`: right). */
export interface Kind {
  readonly key: string;
  readonly send: Send;
  readonly request: (id: number) => Sent;
  readonly check: (answer: JsonRpcResponse | string, id: number) => string | undefined;
}

/** A ratio of one kind's latency over another's, measured in the same rounds. */
export interface PollRatio {
  /** What it says, e.g. `tasks/get ÷ plain call, one process`. */
  readonly label: string;
  readonly candidate: string;
  readonly baseline: string;
  readonly ratioP50: number;
  readonly ratioP99: number;
  readonly pairedRatio: number;
}

/** What one setting measured: each kind's latency over the rounds, and the ratios asked for. */
export interface PollCell {
  /** Rounds measured, after `warm` unmeasured ones. */
  readonly rounds: number;
  readonly warm: number;
  readonly kinds: Readonly<Record<string, Stats>>;
  readonly ratios: readonly PollRatio[];
}

/**
 * Runs `counts.warm + counts.rounds` rounds of `kinds`, then the `ratios` (candidate key, baseline
 * key, label). A round with a wrong answer is left out of every kind, so the pairs stay pairs.
 */
export async function measureRounds(
  kinds: readonly Kind[],
  ratios: ReadonlyArray<readonly [candidate: string, baseline: string, label: string]>,
  counts: { readonly warm: number; readonly rounds: number },
  nextId: () => number,
  wrong: Wrong,
): Promise<PollCell> {
  const samples = new Map<string, number[]>(kinds.map((k) => [k.key, []]));
  for (let i = 0; i < counts.warm + counts.rounds; i++) {
    const taken = new Map<string, number>();
    for (let j = 0; j < kinds.length; j++) {
      const kind = kinds[(i + j) % kinds.length]!;
      const id = nextId();
      const t = performance.now();
      const answer = await kind.send(kind.request(id));
      const ms = performance.now() - t;
      const problem = kind.check(answer, id);
      if (problem) wrong.add(`${kind.key} ${id}: ${problem}`);
      else taken.set(kind.key, ms);
    }
    if (i < counts.warm || taken.size < kinds.length) continue;
    for (const [key, ms] of taken) samples.get(key)!.push(ms);
  }
  const stats = Object.fromEntries([...samples].map(([key, s]) => [key, microStats(s)]));
  return {
    rounds: counts.rounds,
    warm: counts.warm,
    kinds: stats,
    ratios: ratios.map(([candidate, baseline, label]) => ({
      label,
      candidate,
      baseline,
      ratioP50: stats[candidate]!.p50Us / stats[baseline]!.p50Us,
      ratioP99: stats[candidate]!.p99Us / stats[baseline]!.p99Us,
      pairedRatio: pairedRatio(samples.get(candidate)!, samples.get(baseline)!),
    })),
  };
}
