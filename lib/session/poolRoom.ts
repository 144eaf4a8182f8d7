/**
 * Where a new session can come from, as the pool stands: its entries and sessions, the
 * principals' openings waiting at the gate, and its bounds. Read only; the pool acts on the answer.
 * Not here: choosing an open session, opening one, waiting.
 */
import { limitRefusal, type LimitRefusal } from '../util/limits.ts';
import type { SessionKey } from './sessionKey.ts';
import type { UpstreamSession } from './upstreamSession.ts';

/** The sessions of one key, how many are being opened for it, and how many wait their turn to be. */
export interface Entry {
  readonly key: SessionKey;
  sessions: UpstreamSession[];
  opening: number;
  /** Openings for the key waiting at the gate (they count as the principal's sessions). */
  queued: number;
}

/** Whether a session is being opened for the entry's key, or waits its turn to be. */
export function beingOpened(entry: Entry): boolean {
  return entry.opening > 0 || entry.queued > 0;
}

/** Whether a session is doing something (a call in flight, reserved for one, or held). */
export function busy(s: UpstreamSession): boolean {
  return s.inFlight > 0 || s.holds > 0 || s.pushableInFlight > 0;
}

/**
 * How long a session must have been idle before it is closed to make room: one just opened or just
 * handed over (its caller's call not sent yet), or a client's between two of its calls, is kept.
 */
export const EVICTABLE_AFTER_MS = 1000;

/** Where a new session can come from: room as it is, an idle session to close first, or a refusal. */
export type Room =
  | { readonly ok: true; readonly victim?: { entry: Entry; session: UpstreamSession } }
  | { readonly ok: false; readonly refusal: LimitRefusal };

/** The bounds a room is found within. */
export interface RoomBounds {
  readonly max: number;
  readonly reserve: number;
  readonly perPrincipal: number;
}

/**
 * Whether `principal` may have one more session now: within its own bound (closing an idle one
 * of its own if it must), within the reserve (a principal with a busy session may not take the
 * last `reserve` sessions), and within the pool (closing the idle session used longest ago).
 */
export function roomFor(principal: string, entries: Iterable<Entry>, bounds: RoomBounds): Room {
  const { max, reserve, perPrincipal } = bounds;
  const idleSince = Date.now() - EVICTABLE_AFTER_MS;
  let size = 0;
  let busyCount = 0;
  let mine = 0;
  let mineBusy = 0;
  let idle: { entry: Entry; session: UpstreamSession } | undefined;
  let myIdle: { entry: Entry; session: UpstreamSession } | undefined;
  for (const entry of entries) {
    const own = entry.key.principal === principal;
    size += entry.opening;
    busyCount += entry.opening;
    if (own) {
      // Openings waiting at the gate count as the principal's own (not yet the pool's).
      mine += entry.opening + entry.queued;
      mineBusy += entry.opening + entry.queued;
    }
    for (const session of entry.sessions) {
      if (session.closed) continue;
      size++;
      const b = busy(session);
      const closable = !b && session.lastUsed <= idleSince;
      if (b) busyCount++;
      else if (closable && (!idle || session.lastUsed < idle.session.lastUsed)) idle = { entry, session };
      if (!own) continue;
      mine++;
      if (b) mineBusy++;
      else if (closable && (!myIdle || session.lastUsed < myIdle.session.lastUsed)) myIdle = { entry, session };
    }
  }
  if (mine >= perPrincipal) {
    if (myIdle) return { ok: true, victim: myIdle };
    return {
      ok: false,
      refusal: limitRefusal('sessions-per-caller', perPrincipal, `this caller has ${perPrincipal} upstream sessions busy`),
    };
  }
  if (mineBusy > 0 && busyCount >= max - reserve) {
    return {
      ok: false,
      refusal: limitRefusal(
        'sessions',
        max,
        `${busyCount} of ${max} upstream sessions are busy; the other ${max - busyCount} are kept for callers that hold none`,
      ),
    };
  }
  if (size < max) return { ok: true };
  if (idle) return { ok: true, victim: idle };
  return { ok: false, refusal: limitRefusal('sessions', max, `all ${max} upstream sessions are busy`) };
}
