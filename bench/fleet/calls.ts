/**
 * How the fleet bench calls a `serve`: modern `tools/call` POSTs (the MRTR bench's request texts:
 * bench/mrtr/requests.ts) over one keep-alive connection per endpoint, one call at a time, each
 * answer decoded (JSON, or the last event of a stream) and given a deadline.
 */
import type { JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
import { toolCallHeaders } from '../mrtr/requests.ts';
import { keepAlivePoster } from '../shared/keepAlive.ts';

/** Sends a request text naming tool `name`; resolves with the answer, or what went wrong. */
export type Call = (text: string, name: string) => Promise<JsonRpcResponse | string>;

/** How long one call may take before it counts as unanswered. */
const CALL_TIMEOUT_MS = 30_000;

/** A caller of the endpoint `url` over one keep-alive connection; `close` lets it go. */
export function endpointCaller(url: URL): { call: Call; close(): void } {
  const { post, close } = keepAlivePoster(url, CALL_TIMEOUT_MS);
  return { call: (text, name) => post(text, toolCallHeaders(text, name)), close };
}

/** The answer as the checks of bench/mrtr/requests.ts take it: a failed call is no answer. */
export const answerOf = (a: JsonRpcResponse | string): JsonRpcResponse | undefined => (typeof a === 'string' ? undefined : a);
