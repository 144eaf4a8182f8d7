/**
 * The tasks bench's wire: the modern requests it sends (a `tools/call` that starts a task, a
 * `tasks/get` poll, a plain `greet` call, a `tasks/cancel`), every one with the same envelope (the
 * tasks extension, `io.modelcontextprotocol/tasks`, declared in its client capabilities) and the
 * same headers but `Mcp-Method` and `Mcp-Name`; a caller of an endpoint over one keep-alive
 * connection; and the checks on what comes back.
 */
import type { JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
import { VERSION, type Json } from '../mrtr/requests.ts';
import { keepAlivePoster } from '../shared/keepAlive.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The conformance fixture's tool that runs as a task (taskSupport `optional`), and its plain one. */
export const TASK_TOOL = 'slow_compute';
export const PLAIN_TOOL = 'greet';
/** The one caller of the bench (a bearer token the fronts take as its principal). */
const PRINCIPAL = 'tasks-bench';

const META_TEXT = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'tasks-bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
});

/** A request of the bench: its method, the name its `Mcp-Name` header carries, its text. */
export interface Sent {
  readonly method: string;
  readonly name: string;
  readonly text: string;
}

const envelope = (id: number, method: string, params: string): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":{${params},"_meta":${META_TEXT}}}`;

/** A call of the task tool, which works for `seconds` (a task that stays `working` that long). */
export const startTask = (id: number, seconds: number): Sent => ({
  method: 'tools/call',
  name: TASK_TOOL,
  text: envelope(id, 'tools/call', `"name":"${TASK_TOOL}","arguments":{"seconds":${seconds},"label":"bench"}`),
});

/** A `tasks/get` poll of `taskId`. */
export const pollTask = (id: number, taskId: string): Sent => ({
  method: 'tasks/get',
  name: taskId,
  text: envelope(id, 'tasks/get', `"taskId":"${taskId}"`),
});

/** A `tasks/cancel` of `taskId`. */
export const cancelTask = (id: number, taskId: string): Sent => ({
  method: 'tasks/cancel',
  name: taskId,
  text: envelope(id, 'tasks/cancel', `"taskId":"${taskId}"`),
});

/** A plain call: `greet`, answered "Hello, <name>!". */
export const plainCall = (id: number, name: string): Sent => ({
  method: 'tools/call',
  name: PLAIN_TOOL,
  text: envelope(id, 'tools/call', `"name":"${PLAIN_TOOL}","arguments":{"name":"${name}"}`),
});

/** Sends a request; resolves with the answer, or what went wrong. */
export type Send = (sent: Sent) => Promise<JsonRpcResponse | string>;

/** How long one request may take before it counts as unanswered. */
const TIMEOUT_MS = 30_000;

/** A caller of the endpoint `url` over one keep-alive connection; `close` lets it go. */
export function endpoint(url: URL): { send: Send; close(): void } {
  const { post, close } = keepAlivePoster(url, TIMEOUT_MS);
  const send: Send = ({ method, name, text }) =>
    post(text, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(text),
      'mcp-protocol-version': VERSION,
      'mcp-method': method,
      'mcp-name': name,
      authorization: `Bearer ${PRINCIPAL}`,
    });
  return { send, close };
}

/** The result of answer `a` to request `id`, or what was wrong. */
function resultOf(a: JsonRpcResponse | string, id: number): Json | string {
  if (typeof a === 'string') return a;
  if (a.id !== id) return `id ${JSON.stringify(a.id)} for request ${id}`;
  if (!('result' in a)) return `error ${JSON.stringify((a as { error?: unknown }).error).slice(0, 200)}`;
  return a.result as Json;
}

/** The id of the task a call started, or what was wrong. */
export function taskIdOf(a: JsonRpcResponse | string, id: number): { taskId: string } | { wrong: string } {
  const r = resultOf(a, id);
  if (typeof r === 'string') return { wrong: r };
  if (r['resultType'] !== 'task' || typeof r['taskId'] !== 'string') return { wrong: `not a task: ${JSON.stringify(r).slice(0, 200)}` };
  return { taskId: r['taskId'] };
}

/** `undefined` when a poll says the task `taskId` is still `working`, else what was wrong. */
export function checkWorking(a: JsonRpcResponse | string, id: number, taskId: string): string | undefined {
  const r = resultOf(a, id);
  if (typeof r === 'string') return r;
  if (r['taskId'] !== taskId) return `taskId ${JSON.stringify(r['taskId'])} instead of ${taskId}`;
  return r['status'] === 'working' ? undefined : `status ${JSON.stringify(r['status'])}: ${JSON.stringify(r).slice(0, 160)}`;
}

/** `undefined` when a plain call was answered "Hello, <name>!", else what was wrong. */
export function checkGreeting(a: JsonRpcResponse | string, id: number, name: string): string | undefined {
  const r = resultOf(a, id);
  if (typeof r === 'string') return r;
  const text = (r['content'] as Array<{ text?: unknown }> | undefined)?.[0]?.text;
  return text === `Hello, ${name}!` ? undefined : `text ${JSON.stringify(text)}: ${JSON.stringify(r).slice(0, 160)}`;
}
