/**
 * Copies of one push that a legacy HTTP server sent to several of our sessions with it (the
 * Streamable HTTP transport of mcp-framework sends every server-initiated request to every open
 * session). A push that names no request is gathered for a moment with its copies, then each copy
 * is told what to do, so that one push gets one answer from the one call it can belong to.
 */
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import { canonicalJson } from '../core/primitives.ts';

/** What a session does with its copy: handle it as usual, leave it unanswered, or refuse it. */
export type CopyVerdict = 'handle' | 'drop' | 'refuse';

/** How long copies of one push are gathered (they arrive on the sessions' streams within milliseconds). */
export const COPY_WINDOW_MS = 50;
/** Most pushes being gathered at once; past it a push is handled as usual at once. */
const MAX_GATHERING = 1000;

interface Copy {
  /** Calls in flight on the copy's session that the push could belong to. */
  readonly candidates: () => number;
  readonly settle: (verdict: CopyVerdict) => void;
}

/**
 * The copies of pushes seen by the sessions of one upstream. Rules, once a push's copies are in:
 * one copy is handled as usual; of several, the one whose session has a pushable call is
 * handled and the others left unanswered (the server takes one answer); none with such a call:
 * each is handled as usual (answered as outside any call). Several with such calls are each
 * handled when they reached only sessions with such calls while others are open: they are not
 * copies but pushes alike of calls alike (a server that runs a server instance per session counts
 * its request ids from 0 in each); otherwise each is refused, since the push could reach another
 * principal's client.
 */
export class PushCopies {
  readonly #gathering = new Map<string, Copy[]>();
  readonly #open: () => number;
  readonly #windowMs: number;

  /** `open`: how many sessions with the upstream are open (with one, nothing is gathered). */
  constructor(open: () => number, windowMs = COPY_WINDOW_MS) {
    this.#open = open;
    this.#windowMs = windowMs;
  }

  /** Pushes being gathered now. */
  get size(): number {
    return this.#gathering.size;
  }

  /** The verdict for a session's copy of `push` (at once when no other session could have one). */
  gather(push: JsonRpcRequest, candidates: () => number): Promise<CopyVerdict> {
    if (this.#open() <= 1) return Promise.resolve('handle');
    const key = `${JSON.stringify(push.id)}\u0000${push.method}\u0000${canonicalJson(push.params ?? null)}`;
    let copies = this.#gathering.get(key);
    if (!copies) {
      if (this.#gathering.size >= MAX_GATHERING) return Promise.resolve('handle');
      copies = [];
      this.#gathering.set(key, copies);
      const gathered = copies;
      setTimeout(() => {
        this.#gathering.delete(key);
        settleCopies(gathered, this.#open());
      }, this.#windowMs);
    }
    const group = copies;
    return new Promise<CopyVerdict>((settle) => group.push({ candidates, settle }));
  }
}

function settleCopies(copies: readonly Copy[], open: number): void {
  if (copies.length === 1) return copies[0]!.settle('handle');
  const owned = copies.filter((c) => c.candidates() > 0);
  if (owned.length === 0) for (const c of copies) c.settle('handle');
  else if (owned.length === 1) for (const c of copies) c.settle(c === owned[0] ? 'handle' : 'drop');
  else if (owned.length === copies.length && copies.length < open) for (const c of copies) c.settle('handle');
  else for (const c of copies) c.settle('refuse');
}
