/**
 * The tasks extension's requests on the wire, for the fleet and wrap specs: a modern request
 * declaring the extension (and form elicitation, which server-everything's `simulate-research-query`
 * asks inside its task) or the capabilities it is given, `Mcp-Name` the tool or the task as a
 * balancer sees it; a poll of `tasks/get` until a status; and what a replica says of itself (its
 * id, and the `tasks/get` it answered, from `/metrics`).
 */
import { readEvents } from './eventStream.ts';
import { sleep } from './everything.ts';
import type { Replica } from './fleetReplicas.ts';
import { modernMeta } from './messages.ts';

type Obj = Record<string, any>;

/** server-everything's tool that runs only as a task (and asks a clarification inside it when `ambiguous`). */
export const TASK_TOOL = 'simulate-research-query';
/** A caller's capabilities: the tasks extension, and form elicitation. */
export const TASK_CAPABILITIES = { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** The statuses a task ends in. */
export const TERMINAL = ['completed', 'failed', 'cancelled'] as const;

let ids = 0;

/**
 * One modern request on the wire to `url`, as `principal`: `request` sent as given (its params'
 * envelope included) with an id of its own, `Mcp-Name` the tool or the task; its answer read
 * whether JSON or a stream.
 */
export async function wire(
  url: string,
  request: Obj,
  principal = 'alice',
  signal?: AbortSignal,
): Promise<{ status: number; message: Obj }> {
  const name = request['params']?.['name'] ?? request['params']?.['taskId'];
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': request['method'],
      authorization: `Bearer ${principal}`,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ ...request, jsonrpc: '2.0', id: ++ids }),
    ...(signal ? { signal } : {}),
  });
  const message = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? ((await readEvents(res)).messages.at(-1) ?? {})
    : ((await res.json()) as Obj);
  return { status: res.status, message };
}

/** One modern request on the wire to `url`, as `principal`, its envelope declaring `capabilities` (by default {@link TASK_CAPABILITIES}). */
export function call(
  url: string,
  method: string,
  params: Obj,
  principal = 'alice',
  capabilities: Obj = TASK_CAPABILITIES,
): Promise<{ status: number; message: Obj }> {
  return wire(
    url,
    { method, params: { ...params, _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': capabilities }) } },
    principal,
  );
}

/** Polls `tasks/get` through `url` until the task's status is one of `until` (or 20 s pass); its last answer, and how many polls it sent. */
export async function pollUntil(
  url: string,
  taskId: string,
  until: readonly string[],
  principal = 'alice',
): Promise<Obj & { polls: number }> {
  const deadline = Date.now() + 20_000;
  for (let polls = 1; ; polls++) {
    const got = await call(url, 'tasks/get', { taskId }, principal);
    const result = got.message['result'] as Obj | undefined;
    if (!result || until.includes(result['status']) || Date.now() > deadline) return { ...got.message, polls };
    await sleep(200);
  }
}

/** Creates a task of {@link TASK_TOOL} through `url`; its id (`<replica>.<uuid>`). */
export async function createTask(url: string, args: Obj): Promise<string> {
  const created = await call(url, 'tools/call', { name: TASK_TOOL, arguments: args });
  const taskId = created.message['result']?.['taskId'];
  if (created.message['result']?.['resultType'] !== 'task' || typeof taskId !== 'string')
    throw new Error(`no task: ${JSON.stringify(created.message)}`);
  return taskId;
}

/** What one replica says of itself: its id and forwards (`/healthz`), and the `tasks/get` it answered (`/metrics`, with `--metrics`). */
export async function replicaCounts(replica: Replica): Promise<{ id: string; forwarded: number; tasksGetServed: number }> {
  const health = (await (await fetch(`${replica.origin}/healthz`)).json()) as { replica: string; forwarded: number };
  const metrics = await (await fetch(`${replica.origin}/metrics`)).text();
  let served = 0;
  for (const m of metrics.matchAll(/^mcp_dual_era_requests_total\{[^}]*method="tasks\/get"[^}]*\} (\d+)$/gm)) served += Number(m[1]);
  return { id: health.replica, forwarded: health.forwarded, tasksGetServed: served };
}
