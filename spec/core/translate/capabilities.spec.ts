import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  clientCapabilitiesToLegacy,
  serverCapabilitiesToLegacy,
  serverCapabilitiesToModern,
} from '../../../lib/core/translate/capabilities.ts';
import { discoverToInitializeResult, initializeResultToDiscover } from '../../../lib/core/translate/discover.ts';
import { validateMessage } from '../../helpers/schemas.ts';

const roots = suite('clientCapabilitiesToLegacy roots');
roots('should declare roots.listChanged upstream only when asked to', () => {
  assert.equal(clientCapabilitiesToLegacy({ roots: {} }), { roots: {} });
  assert.equal(clientCapabilitiesToLegacy({ roots: {} }, { rootsListChanged: true }), { roots: { listChanged: true } });
  assert.equal(
    clientCapabilitiesToLegacy({ elicitation: {} }, { rootsListChanged: true }),
    { elicitation: {} },
    'no roots declared, none added',
  );
});
roots('should declare roots for an adapter with roots of its own, whatever the client declared', () => {
  assert.equal(clientCapabilitiesToLegacy({ sampling: {} }, { rootsListChanged: true, ownRoots: true }), {
    sampling: {},
    roots: { listChanged: true },
  });
  assert.equal(clientCapabilitiesToLegacy({ roots: {} }, { rootsListChanged: true, ownRoots: true }), { roots: { listChanged: true } });
  assert.equal(clientCapabilitiesToLegacy({}, { ownRoots: true }), { roots: {} });
});
roots.run();

/** What server-everything 2026.8.31 declares, and shapes around it. */
const EVERYTHING_TASKS = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
const declarations: Array<[string, Record<string, unknown>]> = [
  ['list, cancel and task-run tools (server-everything)', { tools: { listChanged: true }, tasks: EVERYTHING_TASKS }],
  ['task-run tools only', { tools: {}, tasks: { requests: { tools: { call: {} } } } }],
  ['list and cancel without task-run tools', { tools: {}, tasks: { list: {}, cancel: {} } }],
  [
    'tasks beside extensions of its own',
    { tools: {}, tasks: { list: {} }, extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html'] } } },
  ],
  ['no tasks', { tools: {}, logging: {} }],
];

const tasks = suite('server capabilities: the tasks served');
for (const [name, legacy] of declarations) {
  tasks(`should declare the tasks extension exactly when tools/call runs as tasks, nothing made up: ${name}`, () => {
    const modern = serverCapabilitiesToModern(legacy) as Record<string, any>;
    const toolTasks = (legacy['tasks'] as any)?.requests?.tools?.call !== undefined;
    assert.is('io.modelcontextprotocol/tasks' in (modern['extensions'] ?? {}), toolTasks);
    assert.equal(
      Object.keys(modern['extensions'] ?? {}).filter((k) => k !== 'io.modelcontextprotocol/tasks'),
      Object.keys(legacy['extensions'] ?? {}),
    );
    assert.not.ok('tasks' in modern);
    const { tasks: _, ...rest } = legacy;
    assert.equal(serverCapabilitiesToLegacy(modern), rest, 'back to legacy: no legacy tasks, which no adapter serves a legacy client');
  });
}
tasks('should read a modern server that has the tasks extension as one without legacy tasks', () => {
  assert.equal(serverCapabilitiesToLegacy({ tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } }), { tools: {} });
});
tasks('should go initialize → discover → initialize without tasks, schema-valid on both sides', () => {
  const init = {
    protocolVersion: '2025-11-25',
    capabilities: { tools: { listChanged: true }, logging: {}, tasks: EVERYTHING_TASKS },
    serverInfo: { name: 'mcp-servers/everything', version: '2.0.0' },
  };
  const discover = initializeResultToDiscover(init);
  assert.ok(discover.ok);
  if (!discover.ok) return;
  assert.equal(validateMessage('2026-07-28', { jsonrpc: '2.0', id: 1, result: discover.value }, { method: 'server/discover' }), []);
  const back = discoverToInitializeResult(discover.value as unknown as Record<string, unknown>, { requestedVersion: '2025-11-25' });
  assert.ok(back.ok);
  if (!back.ok) return;
  assert.equal(back.value.capabilities, { tools: { listChanged: true }, logging: {} });
  assert.equal(validateMessage('2025-11-25', { jsonrpc: '2.0', id: 1, result: back.value }, { method: 'initialize' }), []);
});
tasks.run();
