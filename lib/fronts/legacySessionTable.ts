/**
 * The legacy sessions of one sessionful HTTP endpoint (clients that sent `initialize` and carry an
 * `Mcp-Session-Id`), whatever serves them: each belongs to the principal that opened it (to anyone
 * else it does not exist), is closed after a while without requests, and is admitted within a
 * bound in all and per principal. At a bound the session idle longest gives way (of the caller
 * itself, or of the principals holding the most), so a new client is served; a refusal comes only
 * when every session is in use (a request in progress or lately: a second for a session never used
 * after its `initialize`, half a minute for one its client uses) or listened to (an open GET
 * stream is a client that is there: its session never gives way to another's, though it still
 * closes after `idleMs` without a request).
 * Counts and choices only: the sessions themselves are the caller's.
 */
import { limitRefusal, type LimitRefusal } from '../util/limits.ts';
import { sessionNotFound, whileServed } from '../transport/httpEdge.ts';
import { DEFAULTS } from '../util/defaults.ts';

/** The bounds of an endpoint's legacy sessions. */
export interface LegacySessionLimits {
  /** Sessions in all (default 32). */
  readonly max?: number;
  /** Sessions one principal may have (default 16; every client without credentials is one principal, `anonymous`). */
  readonly perPrincipal?: number;
  /** Time without a request after which a session is closed (default 15 minutes; 0 never). */
  readonly idleMs?: number;
}

interface Row<S> {
  id: string;
  principal: string;
  /** Unset while the session is being opened. */
  session: S | undefined;
  /** When its last request started or ended. */
  lastActive: number;
  /** Requests being served on it now (not its GET stream: a session only listening is idle). */
  active: number;
  /** Its GET streams open now: a client listening is there, and its session does not give way. */
  listening: number;
  /** It had a request after its `initialize`. */
  used: boolean;
}

/** A place taken for a session being opened: `commit` it under its id once open, or `cancel` it. */
export interface SessionTicket<S> {
  commit(id: string, session: S): void;
  cancel(): void;
}

/** The legacy sessions of one endpoint, by id. */
export class LegacySessionTable<S> {
  readonly #rows = new Map<string, Row<S>>();
  readonly #limits: LegacySessionLimits;
  readonly #close: (session: S) => void;
  readonly #now: () => number;
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #pending = 0;

  /** `close` ends a session the table gave up on (idle, or making room); it is then no longer found. */
  constructor(limits: LegacySessionLimits, close: (session: S) => void, now: () => number = Date.now) {
    this.#limits = limits;
    this.#close = close;
    this.#now = now;
    const idle = this.idleMs;
    if (idle > 0) {
      this.#sweeper = setInterval(() => this.#sweep(), Math.max(250, Math.min(idle / 4, 60_000)));
      this.#sweeper.unref?.();
    }
  }

  get size(): number {
    return this.#rows.size;
  }

  /** Requests being served on the sessions now. */
  get active(): number {
    let n = 0;
    for (const row of this.#rows.values()) n += row.active;
    return n;
  }

  /** Whether a request is being served on a session in use (not its `initialize`: a client already served, at work). */
  get working(): boolean {
    for (const row of this.#rows.values()) if (row.active > 0 && row.used && row.session !== undefined) return true;
    return false;
  }

  get max(): number {
    return Math.max(1, this.#limits.max ?? DEFAULTS.legacySessions);
  }

  get perPrincipal(): number {
    return Math.max(1, this.#limits.perPrincipal ?? DEFAULTS.legacySessionsPerCaller);
  }

  get idleMs(): number {
    return Math.max(0, this.#limits.idleMs ?? DEFAULTS.legacyIdleMs);
  }

  /** The session of `id` if `principal` opened it; anyone else's is as if it did not exist. */
  find(id: string, principal: string): S | undefined {
    const row = this.#rows.get(id);
    return row && row.principal === principal ? row.session : undefined;
  }

  /**
   * Makes room for one more session of `principal`: the caller's own idle session used longest ago
   * when it is at its bound, the idle session used longest ago of the principal holding the most
   * when the endpoint is full; a refusal when there is none to close. A session being opened
   * takes its place until its ticket is committed or cancelled.
   */
  admit(principal: string): { ok: true; ticket: SessionTicket<S> } | { ok: false; refusal: LimitRefusal } {
    const refusal = this.#room(principal);
    if (refusal) return { ok: false, refusal };
    const row: Row<S> = {
      id: `\u0000opening ${++this.#pending}`,
      principal,
      session: undefined,
      lastActive: this.#now(),
      active: 1,
      used: false,
      listening: 0,
    };
    this.#rows.set(row.id, row);
    let done = false;
    return {
      ok: true,
      ticket: {
        commit: (id, session) => {
          if (done) return;
          done = true;
          this.#rows.delete(row.id);
          row.id = id;
          row.session = session;
          row.active = 0;
          row.lastActive = this.#now();
          this.#rows.set(id, row);
        },
        cancel: () => {
          if (done) return;
          done = true;
          this.#rows.delete(row.id);
        },
      },
    };
  }

  #room(principal: string): LimitRefusal | undefined {
    const now = this.#now();
    const mine = [...this.#rows.values()].filter((r) => r.principal === principal);
    if (mine.length >= this.perPrincipal) {
      const victim = idlest(mine, now);
      if (!victim)
        return limitRefusal(
          'legacy-sessions-per-caller',
          this.perPrincipal,
          `this caller has ${this.perPrincipal} legacy sessions in use; close one (DELETE) first`,
        );
      this.#evict(victim);
    }
    if (this.#rows.size < this.max) return undefined;
    const byPrincipal = new Map<string, Array<Row<S>>>();
    for (const row of this.#rows.values()) {
      const list = byPrincipal.get(row.principal);
      if (list) list.push(row);
      else byPrincipal.set(row.principal, [row]);
    }
    // Tier by tier from those holding the most, the idlest session of the tier gives way.
    const tiers = new Map<number, Array<Row<S>>>();
    for (const rows of byPrincipal.values()) tiers.set(rows.length, [...(tiers.get(rows.length) ?? []), ...rows]);
    for (const count of [...tiers.keys()].sort((a, b) => b - a)) {
      const victim = idlest(tiers.get(count)!, now);
      if (!victim) continue;
      this.#evict(victim);
      return undefined;
    }
    return limitRefusal('legacy-sessions', this.max, `all ${this.max} legacy sessions are in use or listened to`);
  }

  /** Forgets a session (it closed). */
  delete(id: string): void {
    this.#rows.delete(id);
  }

  /**
   * The session's principal is now `principal` (its client's credentials were refreshed, and the
   * upstream took the new ones).
   */
  rebind(id: string, principal: string): void {
    const row = this.#rows.get(id);
    if (row) row.principal = principal;
  }

  /**
   * Serves `request` in the session its `Mcp-Session-Id` names, if `principal` opened it, or
   * `passes` says the session may pass to this caller (its client's credentials were refreshed);
   * 404 otherwise. A POST or DELETE is activity until answered (a streamed answer until it ends);
   * the GET stream is not (a session only listening is idle, and closes when idle long enough).
   */
  async serve(
    request: Request,
    principal: string,
    forward: (session: S) => Promise<Response>,
    passes?: (session: S) => boolean,
  ): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    const row = id === null ? undefined : this.#rows.get(id);
    const session = row?.session !== undefined && (row.principal === principal || passes?.(row.session)) ? row.session : undefined;
    if (id === null || session === undefined) return sessionNotFound();
    if (request.method === 'GET') return this.#listened(row!, await forward(session));
    const ended = this.begin(id);
    try {
      return whileServed(await forward(session), ended);
    } catch (e) {
      ended();
      throw e;
    }
  }

  /** Counts a session's GET stream as listening while its answer streams. */
  #listened(row: Row<S>, response: Response): Response {
    if (!response.ok) return response;
    row.listening++;
    let ended = false;
    return whileServed(response, () => {
      if (ended) return;
      ended = true;
      row.listening--;
    });
  }

  /** Marks a request on `id` begun; the returned function marks it ended (idempotent). */
  begin(id: string): () => void {
    const row = this.#rows.get(id);
    if (!row) return noop;
    row.active++;
    row.used = true;
    row.lastActive = this.#now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      row.active--;
      row.lastActive = this.#now();
    };
  }

  /** Every session, forgotten (to close them all). */
  drain(): S[] {
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const all = [...this.#rows.values()].flatMap((r) => (r.session === undefined ? [] : [r.session]));
    this.#rows.clear();
    return all;
  }

  #evict(row: Row<S>): void {
    this.#rows.delete(row.id);
    if (row.session !== undefined) this.#close(row.session);
  }

  #sweep(): void {
    const cutoff = this.#now() - this.idleMs;
    for (const row of [...this.#rows.values()]) if (row.active === 0 && row.lastActive <= cutoff) this.#evict(row);
  }
}

/**
 * How long a session must have been without a request before it may give way to another: one that
 * never had a request after its `initialize` (as a flood of bare ones), after a second; one its
 * client has used, after half a minute, so a client in the middle of its work keeps its session.
 */
export const EVICTABLE_AFTER_MS = { unused: 1000, used: 30_000 } as const;

/**
 * The session that gives way first of `rows`: the idlest never used, else the idlest used one,
 * each only once idle long enough (`EVICTABLE_AFTER_MS`), with no request in progress and no
 * client listening.
 */
function idlest<S>(rows: ReadonlyArray<Row<S>>, now: number): Row<S> | undefined {
  let best: Row<S> | undefined;
  for (const r of rows) {
    if (r.active > 0 || r.listening > 0 || r.session === undefined || now - r.lastActive < EVICTABLE_AFTER_MS[r.used ? 'used' : 'unused'])
      continue;
    if (!best || (best.used && !r.used) || (best.used === r.used && r.lastActive < best.lastActive)) best = r;
  }
  return best;
}

function noop(): void {}
