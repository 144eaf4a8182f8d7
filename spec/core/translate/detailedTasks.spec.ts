/**
 * The tasks extension read by a legacy client (core/translate/detailedTasks.ts): a DetailedTask
 * → the legacy Task (checked against the official 2025-11-25 schema), a terminal task → the
 * answer of `tasks/result`, and the extension declared in one request only.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  declareTasksExtension,
  detailedTaskPayload,
  detailedTaskToLegacy,
  isTerminalStatus,
} from '../../../lib/core/translate/detailedTasks.ts';
import { check } from '../../helpers/schemas.ts';

const RELATED = 'io.modelcontextprotocol/related-task';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const base = {
  taskId: 't-1',
  createdAt: '2026-01-01T00:00:00Z',
  lastUpdatedAt: '2026-01-01T00:00:01Z',
  ttlMs: 60000,
  pollIntervalMs: 50,
  resultType: 'complete',
};

const s = suite('a DetailedTask read by a legacy client');

s('should rename ttl and pollInterval and leave the payload out, as a valid legacy Task', () => {
  const out = detailedTaskToLegacy({ ...base, status: 'input_required', inputRequests: { a: { method: 'roots/list' } } });
  assert.ok(out.ok);
  assert.equal(out.value, {
    ...{ taskId: 't-1', status: 'input_required' },
    createdAt: base.createdAt,
    lastUpdatedAt: base.lastUpdatedAt,
    ttl: 60000,
    pollInterval: 50,
  });
  assert.equal(check('2025-11-25', 'GetTaskResult', out.value), []);
});

s('should report a completed task whose result is a tool error as failed', () => {
  const failed = detailedTaskToLegacy({ ...base, status: 'completed', result: { content: [], isError: true } });
  assert.is(failed.ok && failed.value.status, 'failed');
  const done = detailedTaskToLegacy({ ...base, status: 'completed', result: { content: [] } });
  assert.is(done.ok && done.value.status, 'completed');
});

s('should answer tasks/result with the result tagged with its task, or the task error', () => {
  const done = detailedTaskPayload({
    ...base,
    status: 'completed',
    result: { content: [{ type: 'text', text: 'x' }], resultType: 'complete' },
  });
  assert.equal(done, { result: { content: [{ type: 'text', text: 'x' }], _meta: { [RELATED]: { taskId: 't-1' } } } });
  assert.equal(check('2025-11-25', 'CallToolResult', (done as { result: unknown }).result), []);
  assert.equal(detailedTaskPayload({ ...base, status: 'failed', error: { code: -32603, message: 'boom' } }), {
    error: { code: -32603, message: 'boom' },
  });
  const cancelled = detailedTaskPayload({ ...base, status: 'cancelled' });
  assert.ok('error' in cancelled && /cancelled/.test(cancelled.error.message));
  assert.ok(isTerminalStatus('cancelled') && !isTerminalStatus('input_required'));
});

s('should declare the extension in one request, or take it out', () => {
  const request = { jsonrpc: '2.0' as const, id: 1, method: 'tools/call', params: { name: 'x', _meta: { [CAPS]: { elicitation: {} } } } };
  const on = declareTasksExtension(request, true);
  assert.equal((on.params as { _meta: Record<string, unknown> })._meta[CAPS], {
    elicitation: {},
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  });
  const off = declareTasksExtension(on, false);
  assert.equal((off.params as { _meta: Record<string, unknown> })._meta[CAPS], { elicitation: {} });
  assert.is(declareTasksExtension(request, false), request);
});

s.run();
