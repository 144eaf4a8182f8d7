/**
 * Writes to a stream so that the writes of one turn of the event loop leave together, joined into
 * one string and one write, when the turn ends. Under load that saves a system call here and a read
 * at the other end per message, and costs less than corking the stream (whose writes of one turn
 * each become an entry of its buffer, and then one piece of a `writev`); a lone message waits only
 * for the rest of its turn (no timer: the turn ends as soon as its callbacks have run). A write its
 * caller knows to be alone (nothing else will be due this turn: the one exchange in flight) leaves
 * at once when nothing is held, so the other end starts on it while this turn finishes its own work.
 */

/** What the batcher needs of a Node `Writable`. */
export interface TurnWritable {
  write(chunk: string): boolean;
  /** False once the stream has ended or was destroyed: what a turn held is then dropped. */
  readonly writable: boolean;
  /** True after a write found the stream's buffer full, until it drains (`'drain'`). */
  readonly writableNeedDrain: boolean;
}

/**
 * Writes one chunk at the end of the turn, or at once when `lone` and nothing is held (so the order
 * of writes is kept). It returns false, as `Writable.write` does, while the stream's buffer is
 * full: a caller that can wait for `'drain'` should.
 */
export interface TurnWrite {
  (chunk: string, lone?: boolean): boolean;
  /** Writes what this turn holds now: before the stream is ended, which would drop it. */
  flush(): void;
}

/** A write function for `out` that batches the writes of each turn. */
export function turnBatcher(out: TurnWritable): TurnWrite {
  let held = '';
  const flush = (): void => {
    if (held.length === 0) return;
    const chunk = held;
    held = '';
    if (out.writable) out.write(chunk);
  };
  let holding = false;
  const endTurn = (): void => {
    holding = false;
    flush();
  };
  const write = (chunk: string, lone?: boolean): boolean => {
    if (lone && held.length === 0) return out.writable ? out.write(chunk) : !out.writableNeedDrain;
    if (!holding) {
      holding = true;
      setImmediate(endTurn);
    }
    held += chunk;
    return !out.writableNeedDrain;
  };
  return Object.assign(write, { flush });
}
