/**
 * When a round has all its pushes: the server is asked a `ping` after the pushes seen so far, and a
 * server answers in the order it reads and writes, so once the answer is in, every push it wrote
 * before it read the ping is in too. Over a pipe that holds by order; over Streamable HTTP, where
 * the push and the answer come on two streams, the barrier also waits a turn of the event loop
 * after the answer (see `UpstreamSession.barrier`), and a push that still came later starts one
 * more barrier. A bound caps the wait for a server that never answers, or keeps pushing.
 *
 * The bound's verdict is taken only after the reads already waiting have been made: a process that
 * was kept from running (a loaded machine) finds its timer due and the server's answer waiting
 * together, and the timer runs first in a turn of the event loop; the answer, read after it,
 * still counts.
 */

import { DEFAULTS } from '../../util/defaults.ts';
import { Cancellation, type CancelSignal } from '../../util/signals.ts';

/** Asks the server something it answers after all it wrote before; resolves once answered (or it cannot be). */
export type Barrier = (signal: CancelSignal) => Promise<unknown>;

/**
 * Resolves once a barrier was passed with no push after it began (`count()` unchanged), as soon as
 * `done()` holds (checked at each step, and whenever the function `watch` is handed is called), or
 * after `maxMs` at the latest (`maxMs` ≤ 0: after one turn of the event loop, no barrier). A barrier
 * still unanswered then is abandoned through its signal. Resolves to whether it ended so: at its
 * bound, with a barrier asked and not answered.
 */
export function gatherRound(
  count: () => number,
  done: () => boolean,
  maxMs: number,
  barrier: Barrier,
  watch?: (recheck: () => void) => void,
): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    if (maxMs <= 0) {
      setImmediate(() => resolve(false));
      return;
    }
    const stop = new Cancellation();
    let finished = false;
    let asking = false;
    const finish = (atBound = false): void => {
      if (finished) return;
      finished = true;
      clearTimeout(bound);
      stop.abort();
      resolve(atBound && asking);
    };
    // After the poll phase of this turn: an answer already waiting is read first.
    const bound = setTimeout(() => setImmediate(() => finish(true)), maxMs);
    const recheck = (): void => {
      if (finished) return;
      if (done()) finish();
      else watch?.(recheck);
    };
    watch?.(recheck);
    const ask = (): void => {
      if (finished) return;
      if (done()) return finish();
      const before = count();
      asking = true;
      barrier(stop.signal).then(
        () => {
          asking = false;
          if (done() || count() === before) finish();
          else ask();
        },
        () => finish(),
      );
    };
    // The pushes read together with the first reach the call in the same run of microtasks: they
    // are counted before the barrier is asked.
    queueMicrotask(ask);
  });
}

/**
 * How long the rounds of one upstream wait for their barrier. While the server answers barriers,
 * up to `barrierWaitMs`: the answer is what ends a round, and on a loaded machine it may be slow to
 * come (a round cut short splits what the server asked at once across rounds). Once one went
 * unanswered that long (a server that does not answer a `ping` while a call of its waits),
 * `collectMs`. A `collectMs` of 0 stays 0 (no barrier).
 */
export class RoundBound {
  readonly #collectMs: number;
  readonly #barrierWaitMs: number;
  #answered = true;

  constructor(collectMs: number = DEFAULTS.collectMs, barrierWaitMs: number = DEFAULTS.barrierWaitMs) {
    this.#collectMs = collectMs;
    this.#barrierWaitMs = barrierWaitMs;
  }

  /** The bound for the next round. */
  get ms(): number {
    return this.#collectMs > 0 && this.#answered ? Math.max(this.#collectMs, this.#barrierWaitMs) : this.#collectMs;
  }

  /** Gathers a round (see `gatherRound`) within the bound, and learns from how it ended. */
  async gather(count: () => number, done: () => boolean, barrier: Barrier, watch?: (recheck: () => void) => void): Promise<void> {
    if (await gatherRound(count, done, this.ms, barrier, watch)) this.#answered = false;
  }
}
