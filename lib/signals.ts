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
