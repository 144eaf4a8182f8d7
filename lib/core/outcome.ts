/**
 * Outcome values: how every pure function in `core` reports an expected failure.
 * A failure carries the wire error that the edge should send; nothing here throws for bad input.
 */
import type { WireError } from './errors.ts';

/** A success holding `value`, or a failure holding the wire error to answer with. */
export type Outcome<T, E = WireError> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

/** Wraps a value as a success. */
export function ok<T>(value: T): { readonly ok: true; readonly value: T } {
  return { ok: true, value };
}

/** Wraps a wire error as a failure. */
export function fail<E = WireError>(error: E): { readonly ok: false; readonly error: E } {
  return { ok: false, error };
}
