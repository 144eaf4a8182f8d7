import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  clientCapabilitiesToLegacy,
  LEGACY_TASKS_KEY,
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

const tasks = suite('server capabilities: legacy → modern → legacy');
for (const [name, legacy] of declarations) {
  tasks(`should give back what the legacy server declared: ${name}`, () => {
    assert.equal(serverCapabilitiesToLegacy(serverCapabilitiesToModern(legacy)), legacy);
  });
}
tasks('should offer the tasks extension only for task-run tools/call, with the declaration carried beside it', () => {
  assert.equal(serverCapabilitiesToModern({ tasks: EVERYTHING_TASKS }), {
    extensions: { 'io.modelcontextprotocol/tasks': {}, [LEGACY_TASKS_KEY]: EVERYTHING_TASKS },
  });
  assert.equal(serverCapabilitiesToModern({ tasks: { list: {} } }), { extensions: { [LEGACY_TASKS_KEY]: { list: {} } } });
});
tasks('should read a modern server that has the tasks extension alone as task-run tools/call and cancel', () => {
  assert.equal(serverCapabilitiesToLegacy({ tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } }), {
    tools: {},
    tasks: { cancel: {}, requests: { tools: { call: {} } } },
  });
});
tasks('should keep tasks.list through initialize → discover → initialize, schema-valid on both sides', () => {
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
  assert.equal(back.value.capabilities, init.capabilities);
  assert.equal(validateMessage('2025-11-25', { jsonrpc: '2.0', id: 1, result: back.value }, { method: 'initialize' }), []);
});
tasks.run();
