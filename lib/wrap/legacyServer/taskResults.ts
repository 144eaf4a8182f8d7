/**
 * A legacy task's results in the tasks extension's terms: a result without the `related-task` mark
 * its server put on it (`unmarked`), and a task's payload as its caller reads it (`payloadOf`).
 */
import { MetaKey } from '../../core/era.ts';
import { isRecord, omitKeys, type Implementation, type JsonObject } from '../../core/primitives.ts';
import { errorToModern } from '../../core/translate/errors.ts';
import { resultToModern } from '../../core/translate/results.ts';
import type { RpcOutcome } from '../../session/callHooks.ts';

/** A result without the `related-task` mark its server put on it. */
export function unmarked(result: JsonObject): JsonObject {
  const meta = result['_meta'];
  if (!isRecord(meta) || !(MetaKey.relatedTask in meta)) return result;
  const rest = omitKeys(meta, [MetaKey.relatedTask]);
  return Object.keys(rest).length > 0 ? { ...result, _meta: rest } : omitKeys(result, ['_meta']);
}

/** The task's payload in the extension's terms: `completed` with the tool's result (`isError` included), or `failed` with a JSON-RPC error. */
export function payloadOf(outcome: RpcOutcome, serverInfo: Implementation | undefined): JsonObject {
  if ('error' in outcome) return { status: 'failed', error: errorToModern(outcome.error, { method: 'tools/call' }) };
  const translated = resultToModern('tools/call', unmarked(outcome.result), serverInfo ? { serverInfo } : {});
  if (!translated.ok) return { status: 'failed', error: translated.error };
  return { status: 'completed', result: translated.value.result };
}
