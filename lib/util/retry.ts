/**
 * Retrying with backoff, in one place (p-retry underneath): what every reconnect and reopen in the
 * library uses. Throw `GiveUp` from the attempt for a failure that no retry can fix.
 */
import pRetry, { AbortError } from 'p-retry';

export interface RetryOptions {
  /** Attempts after the first (default 3). */
  readonly retries?: number;
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly signal?: AbortSignal;
}

/** Thrown from an attempt: stop retrying and fail with this error. */
export const GiveUp = AbortError;

/** Runs `attempt` until it succeeds, with exponential backoff between failures. */
export function retry<T>(attempt: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  return pRetry(attempt, {
    retries: options.retries ?? 3,
    minTimeout: options.minDelayMs ?? 100,
    maxTimeout: options.maxDelayMs ?? 2000,
    factor: 2,
    unref: true,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
