/**
 * The upstream's tool input schemas as one bridged session learnt them: from the `tools/list`
 * answers it relays, or read afresh (every page) when a call met a header mismatch on a tool not
 * known yet. What `Mcp-Param-*` headers are built from. Forgotten when the tool list changes.
 */
import type { ModernVersion } from '../../core/era.ts';
import { isRecord, type JsonObject } from '../../core/primitives.ts';
import { requestToModern, type LegacySessionView } from '../../core/translate/envelope.ts';
import type { ModernUpstream } from '../../transport/modernUpstream.ts';
import { readPages } from '../../util/readPages.ts';

/** Tool input schemas by name. */
export class LearnedTools {
  readonly #schemas = new Map<string, unknown>();

  /** The input schema learnt for `name`, if any. */
  schemaOf(name: string): unknown {
    return this.#schemas.get(name);
  }

  /** Learns from one `tools/list` result (one page). */
  learn(result: JsonObject): void {
    const tools = Array.isArray(result['tools']) ? result['tools'] : [];
    for (const tool of tools) if (isRecord(tool) && typeof tool['name'] === 'string') this.#schemas.set(tool['name'], tool['inputSchema']);
  }

  /** Forgets every schema (the server said its tools changed). */
  forget(): void {
    this.#schemas.clear();
  }

  /** Reads every page of `tools/list` upstream, stamped for `session`, to learn the tools' input schemas; false when that fails. */
  async relearn(
    upstream: ModernUpstream,
    session: LegacySessionView | undefined,
    modernVersion: ModernVersion,
    signal: AbortSignal,
  ): Promise<boolean> {
    if (!session) return false;
    try {
      await readPages(
        async (cursor, page) => {
          const list = requestToModern(
            { jsonrpc: '2.0', id: `tools-${page}`, method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) },
            session,
            { modernVersion },
          );
          return list.ok ? upstream.request(list.value, { signal }) : { error: list.error };
        },
        (result) => this.learn(result),
      );
      return true;
    } catch {
      return false;
    }
  }
}
