/**
 * Tables of what is in flight, for records that come and go on every call: `IdTable` under ids a
 * counter hands out (0, 1, 2, …), `KeyedTable` under keys of any kind. The request path's
 * alternatives to a `Map`.
 *
 * Why not a `Map`: V8 never reuses a deleted slot of a `Map`'s table, so a map whose entries come
 * and go is copied into a new table every few insertions, and the table it leaves keeps pointing
 * at its entries and at the new table. Once one of those dropped tables has lived long enough to be
 * promoted, every young collection takes what it points to for live: every record that passes
 * through the map afterwards is copied, promoted and kept until the next full collection. Under
 * load that made most of a front's young-generation work. An `IdTable` is two arrays that are
 * never replaced except to grow or shrink, and a slot is cleared as soon as its entry leaves.
 */

/** Fewest slots of an `IdTable`. */
const MIN_SLOTS = 16;
/**
 * A table shrinks only from this many slots up (when at most an eighth full): below it, a load that
 * comes and goes in batches would grow and shrink it over and over, for a few kilobytes.
 */
const SHRINK_FROM = 1024;

/**
 * Records under ids a counter hands out. Open addressing with linear probing from `id & mask`: ids
 * handed out in order land in consecutive slots, and an entry that stays long only shifts later
 * ones by a slot.
 */
export class IdTable<T> {
  /** The id in each slot, -1 where empty. */
  #ids: number[];
  #values: Array<T | undefined>;
  #mask: number;
  #size = 0;

  constructor() {
    this.#ids = new Array<number>(MIN_SLOTS).fill(-1);
    this.#values = new Array<T | undefined>(MIN_SLOTS).fill(undefined);
    this.#mask = MIN_SLOTS - 1;
  }

  /** Entries in the table. */
  get size(): number {
    return this.#size;
  }

  /** The entry under `id`, if any. `id` must be a non-negative safe integer to be found. */
  get(id: number): T | undefined {
    if (!(id >= 0)) return undefined;
    const ids = this.#ids;
    for (let i = id & this.#mask; ; i = (i + 1) & this.#mask) {
      const at = ids[i]!;
      if (at === id) return this.#values[i];
      if (at === -1) return undefined;
    }
  }

  /** Puts `value` under `id` (a non-negative safe integer), replacing what was there. */
  set(id: number, value: T): void {
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`IdTable ids are non-negative integers, not ${id}`);
    const ids = this.#ids;
    let i = id & this.#mask;
    for (; ; i = (i + 1) & this.#mask) {
      const at = ids[i]!;
      if (at === id) {
        this.#values[i] = value;
        return;
      }
      if (at === -1) break;
    }
    ids[i] = id;
    this.#values[i] = value;
    this.#size++;
    // At most half full: probes stay short.
    if (this.#size * 2 > ids.length) this.#resize(ids.length * 2);
  }

  /** Removes the entry under `id`; true if there was one. */
  delete(id: number): boolean {
    if (!(id >= 0)) return false;
    const ids = this.#ids;
    const values = this.#values;
    const mask = this.#mask;
    let i = id & mask;
    for (; ; i = (i + 1) & mask) {
      const at = ids[i]!;
      if (at === id) break;
      if (at === -1) return false;
    }
    // Backward shift: the entries after it that probed past its slot move back, so no slot is
    // left marked deleted and lookups stop at the first empty one.
    for (let j = (i + 1) & mask; ids[j] !== -1; j = (j + 1) & mask) {
      const home = ids[j]! & mask;
      // Leave it when its home lies cyclically in (i, j]: it is reachable without crossing i.
      const reachable = i <= j ? i < home && home <= j : i < home || home <= j;
      if (reachable) continue;
      ids[i] = ids[j]!;
      values[i] = values[j];
      i = j;
    }
    ids[i] = -1;
    values[i] = undefined;
    this.#size--;
    if (ids.length >= SHRINK_FROM && this.#size * 8 < ids.length) this.#resize(ids.length / 2);
    return true;
  }

  /** The entries, oldest id first (a copy: the table may change while it is walked). */
  values(): T[] {
    const found: Array<[number, T]> = [];
    for (let i = 0; i < this.#ids.length; i++) if (this.#ids[i] !== -1) found.push([this.#ids[i]!, this.#values[i] as T]);
    return found.sort((a, b) => a[0] - b[0]).map(([, value]) => value);
  }

  #resize(slots: number): void {
    const ids = this.#ids;
    const values = this.#values;
    this.#ids = new Array<number>(slots).fill(-1);
    this.#values = new Array<T | undefined>(slots).fill(undefined);
    this.#mask = slots - 1;
    this.#size = 0;
    for (let i = 0; i < ids.length; i++) if (ids[i] !== -1) this.set(ids[i]!, values[i] as T);
  }
}

/**
 * A table under keys of any kind (request ids a peer chose, say) for records that come and go on
 * every call: a `Map` from each key to a number of its own, and the records in an `IdTable` under
 * those numbers. What the map's dropped tables keep alive is keys and numbers, never the records.
 * Listed in the order the keys were first set, as a `Map` does.
 */
export class KeyedTable<K, V> {
  readonly #numbers = new Map<K, number>();
  readonly #records = new IdTable<{ readonly key: K; value: V }>();
  #next = 0;

  get size(): number {
    return this.#numbers.size;
  }

  has(key: K): boolean {
    return this.#numbers.has(key);
  }

  get(key: K): V | undefined {
    const number = this.#numbers.get(key);
    return number === undefined ? undefined : this.#records.get(number)?.value;
  }

  set(key: K, value: V): this {
    const number = this.#numbers.get(key);
    if (number !== undefined) this.#records.get(number)!.value = value;
    else {
      const next = this.#next++;
      this.#numbers.set(key, next);
      this.#records.set(next, { key, value });
    }
    return this;
  }

  delete(key: K): boolean {
    const number = this.#numbers.get(key);
    if (number === undefined) return false;
    this.#numbers.delete(key);
    this.#records.delete(number);
    return true;
  }

  clear(): void {
    for (const number of this.#numbers.values()) this.#records.delete(number);
    this.#numbers.clear();
  }

  /** The keys (a copy: the table may change while it is walked). */
  keys(): K[] {
    return this.#records.values().map((r) => r.key);
  }

  /** The records (a copy). */
  values(): V[] {
    return this.#records.values().map((r) => r.value);
  }

  /** Keys and records (a copy). */
  entries(): Array<[K, V]> {
    return this.#records.values().map((r) => [r.key, r.value]);
  }
}
