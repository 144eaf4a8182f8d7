import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { failure, okValue } from '../../helpers/outcome.ts';
import { discoverToInitializeResult, initializeResultToDiscover } from '../../../lib/core/translate/discover.ts';
import { errorToLegacy, errorToModern } from '../../../lib/core/translate/errors.ts';
import { resultToLegacy, resultToModern } from '../../../lib/core/translate/results.ts';
import {
  clientCapabilitiesToLegacy,
  clientCapabilitiesToModern,
  serverCapabilitiesToLegacy,
  serverCapabilitiesToModern,
} from '../../../lib/core/translate/capabilities.ts';
import { createTaskResultToLegacy, createTaskResultToModern } from '../../../lib/core/translate/tasks.ts';
import { SERVER } from '../../helpers/messages.ts';
import { validateMessage } from '../../helpers/schemas.ts';

const res = suite('resultToModern / resultToLegacy');
const tools = {
  tools: [
    { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string', 'x-mcp-header': 'Text' } } } },
    {
      name: 'bad',
      inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
      execution: { taskSupport: 'optional' },
    },
  ],
};
res('should add resultType, server info and the no-caching default to a cacheable result', () => {
  const r = resultToModern('tools/list', tools, { serverInfo: SERVER });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.is(r.value.result['resultType'], 'complete');
  assert.equal([r.value.result['ttlMs'], r.value.result['cacheScope']], [0, 'private']);
  assert.equal(r.value.result['_meta'], { 'io.modelcontextprotocol/serverInfo': SERVER });
  assert.equal(validateMessage('2026-07-28', { jsonrpc: '2.0', id: 1, result: r.value.result }, { method: 'tools/list' }), []);
});
res('should keep a legacy tool with a broken x-mcp-header usable by removing the annotation, and drop taskSupport', () => {
  const r = resultToModern('tools/list', tools);
  if (!r.ok) return assert.unreachable();
  const bad = (r.value.result['tools'] as Array<Record<string, unknown>>)[1]!;
  assert.equal(bad, { name: 'bad', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } });
  assert.equal(
    r.value.invalidTools.map((x) => x.tool),
    ['bad'],
  );
  assert.is((tools.tools[1]!.inputSchema.properties.n as Record<string, unknown>)['x-mcp-header'], 'N', 'input not mutated');
});
res('should use the configured cache policy, but never cache a retry', () => {
  const cache = { 'resources/read': { ttlMs: 60000, cacheScope: 'public' as const } };
  const read = { contents: [{ uri: 'file:///a', text: 'a' }] };
  const first = resultToModern('resources/read', read, { cache });
  const retry = resultToModern('resources/read', read, { cache, retry: true });
  assert.equal([okValue(first).result['ttlMs'], okValue(first).result['cacheScope']], [60000, 'public']);
  assert.equal([okValue(retry).result['ttlMs'], okValue(retry).result['cacheScope']], [0, 'private']);
  const call = resultToModern('tools/call', { content: [] }, { cache: { default: { ttlMs: 5, cacheScope: 'public' } } });
  assert.not.ok('ttlMs' in okValue(call).result, 'tools/call is not cacheable');
});
res('should refuse an upstream result of the wrong shape with -32603', () => {
  for (const [method, body] of [
    ['tools/list', { tools: 'x' }],
    ['tools/call', {}],
    ['resources/read', { contents: [1] }],
  ] as const) {
    const r = resultToModern(method, body as never);
    assert.not.ok(r.ok, method);
    if (!r.ok) assert.is(r.error.code, -32603);
  }
});
res('should strip modern members going legacy, drop broken-annotation tools, and non-object structuredContent', () => {
  const modern = {
    resultType: 'complete',
    tools: tools.tools,
    ttlMs: 10,
    cacheScope: 'public',
    _meta: { 'io.modelcontextprotocol/serverInfo': SERVER, 'com.example/x': 1 },
  };
  const r = resultToLegacy('tools/list', modern);
  assert.ok(r.ok);
  if (r.ok) {
    assert.equal(r.value.result, { tools: [tools.tools[0]], _meta: { 'com.example/x': 1 } });
    assert.equal(
      r.value.droppedTools.map((x) => x.tool),
      ['bad'],
    );
  }
  const call = resultToLegacy('tools/call', {
    resultType: 'complete',
    content: [{ type: 'text', text: '[1,2]' }],
    structuredContent: [1, 2],
  });
  assert.not.ok('structuredContent' in okValue(call).result);
  const obj = resultToLegacy('tools/call', { resultType: 'complete', content: [], structuredContent: { a: 1 } });
  assert.equal(okValue(obj).result['structuredContent'], { a: 1 });
});
res('should refuse input_required, task and unknown result types as plain results', () => {
  for (const type of ['input_required', 'task', 'something_new']) {
    const r = resultToLegacy('tools/call', { resultType: type, content: [] });
    assert.is(failure(r, type).code, -32603);
  }
  assert.ok(resultToLegacy('tools/call', { content: [] }).ok, 'a missing resultType is complete');
});
res.run();

const disc = suite('initialize result ⇄ discover result');
const init = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: { listChanged: true }, logging: {}, tasks: { requests: { tools: { call: {} } } } },
  serverInfo: SERVER,
  instructions: 'Use echo.',
};
disc('should list only modern versions in discover and move server info into _meta', () => {
  const r = initializeResultToDiscover(init);
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.value, {
    resultType: 'complete',
    supportedVersions: ['2026-07-28'],
    capabilities: {
      tools: { listChanged: true },
      logging: {},
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    },
    _meta: { 'io.modelcontextprotocol/serverInfo': SERVER },
    instructions: 'Use echo.',
    ttlMs: 0,
    cacheScope: 'private',
  });
  assert.equal(validateMessage('2026-07-28', { jsonrpc: '2.0', id: 1, result: r.value }, { method: 'server/discover' }), []);
});
disc('should answer a legacy client in its own version when supported, else the newest, and synthesise server info', () => {
  const discover = {
    resultType: 'complete',
    supportedVersions: ['2026-07-28'],
    capabilities: { prompts: {} },
    ttlMs: 0,
    cacheScope: 'public',
  };
  const a = discoverToInitializeResult(discover, { requestedVersion: '2025-03-26' });
  assert.is(okValue(a).protocolVersion, '2025-03-26');
  assert.is(okValue(a).serverInfo.name, 'mcp-dual-era');
  const b = discoverToInitializeResult(discover, { requestedVersion: '2026-07-28' });
  assert.is(okValue(b).protocolVersion, '2025-11-25');
  if (b.ok) assert.equal(validateMessage('2025-11-25', { jsonrpc: '2.0', id: 1, result: b.value }, { method: 'initialize' }), []);
  assert.not.ok(initializeResultToDiscover({ protocolVersion: '2025-06-18', capabilities: {} }).ok, 'serverInfo is required upstream');
});
disc.run();

const caps = suite('capabilities');
caps('should map roots and extensions both ways, and declare only the tasks an adapter serves', () => {
  assert.equal(
    clientCapabilitiesToModern({
      roots: { listChanged: true },
      sampling: { tools: {} },
      tasks: { requests: { sampling: { createMessage: {} } } },
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
    }),
    {
      roots: {},
      sampling: { tools: {} },
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
    },
    "a legacy client's client-hosted tasks: no tasks extension",
  );
  assert.equal(
    clientCapabilitiesToLegacy({ roots: {}, elicitation: { form: {}, url: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } }),
    { roots: {}, elicitation: { form: {}, url: {} } },
  );
  assert.equal(clientCapabilitiesToLegacy({ roots: {} }, { rootsListChanged: true }), { roots: { listChanged: true } });
  assert.equal(
    serverCapabilitiesToModern({ tasks: { list: {} }, tools: {} }),
    { tools: {} },
    'tasks without tools/call support: no tasks extension, nothing made up',
  );
  assert.equal(serverCapabilitiesToLegacy({ extensions: { 'io.modelcontextprotocol/tasks': {} }, resources: { subscribe: true } }), {
    resources: { subscribe: true },
  });
});
caps.run();

const errs = suite('errorToModern / errorToLegacy');
errs('should map resource-not-found both ways', () => {
  const legacy = { code: -32002, message: 'Resource not found' };
  const modern = errorToModern(legacy, { method: 'resources/read', params: { uri: 'file:///missing' } });
  assert.equal(modern, { code: -32602, message: 'Resource not found', data: { uri: 'file:///missing' } });
  assert.equal(errorToLegacy(modern, { method: 'resources/read' }), {
    code: -32002,
    message: 'Resource not found',
    data: { uri: 'file:///missing' },
  });
  assert.equal(errorToLegacy({ code: -32602, message: 'Unknown tool', data: { uri: 'x' } }, { method: 'tools/call' }).code, -32602);
});
errs('should not let a legacy code in the reserved range reach a modern client with a false meaning', () => {
  const e = errorToModern({ code: -32021, message: 'custom' });
  assert.equal(e, { code: -32603, message: 'custom', data: { upstreamCode: -32021 } });
  assert.equal(errorToLegacy(e), { code: -32021, message: 'custom' });
  assert.equal(errorToModern({ code: -32000, message: 'x' }), { code: -32000, message: 'x' });
  assert.equal(errorToModern({ code: -32601, message: 'x' }), { code: -32601, message: 'x' });
});
errs.run();

const tasks = suite('tasks');
tasks('should flatten a legacy task into a task result and back', () => {
  const task = {
    taskId: 't1',
    status: 'working',
    createdAt: '2025-11-25T10:30:00Z',
    lastUpdatedAt: '2025-11-25T10:30:00Z',
    ttl: 60000,
    pollInterval: 5000,
  };
  const m = createTaskResultToModern({ task });
  assert.ok(m.ok);
  if (!m.ok) return;
  assert.equal(m.value, {
    resultType: 'task',
    taskId: 't1',
    status: 'working',
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: 60000,
    pollIntervalMs: 5000,
  });
  const l = createTaskResultToLegacy(m.value);
  assert.ok(l.ok);
  if (l.ok) {
    assert.equal(l.value, { task });
    assert.equal(validateMessage('2025-11-25', { jsonrpc: '2.0', id: 1, result: l.value }, { method: 'tools/call' }), []);
  }
  assert.not.ok(createTaskResultToModern({ task: { taskId: 't' } }).ok);
});
tasks.run();
