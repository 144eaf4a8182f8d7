/**
 * The one size bound on a message read from an upstream server (a stdio line, an HTTP body, an SSE
 * event): its default, the words for an answer past it, reading an HTTP body within it, and finding
 * the request an oversized answer belonged to from its first and last characters. Not the framing
 * itself (`lineFramer.ts`, `sse.ts`) and not what a transport does about it.
 */
import { fail, ok, type Outcome } from '../core/outcome.ts';
import { isRequestId, type RequestId } from '../core/jsonrpc.ts';
import { DEFAULTS } from '../util/defaults.ts';

/** The default bound on one message from an upstream: 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = DEFAULTS.messageBytes;

/** How far a body went past the bound: its declared `content-length`, or the bytes read when reading stopped. */
export interface TooLarge {
  readonly size: number;
}

/** What a request is answered with (inside -32603) when the server's answer is past `max`. */
export function tooLargeDetail(max: number): string {
  return `the server's answer is larger than ${max} bytes`;
}

/**
 * Reads a body (of a `Response`, or a `Request`) as UTF-8 text, at most `max` bytes of it. A `content-length` over `max` is refused
 * without reading; otherwise reading stops as soon as `max` is passed. Either way the body is
 * cancelled and the failure says how big it was. A body that breaks off throws, as `res.text()` does.
 */
export async function readBounded(res: Pick<Response, 'body' | 'headers'>, max: number): Promise<Outcome<string, TooLarge>> {
  const declared = Number(res.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    return fail({ size: declared });
  }
  if (!res.body) return ok('');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        return fail({ size });
      }
      parts.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.releaseLock();
  }
  parts.push(decoder.decode());
  return ok(parts.join(''));
}

/** A JSON string or number token at the start of `text`, whole (a token cut by the end of `text` is not). */
function scalarAt(text: string, at: number): { value: unknown; end: number } | undefined {
  const m = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=[\s,}]))/.exec(text.slice(at, at + 1024));
  if (!m) return undefined;
  try {
    return { value: JSON.parse(m[0]), end: at + m[0].length };
  } catch {
    return undefined;
  }
}

/** The top-level members of a JSON object's beginning: whether it is a request (`method`, `params`) and its `id` if whole. */
function scanHead(head: string): { request: boolean; id: unknown } | undefined {
  let i = head.search(/\S/);
  if (i === -1 || head[i] !== '{') return undefined;
  let depth = 0;
  let request = false;
  let id: unknown;
  for (; i < head.length; i++) {
    const c = head[i];
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === '"') {
      const key = scalarAt(head, i);
      if (!key) break;
      const colon = /^\s*:\s*/.exec(head.slice(key.end));
      if (depth === 1 && colon) {
        if (key.value === 'method' || key.value === 'params') request = true;
        if (key.value === 'id') id = scalarAt(head, key.end + colon[0].length)?.value;
      }
      i = key.end - 1;
    }
  }
  return { request, id };
}

/** `"id": X` as the last member of the object (optionally before `"jsonrpc":"2.0"`), as the v1 SDK writes answers. */
const TAIL_ID = /[{,]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/;

/**
 * The id of the JSON-RPC answer a message was, from its first and last characters only (the rest was
 * too large to keep): read from the head (`{"jsonrpc":"2.0","id":3,…`) or else from the tail
 * (`…,"jsonrpc":"2.0","id":3}`). `undefined` for a request or notification (`method` or `params`
 * among the top-level keys of the head), a batch, or an id that cannot be read.
 */
export function responseIdOf(head: string, tail: string): RequestId | undefined {
  const scanned = scanHead(head);
  if (!scanned || scanned.request) return undefined;
  if (isRequestId(scanned.id)) return scanned.id;
  const m = TAIL_ID.exec(tail);
  if (!m) return undefined;
  const id: unknown = JSON.parse(m[1]!);
  return isRequestId(id) ? id : undefined;
}
