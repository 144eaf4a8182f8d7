/**
 * The MRTR bench's wire: the modern request texts it sends (a first `ask_name` call, its retry, a
 * plain `echo`), the checks on what comes back, and the small helpers every scenario shares (a
 * tally of wrong answers, bounded concurrency, a settled heap). No library code: the scenarios get
 * the library under measurement from bench/mrtr/scenario.ts.
 */
import type { JsonRpcResponse } from '../../lib/core/jsonrpc.ts';

export const VERSION = '2026-07-28';
const META_TEXT = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'mrtr-bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
});
/** How long a parked call (and the push server's own wait) may last: longer than parking N calls takes. */
export const PARK_TIMEOUT_MS = 600_000;

/** The params of a first `ask_name` call, as the client sends them. */
export const askParamsText = `{"name":"ask_name","arguments":{},"_meta":${META_TEXT}}`;

/** A first `ask_name` call. */
export function askText(id: number): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${askParamsText}}`;
}

/** The retry: a new id, the same params, the answer and the state (base64url: no escaping needed). */
export function retryText(id: number, state: string, name: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"ask_name","arguments":{},"inputResponses":{"elicitation-1":{"action":"accept","content":{"name":"${name}"}}},"requestState":"${state}","_meta":${META_TEXT}}}`;
}

/** A plain `echo` call. */
export function echoText(id: number, text: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"},"_meta":${META_TEXT}}}`;
}

export type Json = Record<string, unknown>;

function resultOf(message: JsonRpcResponse | undefined, id: number): Json | string {
  if (!message) return 'no answer';
  if (message.id !== id) return `id ${JSON.stringify(message.id)} for request ${id}`;
  if (!('result' in message)) return `error ${JSON.stringify((message as { error?: unknown }).error).slice(0, 200)}`;
  return message.result as Json;
}

/** The `requestState` of an `input_required` answer, or what was wrong. */
export function stateOf(message: JsonRpcResponse | undefined, id: number): { state: string } | { wrong: string } {
  const result = resultOf(message, id);
  if (typeof result === 'string') return { wrong: result };
  if (result['resultType'] !== 'input_required')
    return { wrong: `resultType ${JSON.stringify(result['resultType'])}: ${JSON.stringify(result).slice(0, 160)}` };
  const inputs = result['inputRequests'] as Json | undefined;
  if (!inputs || !('elicitation-1' in inputs)) return { wrong: `no elicitation-1 in ${JSON.stringify(inputs).slice(0, 160)}` };
  const state = result['requestState'];
  return typeof state === 'string' ? { state } : { wrong: 'no requestState' };
}

/** `undefined` when the answer is a complete result whose one text is `text`, else what was wrong. */
export function checkText(message: JsonRpcResponse | undefined, id: number, text: string): string | undefined {
  const result = resultOf(message, id);
  if (typeof result === 'string') return result;
  if (result['resultType'] !== 'complete') return `resultType ${JSON.stringify(result['resultType'])}`;
  const content = result['content'] as Array<{ text?: unknown }> | undefined;
  const got = content?.[0]?.text;
  return got === text ? undefined : `text ${JSON.stringify(got)} instead of ${JSON.stringify(text)}`;
}

/** The text of the first content block of a legacy `tools/call` answer. */
export const textOf = (m: Json): unknown =>
  ((m['result'] as Json | undefined)?.['content'] as Array<{ text?: unknown }> | undefined)?.[0]?.text;

/** The wrong answers of one measurement: how many, and the first few. */
export class Wrong {
  count = 0;
  readonly first: string[] = [];
  add(what: string): void {
    this.count++;
    if (this.first.length < 5) this.first.push(what);
  }
  toJSON(): { count: number; first: string[] } {
    return { count: this.count, first: this.first };
  }
}

export const sleep = (ms: number): Promise<void> => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `fn(0 … n-1)` with at most `limit` in flight. */
export async function forEachLimit(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

/** Full collections, with turns of the event loop between them (finalizers, weak cells), then the usage. */
export async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await sleep(15);
  }
  gc();
  return process.memoryUsage();
}

/** The headers of a modern `tools/call` of `name` whose body is `text`, as a client on the wire sends them. */
export function toolCallHeaders(text: string, name: string): Record<string, string | number> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': Buffer.byteLength(text),
    'mcp-protocol-version': VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': name,
  };
}

/** The response an HTTP answer carries: its JSON body, or an event stream's last message (`undefined` when it has none); throws on a body that is not JSON. */
export function responseOf(contentType: string | undefined, body: string): JsonRpcResponse | undefined {
  if (!String(contentType).includes('text/event-stream')) return JSON.parse(body) as JsonRpcResponse;
  const data = body
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .pop();
  return data ? (JSON.parse(data.slice(5)) as JsonRpcResponse) : undefined;
}
