/**
 * Tasks across the eras through `wrapLegacyServer`, served over HTTP in front of the unmodified
 * server-everything (over stdio), whose `simulate-research-query` runs only as a task and, when
 * `ambiguous`, asks for a clarification inside it. The client is the official
 * `@modelcontextprotocol/ext-tasks` on the v2 SDK client (its task requests sent raw, as its README
 * says a 2026-07-28 tasks server needs); the edge cases (another caller, an unknown id, a client
 * without the extension) are raw JSON-RPC on the wire. The same client drives `mcp-dual-era serve
 * --stdio` in a child process. What discover advertises is checked against a legacy server that
 * runs no tools as tasks, too.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient, type RawClientDispatch } from '@modelcontextprotocol/ext-tasks/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { VerdictCache } from '../../../lib/probe/verdictCache.ts';
import { stdioBackend } from '../../../lib/session/backend.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { wrapModernClient, type ModernClientTransport } from '../../../lib/wrap/modernClient/wrapModernClient.ts';
import { readEvents } from '../../helpers/eventStream.ts';
import {
  EVERYTHING,
  everythingBackend,
  MARKER,
  markedProcessesGone,
  reapMarked,
  serveStdioCommand,
  sleep,
  textOf,
} from '../../helpers/everything.ts';
import { wire, call as wireCall } from '../../helpers/fleetTasks.ts';
import { modernMeta } from '../../helpers/messages.ts';

const TOOL = 'simulate-research-query';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const TSX = resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');
const PUSH_STDIO = resolve(import.meta.dirname, '../../../fixtures/servers/pushServerStdio.ts');

type Obj = Record<string, any>;
let ids = 0;

/** A modern request with its envelope (`capabilities` declared in it), its answer. */
async function call(url: string, method: string, params: Obj, principal: string, capabilities: Obj = TASKS): Promise<Obj> {
  return (await wireCall(url, method, params, principal, capabilities)).message;
}

/** ext-tasks' raw path for its task requests, as `principal`. */
function rawDispatch(url: string, principal: string): RawClientDispatch {
  return async (request, options) => {
    const answer = (await wire(url, request as Obj, principal, options?.signal)).message;
    return 'error' in answer ? { kind: 'error', error: answer['error'] } : { kind: 'result', result: answer['result'] };
  };
}

/** A transport a client is connected on (stdio, or `wrapModernClient`'s). */
type Connected = StdioClientTransport | ModernClientTransport;

/** ext-tasks' raw path over the transport the client is connected on: answers to its own ids are taken off before the client sees them. */
function transportDispatch(transport: Connected): RawClientDispatch {
  const waiting = new Map<string, (answer: Obj) => void>();
  const deliver = transport.onmessage;
  transport.onmessage = (message: unknown) => {
    const id = (message as Obj)['id'];
    const waiter = typeof id === 'string' ? waiting.get(id) : undefined;
    if (!waiter) return deliver?.(message as never);
    waiting.delete(id);
    waiter(message as Obj);
  };
  return async (request) => {
    const id = `raw-${++ids}`;
    const answered = new Promise<Obj>((r) => waiting.set(id, r));
    await transport.send({ ...(request as Obj), jsonrpc: '2.0', id } as never);
    const answer = await answered;
    return 'error' in answer ? { kind: 'error', error: answer['error'] } : { kind: 'result', result: answer['result'] };
  };
}

/** The v2 SDK client, pinned to 2026-07-28, declaring elicitation, and ext-tasks' session on it (over HTTP to `to`, or a transport). */
async function extTasksSession(to: string | Connected, principal: string, asked: Obj[]) {
  const capabilities = { elicitation: { form: {} } };
  const client = new Client({ name: 'ext-tasks-spec', version: '1.0.0' }, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    capabilities,
  } as never);
  await client.connect((typeof to === 'string' ? new StreamableHTTPClientTransport(new URL(to)) : to) as never);
  const session = createTaskSessionFromClient(client, {
    endpointId: `wrap-${principal}`,
    rawDispatch: typeof to === 'string' ? rawDispatch(to, principal) : transportDispatch(to),
    v2RequestFraming: {
      protocolVersion: '2026-07-28',
      clientInfo: { name: 'ext-tasks-spec', version: '1.0.0' },
      clientCapabilities: capabilities,
    },
    onInputRequest: async (request: Obj, context: Obj) => {
      asked.push({ kind: request['kind'], inputId: context['inputId'], message: request['params']?.['message'] });
      return { action: 'accept', content: { interpretation: 'snake' } };
    },
  } as never);
  return { client, session };
}

const tasks = suite('tasks through wrapLegacyServer to server-everything, ext-tasks the client');
let wrap: LegacyServerWrap;
let http: RunningHttpServer;
let marker: string;
let url: string;

tasks.before(async () => {
  marker = randomUUID();
  wrap = wrapLegacyServer({ upstream: everythingBackend(marker), tasks: { perPrincipal: 4 } });
  http = await serveNodeHttp(wrap, { port: 0 });
  url = `${http.origin}/mcp`;
});
tasks.after(async () => {
  await wrap.close();
  await http.close();
  if (!(await markedProcessesGone(marker, 5000))) reapMarked(marker);
});

tasks('should advertise the tasks extension in discover, server-everything running tools/call as tasks', async () => {
  const discover = await call(url, 'server/discover', {}, 'alice', {});
  assert.equal(discover['result']['capabilities']['extensions'], { 'io.modelcontextprotocol/tasks': {} }, 'nothing made up beside it');
});

tasks('should run the tool as a task ext-tasks polls to completion', async () => {
  const { client, session } = await extTasksSession(url, 'alice', []);
  try {
    const execution = await session.callTool(TOOL, { topic: 'tides' });
    assert.is(execution.kind, 'task');
    const seen: string[] = [];
    const { outcome } = await execution.settle({ onEvent: (e: Obj) => void (e['type'] === 'task' && seen.push(e['task']['status'])) });
    assert.is(outcome.status, 'completed');
    if (outcome.status !== 'completed') return;
    assert.match(textOf(outcome.result), '# Research Report: tides');
    assert.ok(seen.includes('working'), `polled while working: ${seen.join(', ')}`);
  } finally {
    await session.close();
    await client.close();
  }
});

tasks('should turn the question the task asks into inputRequests, answered once through tasks/update', async () => {
  const asked: Obj[] = [];
  const { client, session } = await extTasksSession(url, 'alice', asked);
  try {
    const execution = await session.callTool(TOOL, { topic: 'python', ambiguous: true });
    assert.is(execution.kind, 'task');
    const { outcome } = await execution.settle();
    assert.is(outcome.status, 'completed');
    if (outcome.status !== 'completed') return;
    assert.equal(asked.length, 1, 'asked once');
    assert.equal(asked[0]!['kind'], 'elicitation');
    assert.equal(asked[0]!['inputId'], 'elicitation-1', 'the key the MRTR code makes');
    assert.match(asked[0]!['message'], 'could have multiple interpretations');
    assert.match(textOf(outcome.result), 'Research Report: python (snake)');
  } finally {
    await session.close();
    await client.close();
  }
});

tasks('should ignore an answer to an input that is no longer asked, and refuse another caller as an unknown task', async () => {
  const created = await call(url, 'tools/call', { name: TOOL, arguments: { topic: 'owls', ambiguous: true } }, 'carol', {
    ...TASKS,
    elicitation: { form: {} },
  });
  const task = created['result'];
  assert.is(task['resultType'], 'task');
  assert.is(task['status'], 'working');
  assert.type(task['ttlMs'], 'number');
  assert.type(task['pollIntervalMs'], 'number');
  const taskId = task['taskId'] as string;
  // Another caller: not found, as an id that never was.
  const stranger = await call(url, 'tasks/get', { taskId }, 'mallory');
  const unknown = await call(url, 'tasks/get', { taskId: randomUUID() }, 'carol');
  assert.is(stranger['error']?.['code'], -32602);
  assert.is(unknown['error']?.['code'], stranger['error']['code']);
  assert.match(stranger['error']['message'], 'Task not found');
  for (const method of ['tasks/update', 'tasks/cancel']) {
    const refused = await call(url, method, { taskId, inputResponses: {} }, 'mallory');
    assert.is(refused['error']?.['code'], -32602, `${method} of another caller's task`);
  }
  // Its creator, without the extension in this request: -32021 naming it.
  const undeclared = await call(url, 'tasks/get', { taskId }, 'carol', {});
  assert.is(undeclared['error']?.['code'], -32021);
  assert.equal(undeclared['error']['data'], { requiredCapabilities: TASKS });
  // Until the question comes, then answered; an unknown key is ignored.
  let detailed: Obj = {};
  for (let i = 0; i < 60 && detailed['status'] !== 'input_required'; i++) {
    await sleep(250);
    detailed = (await call(url, 'tasks/get', { taskId }, 'carol'))['result'];
  }
  assert.is(detailed['status'], 'input_required');
  assert.equal(Object.keys(detailed['inputRequests']), ['elicitation-1']);
  assert.is(detailed['inputRequests']['elicitation-1']['method'], 'elicitation/create');
  const answer = { action: 'accept', content: { interpretation: 'historical' } };
  const updated = await call(url, 'tasks/update', { taskId, inputResponses: { 'elicitation-1': answer, 'not-asked': answer } }, 'carol');
  assert.equal(updated['result'], { resultType: 'complete' });
  const again = await call(url, 'tasks/update', { taskId, inputResponses: { 'elicitation-1': { action: 'decline' } } }, 'carol');
  assert.equal(again['result'], { resultType: 'complete' }, 'answered already: ignored');
  for (let i = 0; i < 60 && !['completed', 'failed'].includes(detailed['status']); i++) {
    await sleep(250);
    detailed = (await call(url, 'tasks/get', { taskId }, 'carol'))['result'];
  }
  assert.is(detailed['status'], 'completed');
  assert.match(textOf(detailed['result']), 'Research Report: owls (historical)', 'the first answer, once');
  const later = await call(url, 'tasks/get', { taskId }, 'carol');
  assert.equal(later['result'], detailed, 'a finished task is answered as it ended');
});

tasks('should cancel the task upstream and answer with the empty ack', async () => {
  const { client, session } = await extTasksSession(url, 'dave', []);
  try {
    const execution = await session.callTool(TOOL, { topic: 'glaciers' });
    assert.is(execution.kind, 'task');
    await sleep(300);
    await execution.cancel();
    const { outcome } = await execution.settle();
    assert.is(outcome.status, 'cancelled');
  } finally {
    await session.close();
    await client.close();
  }
  const created = await call(url, 'tools/call', { name: TOOL, arguments: { topic: 'moss' } }, 'erin');
  const taskId = created['result']['taskId'] as string;
  const ack = await call(url, 'tasks/cancel', { taskId }, 'erin');
  assert.equal(ack['result'], { resultType: 'complete' });
  const got = await call(url, 'tasks/get', { taskId }, 'erin');
  assert.is(got['result']['status'], 'cancelled');
});

tasks("should refuse a task past the caller's bound with -32005, and hold each task's session only while it runs", async () => {
  const holds = () => wrap.pool.sessions().reduce((n, { session }) => n + session.holds, 0);
  assert.is(holds(), 0, 'every task before has ended');
  const running = await Promise.all(
    [1, 2, 3, 4].map((i) => call(url, 'tools/call', { name: TOOL, arguments: { topic: `bound ${i}` } }, 'frank')),
  );
  for (const r of running) assert.is(r['result']?.['resultType'], 'task');
  assert.ok(holds() >= 4, `each running task holds its session: ${holds()}`);
  const kept = wrap.stats().tasks;
  assert.ok(kept >= 4, `the wrap's stats count the tasks kept: ${kept}`);
  const refused = await call(url, 'tools/call', { name: TOOL, arguments: { topic: 'one more' } }, 'frank');
  assert.is(refused['error']?.['code'], -32005);
  assert.equal(refused['error']['data']['limit'], 'tasks-per-caller');
  for (const r of running) await call(url, 'tasks/cancel', { taskId: r['result']['taskId'] }, 'frank');
  assert.is(holds(), 0, 'cancelled: no session held');
  const next = await call(url, 'tools/call', { name: TOOL, arguments: { topic: 'after' } }, 'frank');
  assert.is(next['result']?.['resultType'], 'task');
  await call(url, 'tasks/cancel', { taskId: next['result']['taskId'] }, 'frank');
});

tasks('should run the task to its end for a client without the extension, and answer the tool result', async () => {
  const answer = await call(url, 'tools/call', { name: TOOL, arguments: { topic: 'ferns' } }, 'gina', {});
  assert.is(answer['result']?.['resultType'], 'complete');
  assert.match(textOf(answer['result']), '# Research Report: ferns');
  assert.not.ok(JSON.stringify(answer['result']).includes('related-task'), 'no legacy task mark');
});

/** A call of a client without the extension whose task asks a question: one MRTR round, then the tool's result. */
async function assertRoundThenResult(url: string, principal: string): Promise<void> {
  const capabilities = { elicitation: { form: {} } };
  const params = { name: TOOL, arguments: { topic: 'python', ambiguous: true } };
  const first = await call(url, 'tools/call', params, principal, capabilities);
  assert.is(first['result']?.['resultType'], 'input_required');
  const [key] = Object.keys(first['result']['inputRequests']);
  assert.is(first['result']['inputRequests'][key!]['method'], 'elicitation/create');
  const retry = await call(
    url,
    'tools/call',
    {
      ...params,
      inputResponses: { [key!]: { action: 'accept', content: { interpretation: 'comedy' } } },
      requestState: first['result']['requestState'],
    },
    principal,
    capabilities,
  );
  assert.is(retry['result']?.['resultType'], 'complete');
  assert.match(textOf(retry['result']), 'Research Report: python (comedy)');
}

tasks('should carry the question a task asks a client without the extension as an MRTR round', async () => {
  await assertRoundThenResult(url, 'hana');
});

/** Opens a listen as `principal` (request id `listen-<principal>`), its filter `notifications`, and reads it until `stop`. */
async function listen(principal: string, notifications: Obj, stop: (m: Obj) => boolean, signal: AbortSignal, capabilities: Obj = TASKS) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
      authorization: `Bearer ${principal}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: `listen-${principal}`,
      method: 'subscriptions/listen',
      params: { notifications, _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': capabilities }) },
    }),
    signal,
  });
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) return [(await res.json()) as Obj];
  return (await readEvents(res, stop).catch(() => ({ messages: [] }))).messages as Obj[];
}

tasks(
  "should tell a listen naming the caller's task each change (asked, answered, ended), and nothing of it to another caller",
  async () => {
    const caps = { ...TASKS, elicitation: { form: {} } };
    const created = await call(url, 'tools/call', { name: TOOL, arguments: { topic: 'eels', ambiguous: true } }, 'ivan', caps);
    const taskId = created['result']['taskId'] as string;
    const stranger = new AbortController();
    const theirs: Obj[] = [];
    const strangers = listen('judy', { taskIds: [taskId], toolsListChanged: true }, (m) => theirs.push(m) < 0, stranger.signal);
    let answered = false;
    const seen = await listen(
      'ivan',
      { taskIds: [taskId] },
      (m) => {
        const task = m['method'] === 'notifications/tasks' ? m['params'] : undefined;
        if (task?.['status'] === 'input_required' && !answered) {
          answered = true;
          void call(
            url,
            'tasks/update',
            { taskId, inputResponses: { 'elicitation-1': { action: 'accept', content: { interpretation: 'fish' } } } },
            'ivan',
            caps,
          );
        }
        return ['completed', 'failed', 'cancelled'].includes(task?.['status']);
      },
      AbortSignal.timeout(30_000),
      caps,
    );
    stranger.abort();
    const ack = seen.find((m) => m['method'] === 'notifications/subscriptions/acknowledged');
    assert.equal(ack?.['params']['notifications'], { taskIds: [taskId] }, "the caller's own task is granted");
    const told = seen.filter((m) => m['method'] === 'notifications/tasks').map((m) => m['params']);
    for (const t of told) {
      assert.is(t['taskId'], taskId);
      assert.is(t['_meta']['io.modelcontextprotocol/subscriptionId'], 'listen-ivan', 'tagged with the listen');
    }
    const statuses = told.map((t) => t['status']);
    assert.ok(statuses.includes('input_required'), statuses.join(', '));
    const asking = told.find((t) => t['status'] === 'input_required')!;
    assert.equal(Object.keys(asking['inputRequests']), ['elicitation-1']);
    const last = told.at(-1)!;
    assert.is(last['status'], 'completed');
    assert.match(textOf(last['result']), 'Research Report: eels (fish)');
    assert.is(statuses.indexOf('completed'), statuses.length - 1, 'nothing told after the end');
    await strangers;
    const theirAck = theirs.find((m) => m['method'] === 'notifications/subscriptions/acknowledged');
    assert.ok(theirAck, 'the stranger was listening');
    assert.not.ok('taskIds' in theirAck!['params']['notifications'], "another caller's task is not granted");
    assert.not.ok(
      theirs.some((m) => m['method'] === 'notifications/tasks'),
      "nothing of another caller's task",
    );
  },
);

tasks('should refuse a listen naming tasks from a client without the extension with -32021', async () => {
  const [refused] = await listen('ivan', { taskIds: ['any'] }, () => true, AbortSignal.timeout(10_000), {});
  assert.is(refused?.['error']?.['code'], -32021);
  assert.equal(refused!['error']['data'], { requiredCapabilities: TASKS });
});

tasks.run();

const replay = suite('a task-run tool for a client without the extension, in replay mode');
replay('should run the task again for the retry, its question answered from the retry', async () => {
  const mark = randomUUID();
  const replaying = wrapLegacyServer({ upstream: everythingBackend(mark), mrtr: { replay: true } });
  const served = await serveNodeHttp(replaying, { port: 0 });
  try {
    await assertRoundThenResult(`${served.origin}/mcp`, 'ines');
  } finally {
    await replaying.close();
    await served.close();
    if (!(await markedProcessesGone(mark, 5000))) reapMarked(mark);
  }
});
replay.run();

const strict = suite("a task-run tool for a client without the extension, refused as the extension's strict reading");
strict('should refuse it with -32021 naming the extension, give its session back, and serve the rest as by default', async () => {
  const mark = randomUUID();
  const refusing = wrapLegacyServer({ upstream: everythingBackend(mark), tasks: { withoutExtension: 'refuse' } });
  const served = await serveNodeHttp(refusing, { port: 0 });
  const at = `${served.origin}/mcp`;
  try {
    for (const capabilities of [{}, { elicitation: { form: {} } }]) {
      const refused = await call(at, 'tools/call', { name: TOOL, arguments: { topic: 'ferns' } }, 'jill', capabilities);
      assert.is(refused['error']?.['code'], -32021, JSON.stringify(refused));
      assert.equal(refused['error']['data'], { requiredCapabilities: TASKS });
      assert.match(refused['error']['message'], `${TOOL}, which the server runs only as a task, needs the tasks extension`);
    }
    const pushable = refusing.pool.sessions().reduce((n, { session }) => n + session.pushableInFlight, 0);
    assert.is(pushable, 0, 'a refused call gives back the session it was given');
    const echoed = await call(at, 'tools/call', { name: 'echo', arguments: { message: 'still here' } }, 'jill', {});
    assert.match(textOf(echoed['result']), 'still here', 'a tool that is no task is called as ever');
    const created = await call(at, 'tools/call', { name: TOOL, arguments: { topic: 'moss' } }, 'jill');
    assert.is(created['result']?.['resultType'], 'task', 'a client with the extension still gets its task');
    await call(at, 'tasks/cancel', { taskId: created['result']['taskId'] }, 'jill');
  } finally {
    await refusing.close();
    await served.close();
    if (!(await markedProcessesGone(mark, 5000))) reapMarked(mark);
  }
});
strict.run();

const stdio = suite('tasks through serve --stdio, connect and in process to server-everything, ext-tasks the client');
let stdioMarker: string;
stdio.before(() => {
  stdioMarker = randomUUID();
});
stdio.after(async () => {
  if (!(await markedProcessesGone(stdioMarker, 5000))) reapMarked(stdioMarker);
});

/** ext-tasks on `transport`: the extension advertised, a task that asks and completes, and the SDK client alone given the tool's result. */
async function assertTasksOver(transport: Connected): Promise<void> {
  const asked: Obj[] = [];
  const { client, session } = await extTasksSession(transport, 'stdio', asked);
  try {
    const capabilities = client.getServerCapabilities() as Obj;
    assert.equal(capabilities['extensions'], { 'io.modelcontextprotocol/tasks': {} });
    const execution = await session.callTool(TOOL, { topic: 'python', ambiguous: true });
    assert.is(execution.kind, 'task');
    const { outcome } = await execution.settle();
    assert.is(outcome.status, 'completed');
    if (outcome.status === 'completed') assert.match(textOf(outcome.result), 'Research Report: python (snake)');
    assert.equal(
      asked.map((a) => a['inputId']),
      ['elicitation-1'],
    );
    const cancelled = await session.callTool(TOOL, { topic: 'glaciers' });
    assert.is(cancelled.kind, 'task');
    await sleep(300);
    await cancelled.cancel();
    assert.is((await cancelled.settle()).outcome.status, 'cancelled');
    // The SDK client alone declares no extension: the call is answered with the tool's result.
    const plainly = await client.callTool({ name: TOOL, arguments: { topic: 'reefs' } });
    assert.match(textOf(plainly), '# Research Report: reefs');
  } finally {
    await session.close();
    await client.close();
  }
}

stdio('should run the tool as a task, ask its question through inputRequests, and answer a client without the extension', async () => {
  await assertTasksOver(new StdioClientTransport({ ...serveStdioCommand(stdioMarker, getDefaultEnvironment()), stderr: 'ignore' }));
});

stdio('should do the same through mcp-dual-era connect, the bridge a host starts, to server-everything over stdio', async () => {
  const command = serveStdioCommand(stdioMarker, getDefaultEnvironment());
  const args = command.args.map((a) => (a === 'serve' ? 'connect' : a)).filter((a) => a !== '--stdio');
  await assertTasksOver(new StdioClientTransport({ ...command, args, stderr: 'ignore' }));
});

stdio('should do the same in process: wrapModernClient to server-everything over stdio', async () => {
  const transport = wrapModernClient(
    { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: stdioMarker }, stderr: 'ignore' },
    { cache: new VerdictCache() },
  );
  await assertTasksOver(transport);
  assert.is(transport.verdict?.era, 'legacy', 'served by the in-process wrap');
});

stdio.run();

const plain = suite('discover in front of a legacy server that runs no tools as tasks');
plain('should advertise no tasks extension and serve no tasks methods', async () => {
  const other = wrapLegacyServer({ upstream: stdioBackend({ command: TSX, args: [PUSH_STDIO], stderr: 'ignore' }) });
  const served = await serveNodeHttp(other, { port: 0 });
  try {
    const discover = await call(`${served.origin}/mcp`, 'server/discover', {}, 'alice', TASKS);
    assert.ok(discover['result'], JSON.stringify(discover));
    assert.not.ok('io.modelcontextprotocol/tasks' in (discover['result']['capabilities']['extensions'] ?? {}));
    const update = await call(`${served.origin}/mcp`, 'tasks/update', { taskId: 't-1', inputResponses: {} }, 'alice', TASKS);
    assert.is(update['error']?.['code'], -32601, 'no tasks served: tasks/update is not a method here');
  } finally {
    await other.close();
    await served.close();
  }
});
plain.run();
