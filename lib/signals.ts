/**
 * A request's cancellation scope: one AbortController that aborts when any of its sources aborts
 * or its deadline passes, and lets go of every listener and timer when disposed. (Node 20's
 * `AbortSignal.any` keeps a reference from long-lived sources to every derived signal; a scope
 * made per request must not.)
 */

export interface Scope {
  readonly signal: AbortSignal;
  /** True when the deadline, not a source, ended the scope. */
  readonly timedOut: boolean;
  /** Aborts the scope (and everything watching its signal). */
  abort(reason?: unknown): void;
  /** Releases listeners and the timer; the signal stays as it is. Idempotent. */
  dispose(): void;
}

/** A scope that follows `sources` and, with `timeoutMs`, expires. */
export function scope(sources: ReadonlyArray<AbortSignal | undefined>, timeoutMs?: number): Scope {
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watched: AbortSignal[] = [];
  const onAbort = () => controller.abort();
  const dispose = () => {
    for (const s of watched) s.removeEventListener('abort', onAbort);
    watched.length = 0;
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  for (const s of sources) {
    if (!s) continue;
    if (s.aborted) {
      controller.abort();
      break;
    }
    s.addEventListener('abort', onAbort, { once: true });
    watched.push(s);
  }
  if (timeoutMs !== undefined && !controller.signal.aborted) {
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    timer.unref?.();
  }
  controller.signal.addEventListener('abort', dispose, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    abort: (reason) => controller.abort(reason),
    dispose,
  };
}
