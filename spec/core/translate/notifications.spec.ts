import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { failure, okValue } from '../../helpers/outcome.ts';
import {
  cancelToModern,
  isLegacyOnlyNotification,
  logAllowed,
  logToModern,
  progressToLegacy,
} from '../../../lib/core/translate/notifications.ts';
import {
  acknowledgement,
  filterToLegacySubscriptions,
  honouredFilter,
  legacySubscriptionsToFilter,
  listenResult,
  notificationFromListen,
  notificationToListen,
  readListenFilter,
  uriMatches,
} from '../../../lib/core/translate/subscriptions.ts';
import { assembleBatch, splitBatch } from '../../../lib/core/translate/batch.ts';
import { modernMeta, SERVER } from '../../helpers/messages.ts';
import { validateMessage } from '../../helpers/schemas.ts';

const logs = suite('logs');
logs('should send a log only at or above the level the request asked for, and none when it asked for none', () => {
  assert.ok(logAllowed('error', 'warning'));
  assert.ok(logAllowed('warning', 'warning'));
  assert.not.ok(logAllowed('info', 'warning'));
  assert.not.ok(logAllowed('emergency', undefined));
  const n = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { level: 'debug', data: 'x' } };
  const r = logToModern(n, 'info');
  assert.is(okValue(r), undefined);
  assert.not.ok(logToModern({ ...n, params: { level: 'loud', data: 1 } }, 'debug').ok);
});
logs.run();

const prog = suite('progress and cancellation');
prog('should drop progress message for a 2024-11-05 peer only', () => {
  const n = {
    jsonrpc: '2.0' as const,
    method: 'notifications/progress',
    params: { progressToken: 't', progress: 1, total: 2, message: 'half' },
  };
  const old = progressToLegacy(n, { legacyVersion: '2024-11-05' });
  assert.not.ok('message' in (okValue(old).params ?? {}));
  const newer = progressToLegacy(n, { legacyVersion: '2025-03-26' });
  assert.is(okValue(newer), n);
  assert.not.ok(progressToLegacy({ ...n, params: { progress: 1 } }).ok);
});
prog('should refuse a cancellation without requestId going modern', () => {
  assert.not.ok(cancelToModern({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { reason: 'x' } }).ok);
  assert.ok(cancelToModern({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } }).ok);
  assert.ok(isLegacyOnlyNotification('notifications/initialized'));
  assert.not.ok(isLegacyOnlyNotification('notifications/progress'));
});
prog.run();

const subs = suite('subscriptions');
const caps = { tools: { listChanged: true }, prompts: {}, resources: { subscribe: true, listChanged: false } };
subs('should acknowledge only what the server supports', () => {
  const honoured = honouredFilter(
    { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ['file:///a'], taskIds: ['t'] },
    caps,
  );
  assert.equal(honoured, { toolsListChanged: true, resourceSubscriptions: ['file:///a'] });
  const ack = acknowledgement('listen-1', honoured);
  assert.equal(validateMessage('2026-07-28', ack), []);
  assert.equal(
    validateMessage(
      '2026-07-28',
      { jsonrpc: '2.0', id: 'listen-1', result: listenResult('listen-1', { serverInfo: SERVER }) },
      { method: 'subscriptions/listen' },
    ),
    [],
  );
});
subs('should deliver only opted-in notifications, tagged, and match sub-resources', () => {
  const listen = { subscriptionId: 7, filter: { toolsListChanged: true, resourceSubscriptions: ['file:///project/'] } };
  const tagged = notificationToListen(
    { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///project/src/a.ts' } },
    listen,
  );
  assert.equal(tagged, {
    jsonrpc: '2.0',
    method: 'notifications/resources/updated',
    params: { uri: 'file:///project/src/a.ts', _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
  });
  assert.is(notificationToListen({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' }, listen), undefined);
  assert.is(
    notificationToListen({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///other' } }, listen),
    undefined,
  );
  assert.is(
    notificationToListen({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 1 } }, listen),
    undefined,
    'logs never on a listen',
  );
  assert.equal(notificationFromListen(tagged!), {
    notification: { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///project/src/a.ts' } },
    subscriptionId: 7,
  });
  assert.ok(uriMatches('file:///a/b', ['file:///a']));
  assert.not.ok(uriMatches('file:///ab', ['file:///a']));
});
subs('should map the legacy subscribe set to a listen filter and back', () => {
  assert.equal(legacySubscriptionsToFilter(['file:///x'], caps), { toolsListChanged: true, resourceSubscriptions: ['file:///x'] });
  assert.equal(filterToLegacySubscriptions({ resourceSubscriptions: ['a', 'b', 'a'] }, caps), ['a', 'b']);
  assert.equal(filterToLegacySubscriptions({ resourceSubscriptions: ['a'] }, { resources: {} }), []);
  const r = readListenFilter({ notifications: { toolsListChanged: 'yes' }, _meta: modernMeta() });
  assert.is(failure(r).code, -32602);
});
subs.run();

const batch = suite('batch');
batch('should split a batch, answer broken members in place, and assemble answers in request order', () => {
  const items = splitBatch([
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 7 },
    { jsonrpc: '2.0', id: 3, method: 'prompts/list' },
  ]);
  const answers = new Map([
    [3, { jsonrpc: '2.0' as const, id: 3, result: { prompts: [] } }],
    [1, { jsonrpc: '2.0' as const, id: 1, result: { tools: [] } }],
  ]);
  const out = assembleBatch(items, answers);
  assert.equal(
    out?.map((r) => [r.id, 'error' in r ? r.error.code : 'ok']),
    [
      [1, 'ok'],
      [2, -32600],
      [3, 'ok'],
    ],
  );
  assert.is(assembleBatch(splitBatch([{ jsonrpc: '2.0', method: 'notifications/initialized' }]), new Map()), undefined);
});
batch.run();
