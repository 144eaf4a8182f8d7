/**
 * The wait that gathers the pushes of one round: the pushes of one turn of a server arrive
 * together (one read of its pipe or stream, or a few reads close together), so a round is
 * complete once a whole turn of the event loop, its reads included, and a short quiet time
 * brought no further push. A bound caps the wait for a server that pushes in several turns.
 */

/**
 * How long no push must come after the last one (besides whole loop turns) before a round is sent:
 * the pushes a server writes one after the other can reach us in reads apart (over a millisecond on Node 24).
 */
export const QUIET_MS = 2;

/**
 * Resolves once `count()` stayed unchanged over two checks a full turn of the event loop apart
 * and over `quietMs` since it last changed, as soon as `done()` holds, or after `maxMs` at the latest.
 */
export function quietTurn(count: () => number, done: () => boolean, maxMs: number, quietMs = QUIET_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    let seen = count();
    let since = performance.now();
    let quiet = 0;
    let check: ReturnType<typeof setImmediate> | undefined;
    let later: ReturnType<typeof setTimeout> | undefined;
    const finish = (): void => {
      clearTimeout(bound);
      clearTimeout(later);
      if (check !== undefined) clearImmediate(check);
      resolve();
    };
    const bound = setTimeout(finish, maxMs);
    const look = (): void => {
      check = undefined;
      later = undefined;
      if (done()) return finish();
      const now = count();
      if (now !== seen) {
        seen = now;
        since = performance.now();
        quiet = 0;
      } else if (++quiet >= 2) {
        const left = quietMs - (performance.now() - since);
        if (left <= 0) return finish();
        // The rest of the quiet time is waited by a timer, without spinning.
        quiet = 1;
        later = setTimeout(look, Math.ceil(left));
        return;
      }
      check = setImmediate(look);
    };
    check = setImmediate(look);
  });
}
