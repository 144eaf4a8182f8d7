/**
 * The conformance fixture's task tools (fixtures/servers/conformanceServer.ts) against the v1 SDK
 * client, with nothing of mcp-dual-era in between: what each tool declares as `taskSupport`, and the
 * 2025-11-25 core tasks they run: `params.task` answered with a `CreateTaskResult`, `tasks/get`,
 * blocking `tasks/result` (a stored result, an `isError` result, or a JSON-RPC error for a crash),
 * `tasks/cancel`, input asked inside a task as pushes tagged with it on the `tasks/result` stream,
 * and input asked before the task exists on the call's own stream.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type ElicitRequest,
  type ElicitResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createConformanceServer } from '../../fixtures/servers/conformanceServer.ts';
import { sleep, textOf } from '../helpers/everything.ts';

const TASK_TOOLS = {
  greet: 'forbidden',
  slow_compute: 'optional',
  failing_job: 'required',
  protocol_error_job: 'required',
  confirm_delete: 'required',
  multi_input: 'required',
  test_tool_with_task: 'required',
} as const;

interface Connected {
  readonly client: Client;
  readonly server: McpServer;
  /** The elicitations the client was asked, in order. */
  readonly asked: ElicitRequest['params'][];
}

let connected: Connected | undefined;
const t = suite('the conformance fixture runs its task tools as 2025-11-25 core tasks');

t.before.each(async () => {
  const asked: ElicitRequest['params'][] = [];
  const client = new Client({ name: 'fixture-tasks-spec', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async ({ params }): Promise<ElicitResult> => {
    asked.push(params);
    return { action: 'accept', content: { name: 'Alice', confirm: true } };
  });
  const server = createConformanceServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  connected = { client, server, asked };
});
t.after.each(async () => {
  await connected?.client.close();
  await connected?.server.close();
});

/** `tools/call` with `params.task`: the task it created. */
async function startTask(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Task> {
  const { task } = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return task;
}

/** Polls `tasks/get` until the task's status is one of `statuses`. */
async function untilStatus(client: Client, taskId: string, ...statuses: Task['status'][]): Promise<Task> {
  for (const end = Date.now() + 5000; ; await sleep(50)) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (statuses.includes(task.status) || Date.now() > end) return task;
  }
}

const relatedTaskOf = (params: { _meta?: Record<string, unknown> | undefined }): unknown => params._meta?.[RELATED_TASK_META_KEY];

t('should declare the tools the tasks scenarios name, with their taskSupport, after the tools other scenarios take first', async () => {
  const { client } = connected!;
  assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'tasks.requests.tools.call is declared');
  const { tools } = await client.listTools();
  assert.is(tools[0]?.name, 'test_custom_header');
  for (const [name, taskSupport] of Object.entries(TASK_TOOLS))
    assert.is(tools.find((tool) => tool.name === name)?.execution?.taskSupport, taskSupport, name);
});

t('should answer greet at once', async () => {
  assert.is(textOf(await connected!.client.callTool({ name: 'greet', arguments: { name: 'World' } })), 'Hello, World!');
});

t('should run slow_compute as a task: working, then completed with its result on tasks/result', async () => {
  const { client } = connected!;
  const task = await startTask(client, 'slow_compute', { seconds: 0.3, label: 'pi' });
  assert.is(task.status, 'working');
  assert.is(task.ttl, 60_000);
  assert.is(task.pollInterval, 200);
  assert.ok(!Number.isNaN(Date.parse(task.createdAt)) && !Number.isNaN(Date.parse(task.lastUpdatedAt)));
  assert.is((await client.experimental.tasks.getTask(task.taskId)).status, 'working');
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  assert.is(textOf(result), 'Computed pi in 0.3 s');
  assert.equal(relatedTaskOf(result), { taskId: task.taskId });
  assert.is((await client.experimental.tasks.getTask(task.taskId)).status, 'completed');
});

t('should answer slow_compute without params.task with its result (taskSupport optional)', async () => {
  const { client } = connected!;
  assert.is(textOf(await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'now' } })), 'Computed now in 0 s');
});

t('should settle a cancelled slow_compute as cancelled, and refuse to cancel it again', async () => {
  const { client } = connected!;
  const task = await startTask(client, 'slow_compute', { seconds: 60 });
  assert.is((await client.experimental.tasks.cancelTask(task.taskId)).status, 'cancelled');
  await sleep(300);
  assert.is((await client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
  const again = await client.experimental.tasks.cancelTask(task.taskId).catch((error: unknown) => error);
  assert.instance(again, McpError);
  assert.is((again as McpError).code, -32602);
});

t('should refuse a task-required tool called without params.task, with a tool error', async () => {
  const { client } = connected!;
  const result = await client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema);
  assert.is(result.isError, true);
  assert.match(textOf(result), 'requires task augmentation');
});

t('should fail failing_job with an isError result', async () => {
  const { client } = connected!;
  const task = await startTask(client, 'failing_job');
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  assert.is(result.isError, true);
  assert.match(textOf(result), 'The job failed');
  assert.is((await client.experimental.tasks.getTask(task.taskId)).status, 'failed');
});

t('should fail protocol_error_job with no result: tasks/result answers with a JSON-RPC error', async () => {
  const { client } = connected!;
  const task = await startTask(client, 'protocol_error_job');
  const error = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema).catch((e: unknown) => e);
  assert.instance(error, McpError);
  assert.is((error as McpError).code, -32603);
  const failed = await client.experimental.tasks.getTask(task.taskId);
  assert.is(failed.status, 'failed');
  assert.match(failed.statusMessage ?? '', 'The job crashed');
});

t('should ask confirm_delete inside its task: input_required, one push tagged with the task on the tasks/result stream', async () => {
  const { client, asked } = connected!;
  const task = await startTask(client, 'confirm_delete', { filename: 'notes.txt' });
  assert.is((await untilStatus(client, task.taskId, 'input_required')).status, 'input_required');
  assert.is(asked.length, 0, 'the push waits for tasks/result');
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  assert.is(textOf(result), 'Deleted notes.txt');
  assert.is(asked.length, 1);
  assert.is(asked[0]!.message, 'Delete notes.txt?');
  assert.equal(relatedTaskOf(asked[0]!), { taskId: task.taskId });
  assert.is((await client.experimental.tasks.getTask(task.taskId)).status, 'completed');
});

t('should ask multi_input two things at once inside its task', async () => {
  const { client, asked } = connected!;
  const task = await startTask(client, 'multi_input');
  await untilStatus(client, task.taskId, 'input_required');
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  assert.is(textOf(result), 'name=Alice; confirm=true');
  assert.equal(
    asked.map((params) => [params.message, relatedTaskOf(params)]),
    [
      ['What is your name?', { taskId: task.taskId }],
      ['Please confirm', { taskId: task.taskId }],
    ],
  );
});

t("should ask test_tool_with_task's user_name on the call's own stream before the task exists, and greet from the task", async () => {
  const { client, asked } = connected!;
  const task = await startTask(client, 'test_tool_with_task');
  assert.is(asked.length, 1);
  assert.equal(asked[0]!._meta, { 'mcp-dual-era/inputKey': 'user_name' });
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  assert.is(textOf(result), 'Hello, Alice!');
});

t.run();
