/**
 * Reading an expected-failure value (`{ ok: true, value } | { ok: false, error }`) in a spec: the
 * value of one that must have succeeded, or the error of one that must have failed, each failing
 * the test with what came instead (an error's code and message, or the value). Not a matcher set.
 */
import * as assert from 'uvu/assert';

type Succeeded<T> = { readonly ok: true; readonly value: T };
type Failed<E> = { readonly ok: false; readonly error: E };

function describe(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) {
    const { code, message } = error as { code?: unknown; message: unknown };
    return code === undefined ? String(message) : `${String(code)}: ${String(message)}`;
  }
  return JSON.stringify(error);
}

/** The value of an outcome that must be `ok`; fails naming the error's code and message otherwise. */
export function okValue<T, E>(outcome: Succeeded<T> | Failed<E>, label?: string): T {
  if (!outcome.ok) {
    assert.unreachable(`${label ? `${label}: ` : ''}expected ok, got error ${describe(outcome.error)}`);
    throw new Error('unreachable');
  }
  return outcome.value;
}

/** The error of an outcome that must have failed; fails showing the value otherwise. */
export function failure<T, E>(outcome: Succeeded<T> | Failed<E>, label?: string): E {
  if (outcome.ok) {
    assert.unreachable(`${label ? `${label}: ` : ''}expected an error, got ${JSON.stringify(outcome.value)}`);
    throw new Error('unreachable');
  }
  return outcome.error;
}
