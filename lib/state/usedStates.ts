/**
 * Which sealed states were used already: a state is single use, so the first request that brings
 * it takes it and every later one is refused, for as long as the state could still be opened (its
 * expiry). An interface (the store a fleet shares is another), and the in-process store: bounded,
 * and when full it forgets the entries nearest their expiry and from then on refuses every state
 * that expires no later than those did (a floor), so nothing forgotten can be used twice.
 */

/** Takes states by id, once each. */
export interface UsedStates {
  /**
   * Takes the state `id`, which expires at `expiresAt` (ms): true the first time, false when it
   * was taken before (or can no longer be told apart from one that was).
   */
  claim(id: string, expiresAt: number): boolean | Promise<boolean>;
}

/** The used states of one process. */
export class InProcessUsedStates implements UsedStates {
  readonly #taken = new Map<string, number>();
  readonly #max: number;
  readonly #now: () => number;
  /** States expiring at or before this are refused: entries that old were forgotten. */
  #floor = Number.NEGATIVE_INFINITY;

  /** `max`: most ids remembered at once (default 100,000). */
  constructor(options: { max?: number; now?: () => number } = {}) {
    this.#max = Math.max(1, options.max ?? 100_000);
    this.#now = options.now ?? Date.now;
  }

  /** Ids remembered now. */
  get size(): number {
    return this.#taken.size;
  }

  claim(id: string, expiresAt: number): boolean {
    if (expiresAt <= this.#floor || this.#taken.has(id)) return false;
    if (this.#taken.size >= this.#max) this.#makeRoom();
    this.#taken.set(id, expiresAt);
    return true;
  }

  /** Forgets the expired, then (if still full) the tenth nearest expiry, raising the floor past them. */
  #makeRoom(): void {
    const now = this.#now();
    for (const [id, at] of this.#taken) if (at < now) this.#taken.delete(id);
    if (this.#taken.size < this.#max) return;
    const soonest = [...this.#taken.entries()].sort((a, b) => a[1] - b[1]).slice(0, Math.max(1, Math.ceil(this.#max / 10)));
    for (const [id, at] of soonest) {
      this.#taken.delete(id);
      if (at > this.#floor) this.#floor = at;
    }
  }
}
