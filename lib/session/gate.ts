/**
 * A gate that lets a bounded number of openings through at once, the rest waiting in line, first
 * come first served: starting an upstream server costs a process boot, and a crowd of new callers
 * must not spend every core on boots while the callers already served wait. A caller in line waits
 * its `ms` plus the boots ahead of it (the line moves one boot at a time: a caller behind thirty
 * others is not refused for the time their boots take). Callers the wrap already knows (served
 * before) may wait in a line served first: a flood of strangers cannot keep a known caller from a
 * new session. While callers already served are at work (`working`), each place rests after use,
 * so that strangers' boots leave them the cores. Not a limit on what is open, only on what is opening.
 */
import { availableParallelism } from 'node:os';
import { AdapterError } from '../core/errors.ts';
import { limitRefusal, type LimitRefusal } from '../util/limits.ts';
import type { CancelSignal } from '../util/signals.ts';
import { DEFAULTS } from '../util/defaults.ts';

/** How long a place rests after use, as a multiple of how long it was held: in use a third of its time at the most. */
const REST = 2;

/** Callers whose last turn is remembered (the latest). */
const TURNS_KEPT = 4096;

/** Places known callers have beside the gate's size. */
const KNOWN_PLACES = 1;

/** Openings at once by default: half the cores (at least one), the rest left to the servers already running. */
export function defaultOpenings(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

/** Upstream connections opened at once to a server reached over HTTP: opening one boots nothing here. */
export const HTTP_OPENINGS = 16;

/** How long a boot is taken to last before one has been seen. */
const FIRST_BOOT_MS = 500;

/** One caller in line; it says whether it is (by now) a known caller. */
interface Waiter {
  readonly turn: () => void;
  readonly known: () => boolean;
  readonly who: string;
  /** The line moved, `ahead` of it now (for a known caller, the known callers): the wait left covers at least their turns. */
  readonly moved: (ahead: number) => void;
}

/**
 * At most `size` holders at once, the others waiting their turn in the order they came. While
 * callers already served are at work, each place, once given back, rests twice as long as it was
 * held (in use a third of its time at the most), so that a crowd's openings boot servers on a
 * third of a core each at the most, leaving the rest to the servers already serving; with nobody
 * at work, boots go at full speed. A known caller has one more place of its own, and takes a
 * resting place at once.
 */
export class Gate {
  readonly size: number;
  #held = 0;
  /** Who waits, in order of arrival; each says whether it is (by now) a known caller. */
  readonly #line: Waiter[] = [];
  /** Places held now, by caller. */
  readonly #holding = new Map<string, number>();
  /** When each caller last got a place (the latest kept): among known callers, one served longest ago goes first. */
  readonly #lastTurn = new Map<string, number>();
  /** The places resting (counted as held), oldest first. */
  readonly #resting: Array<ReturnType<typeof setTimeout>> = [];
  readonly #rest: boolean;
  readonly #working: () => boolean;
  /** How long a place is held, lately (a moving average): what a turn in line costs. */
  #bootMs = FIRST_BOOT_MS;

  /**
   * `rest: false` gives a place back at once (for tests and in-process servers, whose openings
   * cost nothing). `working`: whether callers already served are at work now (their sessions in
   * use): places rest only then (default: always).
   */
  constructor(size: number, options: { rest?: boolean; working?: () => boolean } = {}) {
    this.size = Math.max(1, size);
    this.#rest = options.rest ?? true;
    this.#working = options.working ?? always;
  }

  /** Openings under way. */
  get held(): number {
    return this.#held;
  }

  /** Waiting in line. */
  get waiting(): number {
    return this.#line.length;
  }

  /**
   * How long the turns of `ahead` callers in line take, as boots have gone lately (their rests
   * included while callers already served are at work).
   */
  #turnsOf(ahead: number): number {
    const cycle = this.#rest && this.#working() ? this.#bootMs * (1 + REST) : this.#bootMs;
    return Math.ceil(ahead / this.size) * cycle;
  }

  /**
   * Passes the gate: resolves with the function that gives the place back (idempotent), or with
   * `undefined` when no place came within `ms` plus the time the turns of those ahead of it in
   * line take. Rejects when `signal` aborts while waiting.
   * `known`: whether the caller is one already known, asked again whenever a place frees (a caller
   * served meanwhile becomes known): known callers are served first, the one whose last turn was
   * longest ago (`who` names the caller) before the others, then first come first served.
   */
  enter(ms: number, signal?: CancelSignal, known: () => boolean = never, who = ''): Promise<(() => void) | undefined> {
    if (this.#held < this.size && this.#line.length === 0) return Promise.resolve(this.#take(who));
    if (known() && !this.#line.some((w) => w.known()) && !this.#holding.has(who)) {
      // A known caller has a place of its own beside the others: a crowd of strangers' boots never keeps it waiting.
      if (this.#held < this.size + KNOWN_PLACES) return Promise.resolve(this.#take(who));
      // Nor does it wait out a rest: the rest holds strangers' boots back, not theirs.
      if (this.#resting.length > 0) {
        clearTimeout(this.#resting.shift());
        this.#held--;
        return Promise.resolve(this.#take(who));
      }
    }
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new AdapterError('closed', 'the request was cancelled while waiting to open an upstream session'));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = this.#line.indexOf(waiter);
        if (at !== -1) this.#line.splice(at, 1);
      };
      const waiter: Waiter = {
        turn: () => {
          done();
          resolve(this.#take(who));
        },
        known,
        who,
        moved: (ahead) => {
          const due = performance.now() + this.#turnsOf(ahead + 1);
          if (due <= deadline) return;
          deadline = due;
          clearTimeout(timer);
          timer = setTimeout(expire, due - performance.now());
        },
      };
      const onAbort = () => {
        done();
        reject(new AdapterError('closed', 'the request was cancelled while waiting to open an upstream session'));
      };
      // The wait covers the boots of those ahead (a known caller has only known callers ahead), and
      // is re-armed as the line moves: a caller is refused when the line stalls, not because boots
      // run slower than they did lately.
      const ahead = known() ? this.#line.filter((w) => w.known()).length : this.#line.length;
      let extended = false;
      const expire = (): void => {
        // Next in line behind boots that take longer than boots lately have: one more boot's wait, once.
        if (!extended && this.#line[0] === waiter) {
          extended = true;
          deadline = performance.now() + this.#turnsOf(1);
          timer = setTimeout(expire, this.#turnsOf(1));
          return;
        }
        done();
        resolve(undefined);
      };
      let deadline = performance.now() + Math.max(0, ms) + this.#turnsOf(ahead + 1);
      let timer = setTimeout(expire, deadline - performance.now());
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#line.push(waiter);
    });
  }

  #take(who: string): () => void {
    this.#held++;
    this.#holding.set(who, (this.#holding.get(who) ?? 0) + 1);
    const since = performance.now();
    this.#lastTurn.delete(who);
    this.#lastTurn.set(who, since);
    if (this.#lastTurn.size > TURNS_KEPT) this.#lastTurn.delete(this.#lastTurn.keys().next().value!);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const holds = (this.#holding.get(who) ?? 1) - 1;
      if (holds > 0) this.#holding.set(who, holds);
      else this.#holding.delete(who);
      const held = performance.now() - since;
      // A place given back at once booted nothing (its caller found nothing to open): it neither
      // rests nor tells how long a boot takes.
      if (held < 1) return this.#free();
      this.#bootMs += (held - this.#bootMs) / 4;
      if (!this.#rest || this.#line.some((w) => w.known()) || !this.#working()) return this.#free();
      const rest = setTimeout(() => {
        this.#resting.splice(this.#resting.indexOf(rest), 1);
        this.#free();
      }, held * REST);
      // Bookkeeping only: whoever waits for the place holds the process with a timer of its own.
      rest.unref?.();
      this.#resting.push(rest);
    };
  }

  #free(): void {
    this.#held--;
    const line = this.#line;
    let known: (typeof line)[number] | undefined;
    const lastTurn = (w: (typeof line)[number]) => this.#lastTurn.get(w.who) ?? Number.NEGATIVE_INFINITY;
    for (const w of line) if (w.known() && (!known || lastTurn(w) < lastTurn(known))) known = w;
    if (known) known.turn();
    // The place known callers have beside the others is theirs alone.
    else if (this.#held < this.size && line[0]) line[0].turn();
    else return;
    let knownAhead = 0;
    line.forEach((w, ahead) => {
      const isKnown = w.known();
      w.moved(isKnown ? knownAhead : ahead);
      if (isKnown) knownAhead++;
    });
  }
}

function never(): boolean {
  return false;
}

function always(): boolean {
  return true;
}

/**
 * The callers served lately (a session opened for them in the last `ttlMs`), the newest kept: the
 * ones whose openings go first at a `Gate`. Bounded: the caller met longest ago is forgotten first.
 */
export class Acquaintances {
  readonly #met = new Map<string, number>();
  readonly #max: number;
  readonly #ttlMs: number;

  constructor(options: { max?: number; ttlMs?: number } = {}) {
    this.#max = Math.max(1, options.max ?? 4096);
    this.#ttlMs = options.ttlMs ?? DEFAULTS.acquaintanceTtlMs;
  }

  /** Records that `principal` was served now. */
  met(principal: string): void {
    this.#met.delete(principal);
    this.#met.set(principal, Date.now());
    if (this.#met.size > this.#max) this.#met.delete(this.#met.keys().next().value!);
  }

  /** Whether `principal` was served within the last `ttlMs`. */
  knows(principal: string): boolean {
    const at = this.#met.get(principal);
    return at !== undefined && Date.now() - at < this.#ttlMs;
  }
}

/**
 * What openings need of where sessions come from (a session backend): its kind, and its warm spare
 * processes, which start through the same gate and can be claimed by a connect that then boots nothing.
 */
export interface WarmSpares {
  readonly kind?: 'in-process' | 'stdio' | 'http';
  /** Does its own background starts through `gate`, in turn with a wrap's openings. */
  share?(gate: Gate): void;
  /** Claims a process started ahead for the next connect, if one is free. */
  claimWarm?(): boolean;
}

/**
 * The turns a wrap's upstream openings take, its pool's and its legacy sessions' alike: at one
 * gate, the callers served lately first; none is needed when a process started ahead can be taken
 * (while strangers wait, only a known caller may take it). The backend's own warm spares start
 * through the same gate.
 */
export class Openings {
  readonly gate: Gate;
  readonly acquaintances: Acquaintances;
  readonly #backend: WarmSpares;

  /** What tells whether callers already served are at work (see `working`). */
  readonly #work = new Set<() => boolean>();

  /** `size`: openings at once (default half the cores, each may boot a server process; 16 for a server reached over HTTP). */
  constructor(backend: WarmSpares, options: { size?: number } = {}) {
    this.gate = new Gate(options.size ?? (backend.kind === 'http' ? HTTP_OPENINGS : defaultOpenings()), { working: () => this.#working() });
    this.acquaintances = new Acquaintances();
    this.#backend = backend;
    backend.share?.(this.gate);
  }

  /**
   * A turn to open an upstream connection for `principal`: the function that ends it (call it once
   * the server has booted), or `undefined` when none came within `ms`.
   */
  turn(principal: string, ms: number, signal?: CancelSignal): Promise<(() => void) | undefined> {
    const known = this.acquaintances.knows(principal);
    if ((known || this.gate.waiting === 0) && this.#backend.claimWarm?.()) return Promise.resolve(noop);
    return this.gate.enter(ms, signal, () => this.acquaintances.knows(principal), principal);
  }

  /**
   * Adds what tells whether callers already served are at work (a pool's sessions, a wrap's
   * legacy sessions): while any is, the gate's places rest after use. Returns what removes it.
   */
  working(busy: () => boolean): () => void {
    this.#work.add(busy);
    return () => this.#work.delete(busy);
  }

  #working(): boolean {
    for (const busy of this.#work) if (busy()) return true;
    return false;
  }

  /** Records that `principal` was served: its next openings go first. */
  met(principal: string): void {
    this.acquaintances.met(principal);
  }

  /** The refusal of a caller whose turn did not come in time. */
  refusal(): LimitRefusal {
    const gate = this.gate;
    return limitRefusal(
      'sessions-opening',
      gate.size,
      `${gate.held + gate.waiting} callers were opening or waiting to open an upstream connection; try again`,
      { scope: 'server' },
    );
  }
}

function noop(): void {}
