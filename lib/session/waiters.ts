/**
 * Callers of the pool waiting for something that may make room (a call ends, a session closes or
 * opens, a hold is released): all are woken together whenever it may have come, and each looks
 * again. Not here: what they look for.
 */
import { AdapterError } from '../core/errors.ts';
import type { CancelSignal } from '../util/signals.ts';

const CANCELLED = 'the request was cancelled while waiting for an upstream session';

/** The waiting callers of one pool. */
export class Waiters {
  readonly #waiting = new Set<() => void>();

  /** Waits for the next `wake()`, at most `ms` (resolves true when it ran out). Rejects when `signal` aborts. */
  change(signal: CancelSignal | undefined, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (signal?.aborted) return reject(new AdapterError('closed', CANCELLED));
      const done = (ranOut: boolean) => {
        clearTimeout(timer);
        this.#waiting.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        resolve(ranOut);
      };
      const wake = () => done(false);
      const onAbort = () => {
        done(false);
        reject(new AdapterError('closed', CANCELLED));
      };
      // Not unref'd: the caller is owed an answer, the process stays up to give it.
      const timer = setTimeout(() => done(true), Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.add(wake);
    });
  }

  /** Wakes every waiting caller. */
  wake(): void {
    if (this.#waiting.size === 0) return;
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const wake of waiting) wake();
  }
}
