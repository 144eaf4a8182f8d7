/**
 * Writes to a stream so that the writes of one turn of the event loop leave together, in one
 * write, when the turn ends (the stream is corked from the turn's first write until then). Under
 * load that saves a system call here and a read at the other end per message; a lone message waits
 * only for the rest of its turn (no timer: the turn ends as soon as its callbacks have run).
 */

/** What the batcher needs of a Node `Writable`. */
export interface Corkable {
  cork(): void;
  uncork(): void;
  write(chunk: string): boolean;
}

/** A write function for `out` that batches the writes of each turn. */
export function turnBatcher(out: Corkable): (chunk: string) => boolean {
  let corked = false;
  const endTurn = () => {
    corked = false;
    out.uncork();
  };
  return (chunk) => {
    if (!corked) {
      corked = true;
      out.cork();
      setImmediate(endTurn);
    }
    return out.write(chunk);
  };
}
