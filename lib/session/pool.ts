/**
 * The pool of initialized upstream sessions, keyed by principal and declared capability set (a
 * legacy server may register tools according to what its client declared at `initialize`). Bounded
 * in all, per principal and per key, and in idle time; a reserve of sessions is kept for callers
 * that hold none, so a few busy callers cannot lock the others out. A caller that finds no room
 * waits a bounded time, then gets a refusal naming the limit. Never shares a session between
 * principals; reopens a session whose process died, with backoff. Which open session a caller gets
 * is `poolChoice.ts`, the opening of one `poolOpening.ts`.
 */
import { AdapterError } from '../core/errors.ts';
import { limitError, limitRefusal, type LimitRefusal } from '../util/limits.ts';
import type { Backend } from './backend.ts';
import type { CancelSignal } from '../util/signals.ts';
import { Openings } from './gate.ts';
import { PushCopies } from './pushCopies.ts';
import type { UpstreamSession } from './upstreamSession.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { beingOpened, busy, EVICTABLE_AFTER_MS, roomFor, type Entry, type Room } from './poolRoom.ts';
import { keyText, type SessionKey } from './sessionKey.ts';
import { Waiters } from './waiters.ts';
import type { AcquireOptions, SessionPoolOptions } from './poolOptions.ts';
import { chooseSession, type Choice, type ChoosingPool } from './poolChoice.ts';
import { openSession, type OpeningPool } from './poolOpening.ts';

/** How long a caller that would rather not open a session waits for one to be free before it opens one. */
const OPEN_PATIENCE_MS = 100;

/** How long ago a session must have been opened for its use to count as a served caller at work (not the first calls it was opened for). */
const AT_WORK_OPENED_MS = 2000;

/** Upstream sessions on demand. */
export class SessionPool {
  readonly backend: Backend;
  readonly options: SessionPoolOptions;
  #entries = new Map<string, Entry>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  /** Callers waiting for a session to be free or for room: woken together whenever either may have come. */
  readonly #waiters = new Waiters();
  /** Lets a few openings through at a time. */
  readonly openings: Openings;
  /** When each session was opened: one opened a while ago with a call in flight is a served caller at work. */
  readonly #openedAt = new WeakMap<UpstreamSession, number>();
  readonly #unwatch: () => void;
  /** What choosing a session reads of the pool. */
  readonly #choosing: ChoosingPool;
  /** What opening a session uses of the pool. */
  readonly #opening: OpeningPool;

  constructor(backend: Backend, options: SessionPoolOptions = {}) {
    this.backend = backend;
    this.options = options;
    this.openings =
      options.opening instanceof Openings
        ? options.opening
        : new Openings(backend, options.opening === undefined ? {} : { size: options.opening });
    this.#choosing = {
      options,
      perKey: (principal) => this.#perKey(principal),
      spread: (entry, key) => void this.#spread(entry, key),
    };
    this.#opening = {
      backend,
      options,
      // Over HTTP, a server may send one push to every session: its copies are settled together.
      copies: backend.kind === 'http' ? new PushCopies(() => this.size) : undefined,
      closed: () => this.#closed,
      lost: (key, session) => this.#lost(key, session),
      wake: () => this.#waiters.wake(),
      opened: (session) => this.#openedAt.set(session, Date.now()),
    };
    this.#unwatch = this.openings.working(() => this.#atWork());
    const idle = options.idleMs ?? DEFAULTS.sessionIdleMs;
    this.#sweeper = setInterval(() => this.#sweep(idle), Math.max(1000, Math.min(idle, 60_000)));
    this.#sweeper.unref();
  }

  /** Open sessions. */
  get size(): number {
    let n = 0;
    for (const e of this.#entries.values()) n += e.sessions.length + e.opening;
    return n;
  }

  /**
   * Whether callers already served are at work: a session opened a while ago with a call in flight
   * or used within the last second (a session just opened carries the first calls of the caller
   * it was opened for, and one a stranger used once and left is idle).
   */
  #atWork(): boolean {
    const now = Date.now();
    const openedBefore = now - AT_WORK_OPENED_MS;
    const usedSince = now - EVICTABLE_AFTER_MS;
    for (const e of this.#entries.values()) {
      for (const s of e.sessions)
        if ((s.inFlight > 0 || s.lastUsed >= usedSince) && (this.#openedAt.get(s) ?? now) <= openedBefore) return true;
    }
    return false;
  }

  /** Sessions in all: the configured bound, or fewer if the backend allows fewer. */
  get max(): number {
    return Math.min(this.options.maxSessions ?? DEFAULTS.sessions, this.backend.maxSessions ?? Number.POSITIVE_INFINITY);
  }

  /** Sessions kept for principals with none busy (never all of them). */
  get reserve(): number {
    return Math.max(0, Math.min(this.options.reserve ?? DEFAULTS.sessionReserve, this.max - 1));
  }

  #perKey(principal: string): number {
    if (principal === this.options.sharedPrincipal) return this.max;
    return Math.min(this.options.maxPerKey ?? DEFAULTS.sessionsPerCaller, this.#perPrincipal(principal));
  }

  #perPrincipal(principal: string): number {
    if (principal === this.options.sharedPrincipal) return this.max;
    return Math.min(this.options.maxPerPrincipal ?? DEFAULTS.sessionsPerCaller, this.max);
  }

  /** The choice for a caller of `key` (see `Choice`), in the key's entry (`found`, when the caller has it), made now if there is none. */
  #choose(key: SessionKey, options: AcquireOptions, found?: Entry): Choice {
    if (this.#closed) throw new AdapterError('closed', 'the session pool is closed');
    let entry = found ?? this.#entries.get(keyText(key));
    if (!entry) {
      entry = { key, sessions: [], opening: 0, queued: 0 };
      this.#entries.set(keyText(key), entry);
    }
    if (entry.sessions.some((s) => s.closed)) entry.sessions = entry.sessions.filter((s) => !s.closed);
    return chooseSession(this.#choosing, entry, key, options);
  }

  /**
   * An open session for this key when one will do without opening another, else `undefined`
   * (then `acquire`). Throws when the pool is closed.
   */
  tryAcquire(key: SessionKey, options: AcquireOptions = {}): UpstreamSession | undefined {
    if (this.#closed) throw new AdapterError('closed', 'the session pool is closed');
    // No entry is made for a key without sessions: a caller served otherwise leaves nothing behind.
    const entry = this.#entries.get(keyText(key));
    if (!entry) return undefined;
    const { pick, enough } = this.#choose(key, options, entry);
    return enough ? pick : undefined;
  }

  /**
   * A session for this key, opening (or reopening) one as needed, or waiting for one to be free.
   * A caller that finds neither a free session nor room to open one within `waitMs` is refused
   * with a `limit` error naming what was full.
   */
  async acquire(key: SessionKey, options: AcquireOptions = {}): Promise<UpstreamSession> {
    // A caller that would rather not open a session (`open: false`: its calls are not known to
    // push) waits briefly for one to be free, then opens one; at the bound it waits for one to be
    // free, and only when none is within `waitMs` shares one (its call may well not push). A call
    // known to push never shares: at the bound it waits, then is refused.
    let deadline = Date.now() + (this.options.waitMs ?? DEFAULTS.sessionWaitMs);
    /** Whether a turn at the gate came and found the room taken (the wait is then extended once). */
    let waitedInLine = false;
    let patience = Date.now() + OPEN_PATIENCE_MS;
    let patient = options.open === false;
    /** A call not known to push that waited in vain at the bound shares a session after all. */
    let share = false;
    const alone = (): boolean => !share && (options.stillExclusive ? options.stillExclusive() : options.exclusive === true);
    for (;;) {
      const exclusive = alone();
      const { entry, pick, enough, wait, atBound } = this.#choose(key, { ...options, exclusive, open: !patient });
      if (enough) return pick!;
      let refusal: LimitRefusal | undefined;
      if (wait) {
        refusal = atBound
          ? limitRefusal(
              'sessions-per-capabilities',
              this.#perKey(key.principal),
              `all ${this.#perKey(key.principal)} upstream sessions of this caller and capability set are busy with calls that may ask for input`,
            )
          : undefined;
      } else {
        if (!pick && beingOpened(entry) && !exclusive) return this.#waitForOpen(entry, options.signal);
        const room = this.#room(key.principal);
        if (room.ok) {
          // In turn with other openings (counted meanwhile as the principal's); the room is looked
          // at again once the turn came.
          entry.queued++;
          const through = await this.openings
            .turn(options.caller ?? key.principal, deadline - Date.now(), options.signal)
            .finally(() => entry.queued--);
          if (through) {
            // Waiting for the turn may have made the opening needless: a session came free, or
            // the call was found not to need one alone (its target finished without pushing).
            const now = this.#choose(key, { ...options, exclusive: alone(), open: !patient });
            if (now.enough) {
              through();
              return now.pick!;
            }
            const again = this.#room(key.principal);
            if (again.ok) return this.#openIn(entry, key, exclusive, options, again.victim, through);
            through();
            refusal = again.refusal;
            // The room was taken by those ahead in line. What the caller waited there was their
            // boots, not its own time: once, it may still wait for a session to fall idle and give way.
            if (!waitedInLine) {
              waitedInLine = true;
              deadline = Math.max(deadline, Date.now() + EVICTABLE_AFTER_MS);
            }
          } else refusal = this.openings.refusal();
        } else refusal = room.refusal;
      }
      const left = deadline - Date.now();
      if (patient && !atBound) {
        // While the key's first session is opening, patience is not used up, and it starts over
        // once it is open: what its first call finds out (whether it pushes) decides for the
        // callers behind it, however long the server takes to start.
        const firstOpening = entry.sessions.length === 0 && beingOpened(entry);
        const ranOut = await this.#waiters.change(options.signal, Math.min(patience, deadline) - Date.now());
        if (firstOpening && Date.now() < deadline) patience = Date.now() + OPEN_PATIENCE_MS;
        else if (ranOut) patient = false;
        continue;
      }
      if (left <= 0) {
        if (atBound && options.open === false && pick && !options.neverShare) {
          share = true;
          continue;
        }
        this.#forget(entry);
        const room = this.#room(key.principal);
        throw limitError(refusal ?? (room.ok ? limitRefusal('sessions', this.max, 'no upstream session was free in time') : room.refusal));
      }
      await this.#waiters.change(options.signal, left);
    }
  }

  /** Opens one more session for a shared key under load, beside those serving it, if there is room. */
  async #spread(entry: Entry, key: SessionKey): Promise<void> {
    const room = this.#room(key.principal);
    if (!room.ok || room.victim) return;
    // Counted as being opened from now until it is open (or given up), so that no other is started meanwhile.
    entry.queued++;
    let through: (() => void) | undefined;
    try {
      through = await this.openings.turn(key.principal, this.options.waitMs ?? DEFAULTS.sessionWaitMs);
    } catch {
      through = undefined;
    }
    const again = through && !this.#closed ? this.#room(key.principal) : undefined;
    entry.queued--;
    if (!again?.ok || again.victim) {
      through?.();
      this.#forget(entry);
      return;
    }
    // (A failure to open is told through `onOpenFailed`; the calls go on on the sessions open.)
    await this.#openIn(entry, key, false, {}, undefined, through!).catch(() => {});
  }

  /** Opens a session for `entry` (closing `victim`, an idle session, first), then gives its place at the gate back. */
  async #openIn(
    entry: Entry,
    key: SessionKey,
    exclusive: boolean,
    options: AcquireOptions,
    victim: { entry: Entry; session: UpstreamSession } | undefined,
    through: () => void,
  ): Promise<UpstreamSession> {
    if (victim) {
      victim.entry.sessions = victim.entry.sessions.filter((s) => s !== victim.session);
      void victim.session.close();
    }
    entry.opening++;
    try {
      const session = await openSession(this.#opening, key);
      this.openings.met(options.caller ?? key.principal);
      entry.sessions.push(session);
      if (options.opened) options.opened.opened = true;
      if (exclusive) {
        session.reserve();
        if (options.reservation) options.reservation.reserved = true;
      }
      return session;
    } finally {
      through();
      entry.opening--;
      this.#forget(entry);
      this.#waiters.wake();
    }
  }

  async #waitForOpen(entry: Entry, signal: CancelSignal | undefined): Promise<UpstreamSession> {
    for (;;) {
      await this.#waiters.change(signal, 1000);
      if (this.#closed) throw new AdapterError('closed', 'the session pool is closed');
      const s = entry.sessions.find((x) => !x.closed);
      if (s) return s;
      if (!beingOpened(entry)) return this.acquire(entry.key, signal ? { signal } : {});
    }
  }

  #room(principal: string): Room {
    return roomFor(principal, this.#entries.values(), {
      max: this.max,
      reserve: principal === this.options.sharedPrincipal ? 0 : this.reserve,
      perPrincipal: this.#perPrincipal(principal),
    });
  }

  /** Drops an entry with nothing in it (an entry per key tried is not kept). */
  #forget(entry: Entry): void {
    if (entry.sessions.length > 0 || beingOpened(entry)) return;
    const id = keyText(entry.key);
    if (this.#entries.get(id) === entry) this.#entries.delete(id);
  }

  /** A session of `key` closed: its entry lets go of it. */
  #lost(key: SessionKey, session: UpstreamSession): void {
    const entry = this.#entries.get(keyText(key));
    if (entry) {
      entry.sessions = entry.sessions.filter((x) => x !== session);
      this.#forget(entry);
    }
    this.#waiters.wake();
  }

  #sweep(idleMs: number): void {
    const now = Date.now();
    for (const [id, entry] of this.#entries) {
      for (const s of entry.sessions) {
        if (s.closed || (!busy(s) && now - s.lastUsed > idleMs)) void s.close();
      }
      if (entry.sessions.some((s) => s.closed)) entry.sessions = entry.sessions.filter((s) => !s.closed);
      if (entry.sessions.length === 0 && !beingOpened(entry)) this.#entries.delete(id);
    }
  }

  /** Every open session, for fan-out (subscriptions) and inspection. */
  sessions(): Array<{ key: SessionKey; session: UpstreamSession }> {
    const out: Array<{ key: SessionKey; session: UpstreamSession }> = [];
    for (const e of this.#entries.values()) for (const s of e.sessions) if (!s.closed) out.push({ key: e.key, session: s });
    return out;
  }

  /** Closes every session (their calls get errors) and stops the sweeper. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unwatch();
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const sessions = [...this.#entries.values()].flatMap((e) => e.sessions);
    this.#entries.clear();
    this.#waiters.wake();
    await Promise.all(sessions.map((s) => s.close()));
  }
}
