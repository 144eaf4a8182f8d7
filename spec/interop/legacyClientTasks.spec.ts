/**
 * Legacy core tasks (2025-11-25) across the bridge: the v1 SDK client (1.32.2, its experimental
 * tasks API) through `wrapLegacyClient` to a modern-only v2 SDK server offering the tasks extension
 * (fixtures/servers/tasksServer.ts), over stdio and HTTP, and the same through `wrapModernServer`'s
 * HTTP front and the `connect` command. A task runs to completion, asks for input inside the task
 * (an elicitation, or a sampling and the roots at once, answered by the client's own handlers,
 * once each; never more than 256), fails (a tool error, a JSON-RPC error), is cancelled, is
 * listed; a server answering at once still gives a task; a plain call never gets one; a session
 * keeps its newest 1000 tasks; another session's task is not found. And `@modelcontextprotocol/ext-tasks` (the official
 * generation-agnostic tasks client) on a v2 SDK client that speaks the legacy era to the wrap.
 */
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type ApplicationInputRequest,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTasksHandler } from '../../fixtures/servers/tasksServer.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { StdioChildTransport } from '../../lib/transport/stdioChild.ts';
import { wrapModernServer } from '../../lib/wrap/modernServer/wrapModernServer.ts';
import { wrapLegacyClient } from '../../lib/wrap/legacyClient/wrapLegacyClient.ts';
import { ROOT } from '../helpers/everything.ts';
import { connectCommand, startModernHttp } from '../helpers/modernFixture.ts';

const TASKS_STDIO = {
  command: process.execPath,
  args: ['--import', 'tsx', resolve(ROOT, 'fixtures/servers/tasksStdio.ts')],
  cwd: ROOT,
  stderr: 'ignore' as const,
};
const RELATED = 'io.modelcontextprotocol/related-task';

interface TasksClient {
  readonly client: Client;
  readonly elicitations: Array<Record<string, unknown>>;
  /** The sampling and roots requests the client answered, by method. */
  readonly asked: Array<{ method: string; params: Record<string, unknown> }>;
  readonly statuses: string[];
}

function tasksClient(): TasksClient {
  const client = new Client({ name: 'v1-tasks', version: '1.32.2' }, { capabilities: { elicitation: {}, sampling: {}, roots: {} } });
  const elicitations: Array<Record<string, unknown>> = [];
  const asked: Array<{ method: string; params: Record<string, unknown> }> = [];
  const statuses: string[] = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push({ method: request.method, params: request.params as Record<string, unknown> });
    return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'spec-model' };
  });
  client.setRequestHandler(ListRootsRequestSchema, async (request) => {
    asked.push({ method: request.method, params: (request.params ?? {}) as Record<string, unknown> });
    return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params as Record<string, unknown>);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'notifications/tasks/status') statuses.push(String((n.params as { status?: string }).status));
  };
  return { client, elicitations, asked, statuses };
}

/** Runs a task-augmented call with the v1 client's own stream; every message it yields. */
async function stream(client: Client, name: string, args: Record<string, unknown> = {}) {
  const out: Array<{ type: string; task?: { taskId: string; status: string }; result?: Record<string, unknown>; error?: Error }> = [];
  for await (const m of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  }))
    out.push(m as never);
  return out;
}

/** Connects the client in one placement; what to close afterwards. */
type Placement = (client: Client) => Promise<() => Promise<void>>;

function exercise(name: string, connect: Placement): void {
  const s = suite(name);
  let peer: TasksClient;
  let close: () => Promise<void>;

  s.before.each(async () => {
    peer = tasksClient();
    close = await connect(peer.client);
  });
  s.after.each(async () => {
    await peer.client.close();
    await close();
  });

  s('should declare the legacy tasks the adapter serves', () => {
    assert.equal(peer.client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  });

  s('should run a tool as a task to completion, its result tagged with the task', async () => {
    const messages = await stream(peer.client, 'slow', { ms: 300 });
    assert.is(messages[0]!.type, 'taskCreated');
    const taskId = messages[0]!.task!.taskId;
    assert.is(messages[0]!.task!.status, 'working');
    assert.ok(messages.some((m) => m.type === 'taskStatus' && m.task!.status === 'working'));
    const last = messages[messages.length - 1]!;
    assert.is(last.type, 'result', JSON.stringify(last.error?.message));
    assert.equal(last.result!['content'], [{ type: 'text', text: 'slow done' }]);
    assert.equal((last.result!['_meta'] as Record<string, unknown>)[RELATED], { taskId });
    assert.is((await peer.client.experimental.tasks.getTask(taskId)).status, 'completed');
    assert.ok(peer.statuses.includes('completed'), 'status change told');
  });

  s('should push the input a task asks for to the client, once, and answer the task with it', async () => {
    const messages = await stream(peer.client, 'ask');
    const taskId = messages[0]!.task!.taskId;
    const last = messages[messages.length - 1]!;
    assert.is(last.type, 'result', JSON.stringify(last.error?.message));
    assert.equal(last.result!['content'], [{ type: 'text', text: 'Hello, Ada!' }]);
    assert.is(peer.elicitations.length, 1);
    assert.is(peer.elicitations[0]!['message'], 'What is your name?');
    assert.equal((peer.elicitations[0]!['_meta'] as Record<string, unknown>)[RELATED], { taskId });
    assert.is((await peer.client.experimental.tasks.getTask(taskId)).status, 'completed');
  });

  s('should push a sampling and a roots request a task asks for at once, once each, and answer them together', async () => {
    const messages = await stream(peer.client, 'consult');
    const taskId = messages[0]!.task!.taskId;
    const last = messages[messages.length - 1]!;
    assert.is(last.type, 'result', JSON.stringify(last.error?.message));
    assert.equal(last.result!['content'], [{ type: 'text', text: 'Paris in file:///work/project' }]);
    assert.equal(peer.asked.map((a) => a.method).sort(), ['roots/list', 'sampling/createMessage']);
    for (const a of peer.asked) assert.equal((a.params['_meta'] as Record<string, unknown>)[RELATED], { taskId });
  });

  s('should run the input rounds a server asks for before it makes the task, then give the task', async () => {
    const messages = await stream(peer.client, 'prepare');
    assert.is(messages[0]!.type, 'taskCreated');
    const last = messages[messages.length - 1]!;
    assert.is(last.type, 'result', JSON.stringify(last.error?.message));
    assert.equal(last.result!['content'], [{ type: 'text', text: 'prepared for Ada' }]);
    assert.is(peer.elicitations.length, 1);
    assert.is(peer.elicitations[0]!['message'], 'Who is it for?');
  });

  s('should not pass more than 256 inputs of one task to the client', async () => {
    const messages = await stream(peer.client, 'flood');
    const last = messages[messages.length - 1]!;
    assert.is(last.type, 'error');
    assert.match(String(last.error?.message), /more than 256 inputs/);
    assert.is(peer.elicitations.length, 0);
  });

  s('should report a task whose tool failed as failed, its result the tool error', async () => {
    const messages = await stream(peer.client, 'broken');
    const taskId = messages[0]!.task!.taskId;
    assert.is(messages[messages.length - 1]!.type, 'error');
    assert.is((await peer.client.experimental.tasks.getTask(taskId)).status, 'failed');
    const result = await peer.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.is(result.isError, true);
    assert.equal(result.content, [{ type: 'text', text: 'it broke' }]);
  });

  s('should answer tasks/result of a task that ended with a JSON-RPC error with that error', async () => {
    const messages = await stream(peer.client, 'crash');
    const taskId = messages[0]!.task!.taskId;
    assert.is(messages[messages.length - 1]!.type, 'error');
    assert.is((await peer.client.experimental.tasks.getTask(taskId)).status, 'failed');
    const failure = await peer.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).then(
      () => undefined,
      (e: { code?: number; message?: string }) => e,
    );
    assert.is(failure?.code, -32603);
    assert.match(String(failure?.message), /the tool crashed/);
  });

  s('should cancel a task, answer its final state, and refuse to cancel it again', async () => {
    const created = await peer.client.request(
      { method: 'tools/call', params: { name: 'stall', arguments: {}, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const cancelled = await peer.client.experimental.tasks.cancelTask(taskId);
    assert.is(cancelled.status, 'cancelled');
    assert.is(cancelled.taskId, taskId);
    const again = await peer.client.experimental.tasks.cancelTask(taskId).then(
      () => undefined,
      (e: { code?: number }) => e,
    );
    assert.is(again?.code, -32602);
  });

  s("should list this session's tasks", async () => {
    const first = await stream(peer.client, 'slow', { ms: 50 });
    const second = await stream(peer.client, 'broken');
    const listed = await peer.client.experimental.tasks.listTasks();
    assert.equal(
      listed.tasks.map((t) => [t.taskId, t.status]),
      [
        [first[0]!.task!.taskId, 'completed'],
        [second[0]!.task!.taskId, 'failed'],
      ],
    );
  });

  s('should give a task of its own, already completed, when the server answers a task-augmented call at once', async () => {
    const messages = await stream(peer.client, 'quick');
    assert.is(messages[0]!.type, 'taskCreated');
    assert.is(messages[0]!.task!.status, 'completed');
    const last = messages[messages.length - 1]!;
    assert.equal(last.result!['content'], [{ type: 'text', text: 'quick answer' }]);
  });

  s.run();
}

exercise(
  "a v1 client's core tasks through wrapLegacyClient to a modern server offering the tasks extension, over stdio",
  async (client) => {
    await client.connect(wrapLegacyClient(new StdioChildTransport(TASKS_STDIO)));
    return async () => {};
  },
);

exercise('the same through wrapLegacyClient over HTTP', async (client) => {
  const modern = await startModernHttp(createTasksHandler());
  await client.connect(wrapLegacyClient(modern.url));
  return () => modern.close();
});

exercise('the same through wrapModernServer over HTTP (its front, the server over HTTP)', async (client) => {
  const modern = await startModernHttp(createTasksHandler());
  const wrap = wrapModernServer(modern.url);
  const front = await serveNodeHttp(wrap, { port: 0 });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${front.origin}/mcp`)));
  return async () => {
    await wrap.close();
    await front.close();
    await modern.close();
  };
});

exercise('the same through mcp-dual-era connect (the command) to a stdio server', async (client) => {
  const command = connectCommand(['--', TASKS_STDIO.command, ...TASKS_STDIO.args]);
  await client.connect(new StdioClientTransport({ ...command, env: getDefaultEnvironment(), stderr: 'ignore' }));
  return async () => {};
});

const bounded = suite("a session's record of its tasks");

bounded('should keep the newest 1000 tasks, listed 50 a page', async () => {
  const peer = tasksClient();
  await peer.client.connect(wrapLegacyClient(new StdioChildTransport(TASKS_STDIO)));
  try {
    const ids: string[] = [];
    for (let i = 0; i < 1005; i++) {
      const created = await peer.client.request(
        { method: 'tools/call', params: { name: 'quick', arguments: {}, task: {} } },
        CreateTaskResultSchema,
      );
      ids.push(created.task.taskId);
    }
    const listed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await peer.client.experimental.tasks.listTasks(cursor);
      assert.ok(page.tasks.length <= 50);
      listed.push(...page.tasks.map((t) => t.taskId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    assert.is(pages, 20);
    assert.equal(listed, ids.slice(5));
    const forgotten = await peer.client.experimental.tasks.getTask(ids[0]!).then(
      () => undefined,
      (e: { code?: number }) => e,
    );
    assert.is(forgotten?.code, -32602);
  } finally {
    await peer.client.close();
  }
});

bounded.run();

const plain = suite('a call without params.task');

plain('should not declare the extension, even for a client hosting tasks of its own: the server cannot answer it with a task', async () => {
  const client = new Client(
    { name: 'v1-tasks', version: '1.32.2' },
    { capabilities: { elicitation: {}, tasks: { requests: { elicitation: { create: {} } } } } },
  );
  await client.connect(wrapLegacyClient(new StdioChildTransport(TASKS_STDIO)));
  try {
    const result = await client.callTool({ name: 'slow', arguments: {} });
    assert.is(result.isError, true);
    assert.match(JSON.stringify(result.content), /runs only as a task/);
  } finally {
    await client.close();
  }
});

plain.run();

const early = suite('a task-augmented call that ends before the server makes a task');

early('should give a failed task of its own, holding the tool error', async () => {
  const client = new Client({ name: 'v1-tasks', version: '1.32.2' }, { capabilities: {} });
  await client.connect(wrapLegacyClient(new StdioChildTransport(TASKS_STDIO)));
  try {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'prepare', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    assert.is(created.task.status, 'failed');
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    assert.is(result.isError, true);
    assert.match(JSON.stringify(result.content), /elicitation/);
  } finally {
    await client.close();
  }
});

early.run();

const sessions = suite('a task and the sessions of one server');

sessions("should not find another session's task, though the server has it", async () => {
  const modern = await startModernHttp(createTasksHandler());
  const owner = tasksClient();
  const other = tasksClient();
  try {
    await owner.client.connect(wrapLegacyClient(modern.url));
    await other.client.connect(wrapLegacyClient(modern.url));
    const messages = await stream(owner.client, 'slow', { ms: 50 });
    const taskId = messages[0]!.task!.taskId;
    assert.is((await owner.client.experimental.tasks.getTask(taskId)).status, 'completed');
    for (const attempt of [
      () => other.client.experimental.tasks.getTask(taskId),
      () => other.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      () => other.client.experimental.tasks.cancelTask(taskId),
    ]) {
      const failure = await attempt().then(
        () => undefined,
        (e: { code?: number; message?: string }) => e,
      );
      assert.is(failure?.code, -32602);
      assert.match(String(failure?.message), /not found/);
    }
    assert.equal((await other.client.experimental.tasks.listTasks()).tasks, []);
  } finally {
    await owner.client.close();
    await other.client.close();
    await modern.close();
  }
});

sessions.run();

// ── the official generation-agnostic client, on the legacy wire ─────────────

const ext = suite('@modelcontextprotocol/ext-tasks on a v2 SDK client in the legacy era, through wrapLegacyClient');
let extClient: V2Client;
let extSession: TaskEnabledSession;
const asked: ApplicationInputRequest[] = [];

ext.before.each(async () => {
  asked.length = 0;
  extClient = new V2Client({ name: 'ext-tasks', version: '0.2.2' }, { capabilities: { elicitation: {} } });
  await extClient.connect(wrapLegacyClient(new StdioChildTransport(TASKS_STDIO)) as never);
  extSession = createTaskSessionFromClient(extClient, {
    endpointId: 'tasks-fixture',
    onInputRequest: (async (request: ApplicationInputRequest) => {
      asked.push(request);
      return { action: 'accept', content: { name: 'Grace' } };
    }) as never,
  });
});
ext.after.each(async () => {
  await extSession.close();
  await extClient.close();
});

ext('should speak the legacy era and see task-capable tools', async () => {
  assert.is(extClient.getProtocolEra(), 'legacy');
  assert.ok(extSession.capabilities);
  const { tools } = await extClient.listTools();
  assert.ok(tools.every((t) => (t.execution as { taskSupport?: string } | undefined)?.taskSupport === 'optional'));
});

ext('should run a tool as a task to its result', async () => {
  const execution = await extSession.callTool('slow', { ms: 200 }, { task: { preference: 'require' } });
  assert.is(execution.kind, 'task');
  const { outcome, lastTask } = await execution.settle();
  assert.equal((resultFromTaskOutcome(outcome) as { content: unknown }).content, [{ type: 'text', text: 'slow done' }]);
  assert.is(lastTask?.status, 'completed');
});

ext('should answer the input a task asks for with its own input handler, once', async () => {
  const execution = await extSession.callTool('ask', {}, { task: { preference: 'require' } });
  const { outcome } = await execution.settle();
  assert.equal((resultFromTaskOutcome(outcome) as { content: unknown }).content, [{ type: 'text', text: 'Hello, Grace!' }]);
  assert.is(asked.length, 1);
  assert.is(asked[0]!.kind, 'elicitation');
});

ext('should see a failed task, cancel a running one, and list them', async () => {
  const failed = await extSession.callTool('broken', {}, { task: { preference: 'require' } });
  const settled = await failed.settle();
  assert.is(settled.lastTask?.status, 'failed');
  const stalled = await extSession.callTool('stall', {}, { task: { preference: 'require' } });
  assert.is(stalled.kind, 'task');
  const taskId = (stalled as { handle: { taskId: string } }).handle.taskId;
  await extSession.cancelTask(taskId as never);
  const page = await extSession.listTasks();
  const statuses = Object.fromEntries(page.tasks.map((t) => [t.taskId, t.status]));
  assert.is(statuses[taskId], 'cancelled');
  assert.is(page.tasks.length, 2);
});

ext.run();
