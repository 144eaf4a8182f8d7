/**
 * The wait for an answer from a server that may still be starting: a server process that has not
 * said a word yet is not silent, it is booting (npx fetching it, a container starting), so the
 * wait goes on past `timeoutMs`, a `timeoutMs` at a time, telling `waiting` each time, until it
 * speaks or `startMs` have passed since it was started. Silence from a server that has spoken (or
 * from any other transport) ends the wait at `timeoutMs`.
 */
import { StdioChildTransport } from '../transport/stdioChild.ts';
import type { Transport } from '../transport/transport.ts';

/** How long to wait, and since when the server has been starting. */
export interface StartupBounds {
  readonly timeoutMs: number;
  readonly startMs: number;
  /** When the server process was started (ms since the epoch). */
  readonly startedAt: number;
}

/**
 * Arms the wait on `transport`: `waiting(waitedMs)` each time it goes on for a server that has
 * said nothing yet, `expired(silent)` once it ends (`silent`: the server never said a word).
 * Returns what cancels it.
 */
export function startupTimer(
  transport: Transport,
  bounds: StartupBounds,
  on: { waiting(waitedMs: number): void; expired(silent: boolean): void },
): () => void {
  let timer: ReturnType<typeof setTimeout>;
  const fire = (): void => {
    const waited = Date.now() - bounds.startedAt;
    const starting = transport instanceof StdioChildTransport && !transport.spoke;
    if (!starting || waited >= bounds.startMs) return on.expired(starting);
    on.waiting(waited);
    timer = setTimeout(fire, Math.min(bounds.timeoutMs, bounds.startMs - waited));
  };
  timer = setTimeout(fire, bounds.timeoutMs);
  return () => clearTimeout(timer);
}

/** What a waiting probe says: how long the server has said nothing, and (`then`) what it waits for. */
export function waitingReason(waitedMs: number, startMs: number, then: string): string {
  return `the server has said nothing in ${Math.round(waitedMs / 1000)} s: waiting for it to start (up to ${Math.round(startMs / 1000)} s)${then}`;
}
