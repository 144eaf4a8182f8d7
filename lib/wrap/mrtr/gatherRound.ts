/**
 * When a round has all its pushes: the server is asked a `ping` after the pushes seen so far, and a
 * server answers in the order it reads and writes, so once the answer is in, every push it wrote
 * before it read the ping is in too. Over a pipe that holds by order; over Streamable HTTP, where
 * the push and the answer come on two streams, the barrier also waits a turn of the event loop
 * after the answer (see `UpstreamSession.barrier`), and a push that still came later starts one
 * more barrier. A bound caps the wait for a server that never answers, or keeps pushing.
 */

import { Cancellation, type CancelSignal } from '../../signals.ts';

/** Asks the server something it answers after all it wrote before; resolves once answered (or it cannot be). */
export type Barrier = (signal: CancelSignal) => Promise<unknown>;

/**
 * Resolves once a barrier was passed with no push after it began (`count()` unchanged), as soon as
 * `done()` holds (checked at each step, and whenever the function `watch` is handed is called), or
 * after `maxMs` at the latest (`maxMs` ≤ 0: after one turn of the event loop, no barrier). A barrier
 * still unanswered then is abandoned through its signal.
 */
export function gatherRound(count: () => number, done: () => boolean, maxMs: number, barrier: Barrier, watch?: (recheck: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    if (maxMs <= 0) {
      setImmediate(resolve);
      return;
    }
    const stop = new Cancellation();
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(bound);
      stop.abort();
      resolve();
    };
    const bound = setTimeout(finish, maxMs);
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
      barrier(stop.signal).then(
        () => (done() || count() === before ? finish() : ask()),
        () => finish(),
      );
    };
    // The pushes read together with the first reach the call in the same run of microtasks: they
    // are counted before the barrier is asked.
    queueMicrotask(ask);
  });
}
