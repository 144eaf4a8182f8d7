/**
 * Which of a key's open sessions a caller gets now: for a call that must have one alone, the one
 * with no call that may push in flight (reserved for it); for one that may share, the oldest, or
 * for callers sharing sessions the least busy (with another opened beside it under load). Else
 * whether the caller may open another or must wait. Not here: the pool's entries, opening and
 * waiting (`pool.ts`), room for a new session (`poolRoom.ts`).
 */
import { availableParallelism } from 'node:os';
import { beingOpened, type Entry } from './poolRoom.ts';
import type { AcquireOptions, SessionPoolOptions } from './poolOptions.ts';
import type { SessionKey } from './sessionKey.ts';
import type { UpstreamSession } from './upstreamSession.ts';

/**
 * Calls in flight on every shared session of a key past which another is opened beside them (in
 * the background, while the calls go on), up to `SessionPoolOptions.spread`.
 */
const SPREAD_AT = 16;

/** What the choice reads of its pool, and the one thing it may start there. */
export interface ChoosingPool {
  readonly options: SessionPoolOptions;
  /** Sessions a key of `principal` may have. */
  perKey(principal: string): number;
  /** Opens one more session for a shared key under load, beside those serving it. */
  spread(entry: Entry, key: SessionKey): void;
}

/**
 * The choice for a caller of `entry`'s key: the open session to use now if one will do (`enough`);
 * else whether to open another (`wait` false) or wait for one to be free (`wait` true, `atBound`
 * when the key has all the sessions it may have). `entry` holds no closed session.
 */
export interface Choice {
  readonly entry: Entry;
  readonly pick: UpstreamSession | undefined;
  readonly enough: boolean;
  readonly wait: boolean;
  readonly atBound: boolean;
}

/**
 * Chooses for a caller of `key` (see `Choice`), whose sessions are `entry`'s; the session picked is
 * touched, and reserved for a caller that must have it alone.
 */
export function chooseSession(pool: ChoosingPool, entry: Entry, key: SessionKey, options: AcquireOptions): Choice {
  const live = entry.sessions;
  const atBound = live.length + entry.opening >= pool.perKey(key.principal);
  if (options.exclusive) {
    let pick: UpstreamSession | undefined;
    for (const s of live) if (!pick || s.pushableInFlight < pick.pushableInFlight) pick = s;
    if (pick && pick.pushableInFlight === 0) {
      pick.touch(Date.now());
      pick.reserve();
      if (options.reservation) options.reservation.reserved = true;
      return { entry, pick, enough: true, wait: false, atBound };
    }
    const mayOpen = (options.open !== false || (live.length === 0 && !beingOpened(entry))) && !atBound;
    return { entry, pick, enough: false, wait: !mayOpen, atBound };
  }
  // A call that may share goes to the oldest session: one pipe carries the calls of a turn in one
  // write and their answers in few reads (calls spread over several server processes each cost
  // a turn there and here), and sessions opened for calls that push go idle and close. Callers
  // sharing sessions go to the least busy one, and open another beside them under load.
  let pick = live[0];
  if (pick && key.principal === pool.options.sharedPrincipal) {
    for (const s of live) if (s.inFlight < pick.inFlight) pick = s;
    if (
      pick.inFlight >= SPREAD_AT &&
      live.length + entry.opening < (pool.options.spread ?? Math.max(1, availableParallelism() - 1)) &&
      !beingOpened(entry)
    )
      pool.spread(entry, key);
  }
  if (pick) pick.touch(Date.now());
  return { entry, pick, enough: pick !== undefined, wait: false, atBound };
}
