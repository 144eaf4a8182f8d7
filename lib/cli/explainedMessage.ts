/**
 * What `mcp-dual-era explain` says of one message of a transcript: who sent it, what the other era
 * carries in its place, and why. Both directions of a transcript (transcriptToModern.ts,
 * transcriptToLegacy.ts) answer in this form; the side-by-side view of it is explain.ts.
 */
import type { JsonRpcMessage } from '../core/jsonrpc.ts';

/** Who sent a message. */
export type Side = 'client' | 'server';

/** A message of a transcript, by what its JSON-RPC shape makes it (a batch is never explained message by message). */
export type MessageKind = 'request' | 'notification' | 'result' | 'error';

/** One message of the transcript and what it becomes in the other era. */
export interface ExplainedMessage {
  /** The era of the transcript (of `message`). */
  readonly era: 'legacy' | 'modern';
  readonly from: Side;
  readonly message: unknown;
  /** What the other era carries in its place: nothing, one message, or several. */
  readonly becomes: readonly JsonRpcMessage[];
  /** Why, in a sentence. */
  readonly note: string;
  /** Set when the message could not be translated (malformed, or out of place). */
  readonly problem?: string;
}

/** An explained message; `problem` only when there is one. */
export function explained(
  era: 'legacy' | 'modern',
  from: Side,
  message: unknown,
  becomes: JsonRpcMessage[],
  note: string,
  problem?: string,
): ExplainedMessage {
  return problem === undefined ? { era, from, message, becomes, note } : { era, from, message, becomes, note, problem };
}
