/**
 * Cancellation for the request path. Every request served makes a few of these, so they are plain
 * objects rather than `AbortController`s (an `AbortSignal` is an `EventTarget`: dear to create,
 * listen to and drop, and Node 20's `AbortSignal.any` keeps a reference from long-lived sources to
 * every derived signal). An `AbortSignal` is a `CancelSignal`, so callers may pass either.
 */

/** What the request path reads from a cancellation source: `AbortSignal` has this shape. */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A cancellation source: abort it once, and its listeners run once. */
export class Cancellation implements CancelSignal {
  #aborted = false;
  #listeners: Array<() => void> | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** The signal to hand out (the object itself). */
  get signal(): CancelSignal {
    return this;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.#aborted) return;
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const list = this.#listeners;
    if (!list) return;
    const i = list.lastIndexOf(listener);
    if (i !== -1) list.splice(i, 1);
  }

  /** Aborts: every listener runs once, in order; later calls do nothing. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const list = this.#listeners;
    this.#listeners = undefined;
    if (list) for (const listener of list) listener();
  }
}

export interface Scope {
  readonly signal: CancelSignal;
  /** True when the deadline, not a source, ended the scope. */
  readonly timedOut: boolean;
  /** Aborts the scope (and everything watching its signal). */
  abort(): void;
  /** Releases listeners and the timer; the signal stays as it is. Idempotent. */
  dispose(): void;
}

class ScopeImpl extends Cancellation implements Scope {
  timedOut = false;
  #sources: CancelSignal[] | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onSource = (): void => this.abort();

  constructor(sources: ReadonlyArray<CancelSignal | undefined>, timeoutMs: number | undefined) {
    super();
    for (const s of sources) {
      if (!s) continue;
      if (s.aborted) {
        super.abort();
        return;
      }
      s.addEventListener('abort', this.#onSource, { once: true });
      (this.#sources ??= []).push(s);
    }
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(() => {
        this.timedOut = true;
        this.abort();
      }, timeoutMs);
      this.#timer.unref?.();
    }
  }

  override abort(): void {
    this.dispose();
    super.abort();
  }

  dispose(): void {
    const sources = this.#sources;
    if (sources) {
      this.#sources = undefined;
      for (const s of sources) s.removeEventListener('abort', this.#onSource);
    }
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** A scope that follows `sources` and, with `timeoutMs`, expires. */
export function scope(sources: ReadonlyArray<CancelSignal | undefined>, timeoutMs?: number): Scope {
  return new ScopeImpl(sources, timeoutMs);
}

/** A deadline in a `DeadlineList`: pass it back to `remove` once it no longer matters. */
export interface Deadline<T> {
  readonly item: T;
  readonly due: number;
  /** @internal */ prev: Deadline<T> | undefined;
  /** @internal */ next: Deadline<T> | undefined;
  /** @internal */ listed: boolean;
}

/**
 * Many deadlines on one timer: for the request path, where every call has a deadline and nearly
 * every call ends well before it. Adding and removing cost no timer (one `setTimeout` per call is
 * a timer object, a list Node keeps per duration, and at low load that list made and dropped on
 * every call). The list is kept in due order (calls of one length are appended); the one timer is
 * armed for the earliest, unreferenced, and left armed when the list empties (it then fires once
 * and does nothing).
 */
export class DeadlineList<T> {
  readonly #onExpire: (item: T) => void;
  readonly #now: () => number;
  #head: Deadline<T> | undefined;
  #tail: Deadline<T> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerDue = Number.POSITIVE_INFINITY;
  #size = 0;

  constructor(onExpire: (item: T) => void, now: () => number = Date.now) {
    this.#onExpire = onExpire;
    this.#now = now;
  }

  /** Deadlines listed now. */
  get size(): number {
    return this.#size;
  }

  /** `item` expires in `ms` unless removed first. */
  add(item: T, ms: number): Deadline<T> {
    const due = this.#now() + ms;
    const d: Deadline<T> = { item, due, prev: undefined, next: undefined, listed: true };
    let after = this.#tail;
    while (after && after.due > due) after = after.prev;
    if (after) {
      d.prev = after;
      d.next = after.next;
      if (after.next) after.next.prev = d;
      else this.#tail = d;
      after.next = d;
    } else {
      d.next = this.#head;
      if (this.#head) this.#head.prev = d;
      else this.#tail = d;
      this.#head = d;
    }
    this.#size++;
    if (due < this.#timerDue) this.#arm(due);
    return d;
  }

  /** Forgets a deadline (idempotent). */
  remove(d: Deadline<T>): void {
    if (!d.listed) return;
    d.listed = false;
    if (d.prev) d.prev.next = d.next;
    else this.#head = d.next;
    if (d.next) d.next.prev = d.prev;
    else this.#tail = d.prev;
    d.prev = undefined;
    d.next = undefined;
    this.#size--;
  }

  #arm(due: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerDue = due;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, due - this.#now()));
    this.#timer.unref?.();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    const now = this.#now();
    while (this.#head && this.#head.due <= now) {
      const d = this.#head;
      this.remove(d);
      this.#onExpire(d.item);
    }
    if (this.#head) this.#arm(this.#head.due);
  }
}
