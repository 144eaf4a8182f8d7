/**
 * Where parked calls wait for their retry, by the id their `requestState` names: an interface and
 * the store of one process. A parked call is live (an upstream call in flight, pushes waiting), so
 * it stays in the process that parked it; a fleet's store also tells the other replicas whose it is.
 * Not here: each principal's fair share (`session/shares.ts`), or what a parked call does.
 */
import { DEFAULTS } from '../util/defaults.ts';

/** The parked calls of a broker, by id. */
export interface ParkedCallStore<T> {
  /** Calls parked now. */
  readonly size: number;
  /** True when a new call may not start: as many calls are parked as the store allows. */
  readonly full: boolean;
  /**
   * Parks `call` under `id` (again, after each round). Always accepted: the bound applies when a
   * call starts (`full`), so a call already answering rounds never loses its place to a newcomer.
   */
  put(id: string, call: T): void;
  /** The call parked under `id`, if one is (a fleet's store may have to ask before it knows). */
  get(id: string): T | undefined | Promise<T | undefined>;
  /** Un-parks the call under `id` (resumed, or released); nothing when none is parked there. */
  delete(id: string): void;
  /** The calls parked here, in this process (to release them all when the server closes). */
  values(): IterableIterator<T>;
}

/** The parked calls of one process. */
export class InProcessParkedCalls<T> implements ParkedCallStore<T> {
  readonly #calls = new Map<string, T>();
  /** Most calls parked before a new one is refused. */
  readonly max: number;

  /** `max`: most calls parked at once before new calls are refused (default 10,000). */
  constructor(options: { max?: number } = {}) {
    this.max = Math.max(0, options.max ?? DEFAULTS.parked);
  }

  get size(): number {
    return this.#calls.size;
  }

  get full(): boolean {
    return this.#calls.size >= this.max;
  }

  put(id: string, call: T): void {
    this.#calls.set(id, call);
  }

  get(id: string): T | undefined {
    return this.#calls.get(id);
  }

  delete(id: string): void {
    this.#calls.delete(id);
  }

  values(): IterableIterator<T> {
    return this.#calls.values();
  }
}
