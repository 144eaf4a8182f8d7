/**
 * The wait that gathers the pushes of one round: the pushes of one turn of a server arrive
 * together (one read of its pipe or stream), so a round is complete once a whole turn of the event
 * loop, its reads included, brought no further push. A bound caps the wait for a server that
 * pushes in several turns.
 */

/**
 * Resolves once two checks in a row (one full turn of the event loop apart) find `count()`
 * unchanged, as soon as `done()` holds, or after `maxMs` at the latest.
 */
export function quietTurn(count: () => number, done: () => boolean, maxMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    let seen = count();
    let quiet = 0;
    let check: ReturnType<typeof setImmediate> | undefined;
    const finish = (): void => {
      clearTimeout(bound);
      if (check !== undefined) clearImmediate(check);
      resolve();
    };
    const bound = setTimeout(finish, maxMs);
    const look = (): void => {
      check = undefined;
      if (done()) return finish();
      const now = count();
      if (now !== seen) {
        seen = now;
        quiet = 0;
      } else if (++quiet >= 2) return finish();
      check = setImmediate(look);
    };
    check = setImmediate(look);
  });
}
