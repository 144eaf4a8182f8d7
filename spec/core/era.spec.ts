import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyVersion, claimedEra, negotiateLegacyVersion, pickModernVersion } from '../../lib/core/era.ts';

const classify = suite('classifyVersion');
classify('should place every known revision in its era', () => {
  for (const v of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])
    assert.equal(classifyVersion(v), { kind: 'known', version: v, era: 'legacy' });
  assert.equal(classifyVersion('2026-07-28'), { kind: 'known', version: '2026-07-28', era: 'modern' });
});
classify('should place unknown dated strings by their date without claiming support', () => {
  assert.equal(classifyVersion('2027-01-15'), { kind: 'unknown-dated', version: '2027-01-15', era: 'modern' });
  assert.equal(classifyVersion('1900-01-01'), { kind: 'unknown-dated', version: '1900-01-01', era: 'legacy' });
});
classify('should call drafts, junk and non-strings unrecognised', () => {
  for (const v of ['DRAFT-2026-v1', '1.0.0', '2026-13-01', '', 'draft']) assert.is(classifyVersion(v).kind, 'unrecognised');
  for (const v of [null, 42, {}, undefined]) assert.is(classifyVersion(v).kind, 'unrecognised');
});
classify.run();

const negotiate = suite('negotiateLegacyVersion');
negotiate('should echo a supported legacy version', () => {
  assert.is(negotiateLegacyVersion('2025-03-26'), '2025-03-26');
});
negotiate('should answer the newest legacy version for a modern, unknown or missing one', () => {
  for (const v of ['2026-07-28', '2099-01-01', 'x', undefined]) assert.is(negotiateLegacyVersion(v), '2025-11-25');
  assert.is(negotiateLegacyVersion('2025-11-25', ['2024-11-05', '2025-06-18']), '2025-06-18');
});
negotiate('should pick a shared modern version or none', () => {
  assert.is(pickModernVersion(['2026-07-28', '2025-11-25']), '2026-07-28');
  assert.is(pickModernVersion(['2025-11-25']), undefined);
});
negotiate.run();

const claimed = suite('claimedEra');
const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
claimed('should call a request modern only through the protocolVersion _meta key', () => {
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }), 'modern');
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { progressToken: 1 } } }), 'legacy');
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, method: 'server/discover' }), 'legacy');
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2026-07-28' } }), 'legacy');
});
claimed('should read notifications, results and errors by their era marks', () => {
  assert.is(claimedEra({ jsonrpc: '2.0', method: 'notifications/initialized' }), 'legacy');
  assert.is(
    claimedEra({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 1 } },
    }),
    'modern',
  );
  assert.is(claimedEra({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }), 'unclaimed');
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, result: { resultType: 'complete' } }), 'modern');
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, result: {} }), 'unclaimed');
  assert.is(
    claimedEra({ jsonrpc: '2.0', id: 1, error: { code: -32022, message: 'x', data: { supported: ['2026-07-28'], requested: '1' } } }),
    'modern',
  );
  // The same rule as server/discover's verdict: a -32022 without the list of versions is no modern mark.
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, error: { code: -32022, message: 'x' } }), 'unclaimed');
  assert.is(claimedEra({ jsonrpc: '2.0', id: 1, error: { code: -32002, message: 'x' } }), 'legacy');
  assert.is(claimedEra('garbage'), 'unclaimed');
});
claimed.run();

const hostile = suite('classifyVersion on decoded values');
hostile('should not throw for an object whose toString member is not a function', () => {
  assert.equal(classifyVersion(JSON.parse('{"toString":0}')), { kind: 'unrecognised', version: '{"toString":0}' });
});
hostile.run();
