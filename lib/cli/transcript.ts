/**
 * A recorded exchange, message by message, in the other era: what `mcp-dual-era explain` shows.
 * A legacy transcript (it opens with `initialize`, or its requests carry no modern `_meta`) becomes
 * what a modern peer would see through the adapter (transcriptToModern.ts); a modern one (`_meta`
 * on its requests) becomes what a legacy peer would see (transcriptToLegacy.ts). This holds which
 * era a transcript speaks and the messages no direction explains (not JSON-RPC, batches).
 */
import { claimedEra } from '../core/era.ts';
import { classify, type JsonRpcMessage } from '../core/jsonrpc.ts';
import { explained, type ExplainedMessage } from './explainedMessage.ts';
import { ModernToLegacy } from './transcriptToLegacy.ts';
import { LegacyToModern } from './transcriptToModern.ts';

/** The era a transcript speaks: modern when a request claims a modern version in its `_meta`. */
export function transcriptEra(messages: readonly unknown[]): 'legacy' | 'modern' {
  for (const m of messages) {
    const c = classify(m);
    if (!c.ok || c.value.kind !== 'request') continue;
    if (c.value.message.method === 'initialize') return 'legacy';
    if (claimedEra(c.value.message) === 'modern') return 'modern';
  }
  return 'legacy';
}

/** Explains a whole transcript. */
export function explainTranscript(messages: readonly unknown[], options: { era?: 'legacy' | 'modern' } = {}): ExplainedMessage[] {
  const explainer = new TranscriptExplainer(options.era ?? transcriptEra(messages));
  return messages.map((m) => explainer.explain(m));
}

/** Explains a transcript one message at a time, in order. */
export class TranscriptExplainer {
  readonly era: 'legacy' | 'modern';
  readonly #direction: LegacyToModern | ModernToLegacy;

  constructor(era: 'legacy' | 'modern') {
    this.era = era;
    this.#direction = era === 'legacy' ? new LegacyToModern() : new ModernToLegacy();
  }

  explain(message: unknown): ExplainedMessage {
    const c = classify(message);
    if (!c.ok) return explained(this.era, 'client', message, [], 'not a JSON-RPC message', c.error.message);
    const v = c.value;
    if (v.kind === 'batch')
      return explained(
        this.era,
        'client',
        message,
        [],
        'a JSON-RPC batch (2025-03-26)',
        this.era === 'legacy' ? undefined : 'batches have no modern form',
      );
    return this.#direction.explain(v.kind, v.message as JsonRpcMessage);
  }
}
