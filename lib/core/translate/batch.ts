/**
 * JSON-RPC batches (2025-03-26 only; translation table row 24): split a batch into single messages,
 * each classified on its own, and assemble the answers back into one array in request order.
 */
import { classify, errorResponse, type Classified, type JsonRpcResponse, type RequestId } from '../jsonrpc.ts';
import { ErrorCode, invalidRequest } from '../errors.ts';

/** One member of a batch: a classified message, or the error response it already earned. */
export type BatchItem =
  | { readonly ok: true; readonly item: Exclude<Classified, { kind: 'batch' }> }
  | { readonly ok: false; readonly response: JsonRpcResponse };

/** Splits a batch; nested batches and broken members become `-32600` answers in place. */
export function splitBatch(items: readonly unknown[]): BatchItem[] {
  return items.map((raw) => {
    const c = classify(raw);
    if (!c.ok) return { ok: false, response: errorResponse(c.error.id, c.error) };
    if (c.value.kind === 'batch') return { ok: false, response: errorResponse(null, invalidRequest('nested batch')) };
    return { ok: true, item: c.value };
  });
}

/**
 * Assembles the batch answer: one response per request, in the order the requests came;
 * notifications and responses in the batch get none. `undefined` when nothing needs an answer.
 */
export function assembleBatch(
  items: readonly BatchItem[],
  answers: ReadonlyMap<RequestId, JsonRpcResponse>,
): JsonRpcResponse[] | undefined {
  const out: JsonRpcResponse[] = [];
  for (const entry of items) {
    if (!entry.ok) out.push(entry.response);
    else if (entry.item.kind === 'request') {
      const answer = answers.get(entry.item.message.id);
      out.push(
        answer ??
          errorResponse(entry.item.message.id, { code: ErrorCode.InternalError, message: 'Internal error: no answer for batch member' }),
      );
    }
  }
  return out.length > 0 ? out : undefined;
}
