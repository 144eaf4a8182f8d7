/**
 * Fair shares of the upstream sessions held for minutes rather than for a call: a parked MRTR call
 * keeps its session busy until its retry comes, and a principal's listens keep theirs. Such
 * holdings are admitted within a budget (the pool's sessions less the reserve kept for callers
 * that hold none) and, for parked calls, a quota per principal. When either is full, a holding of
 * the principal that holds the most (the newcomer's own, when it holds as many) is released to make
 * room: its oldest parked call, else its newest listen. This module only counts and chooses; what
 * a release does is the holder's (its `release` callback).
 */
import { limitRefusal, type LimitRefusal } from '../util/limits.ts';
import { DEFAULTS } from '../util/defaults.ts';

/** What is held: a parked call, or the upstream session of a principal's listens. */
export type HoldingKind = 'parked' | 'listen';

/** One admitted holding. */
export interface Holding {
  readonly kind: HoldingKind;
  readonly principal: string;
  /** Gives the holding back (idempotent): the holder calls it when it ends on its own. */
  end(): void;
}

export interface SharesOptions {
  /** Holdings in all: a number, or read at each admission (the pool's sessions less its reserve). */
  readonly budget: number | (() => number);
  /** Parked calls one principal may hold (default 16): beyond, its oldest is released. */
  readonly parkedPerPrincipal?: number;
}

interface Item extends Holding {
  readonly seq: number;
  /** Releases the holding for someone else (the holder ends what it holds). */
  readonly release: () => void;
  /** Whether it can be released now (a parked call being resumed cannot). */
  readonly releasable: () => boolean;
  ended: boolean;
}

/** The admitted holdings, by principal, oldest first. */
export class Shares {
  readonly #options: SharesOptions;
  readonly #byPrincipal = new Map<string, Item[]>();
  #total = 0;
  #seq = 0;

  constructor(options: SharesOptions) {
    this.#options = options;
  }

  /** Holdings admitted now. */
  get size(): number {
    return this.#total;
  }

  /** Holdings in all that may be admitted at once (at least 1). */
  get budget(): number {
    const b = this.#options.budget;
    return Math.max(1, typeof b === 'function' ? b() : b);
  }

  /** Parked calls one principal may hold. */
  get parkedPerPrincipal(): number {
    return Math.max(1, this.#options.parkedPerPrincipal ?? DEFAULTS.parkedPerCaller);
  }

  /** What `principal` holds now, of `kind` (or of both). */
  held(principal: string, kind?: HoldingKind): number {
    const mine = this.#byPrincipal.get(principal);
    if (!mine) return 0;
    return kind === undefined ? mine.length : mine.filter((i) => i.kind === kind).length;
  }

  /**
   * Admits a holding of `principal`, releasing another first when a quota or the budget is full;
   * a refusal when nothing could be released. `release` is called (at most once) when the holding
   * must give way; `releasable` tells whether it can now.
   */
  admit(kind: HoldingKind, principal: string, release: () => void, releasable: () => boolean = () => true): Holding | LimitRefusal {
    if (kind === 'parked') {
      const quota = this.parkedPerPrincipal;
      // The caller's own oldest parked call gives way to its newest (abandoned calls go first).
      for (;;) {
        const parked = (this.#byPrincipal.get(principal) ?? []).filter((i) => i.kind === 'parked');
        if (parked.length < quota) break;
        const oldest = parked.find((i) => i.releasable());
        if (!oldest) return limitRefusal('parked', quota, `this caller has ${quota} calls waiting for input`, { scope: 'caller' });
        this.#release(oldest);
      }
    }
    while (this.#total >= this.budget) {
      const victim = this.#victim(principal);
      if (!victim)
        return limitRefusal(
          kind === 'parked' ? 'parked' : 'sessions',
          this.budget,
          'every upstream session that may be held by waiting calls and listens is held, and none can be released now',
        );
      this.#release(victim);
    }
    const item: Item = {
      kind,
      principal,
      seq: ++this.#seq,
      release,
      releasable,
      ended: false,
      end: () => this.#end(item),
    };
    const mine = this.#byPrincipal.get(principal);
    if (mine) mine.push(item);
    else this.#byPrincipal.set(principal, [item]);
    this.#total++;
    return item;
  }

  /**
   * The holding to release for `principal`: of the principals holding the most (the newcomer's own
   * first when it holds as many), a parked call (the oldest: abandoned calls go first), else a
   * listen (the newest: a listen that has been open long is the one most worth keeping); then the
   * same among those holding fewer.
   */
  #victim(principal: string): Item | undefined {
    const tiers = new Map<number, Item[][]>();
    for (const items of this.#byPrincipal.values()) {
      const tier = tiers.get(items.length);
      if (tier) tier.push(items);
      else tiers.set(items.length, [items]);
    }
    for (const count of [...tiers.keys()].sort((a, b) => b - a)) {
      const tier = tiers.get(count)!;
      const mine = tier.filter((items) => items[0]!.principal === principal);
      for (const group of mine.length > 0 ? [mine, tier.filter((items) => items[0]!.principal !== principal)] : [tier]) {
        const found = pick(group.flat());
        if (found) return found;
      }
    }
    return undefined;
  }

  #release(item: Item): void {
    this.#end(item);
    item.release();
  }

  #end(item: Item): void {
    if (item.ended) return;
    item.ended = true;
    this.#total--;
    const mine = this.#byPrincipal.get(item.principal);
    if (!mine) return;
    const at = mine.indexOf(item);
    if (at !== -1) mine.splice(at, 1);
    if (mine.length === 0) this.#byPrincipal.delete(item.principal);
  }
}

/** Of `items`: the oldest releasable parked call, else the newest releasable listen. */
function pick(items: readonly Item[]): Item | undefined {
  let parked: Item | undefined;
  let listen: Item | undefined;
  for (const i of items) {
    if (!i.releasable()) continue;
    if (i.kind === 'parked') {
      if (!parked || i.seq < parked.seq) parked = i;
    } else if (!listen || i.seq > listen.seq) listen = i;
  }
  return parked ?? listen;
}
