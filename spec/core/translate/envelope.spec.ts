import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { okValue } from '../../helpers/outcome.ts';
import {
  discoverToInitializeRequest,
  initializeToDiscoverRequest,
  readEnvelope,
  requestToLegacy,
  requestToModern,
} from '../../../lib/core/translate/envelope.ts';
import { CLIENT, modernMeta, modernRequest } from '../../helpers/messages.ts';
import { validateMessage } from '../../helpers/schemas.ts';

const read = suite('readEnvelope');
read('should read version, capabilities, client info, log level and progress token', () => {
  const r = readEnvelope(
    modernRequest(
      'tools/list',
      {},
      { 'io.modelcontextprotocol/logLevel': 'warning', progressToken: 'p1', 'io.modelcontextprotocol/clientCapabilities': { roots: {} } },
    ),
  );
  assert.ok(r.ok);
  if (r.ok)
    assert.equal(r.value, {
      protocolVersion: '2026-07-28',
      clientCapabilities: { roots: {} },
      clientInfo: CLIENT,
      logLevel: 'warning',
      progressToken: 'p1',
    });
});
read('should answer a missing required key with -32602 and HTTP 400', () => {
  const cases = [
    { jsonrpc: '2.0' as const, id: 1, method: 'tools/list' },
    { jsonrpc: '2.0' as const, id: 1, method: 'tools/list', params: {} },
    modernRequest('tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': undefined }),
    modernRequest('tools/list', {}, { 'io.modelcontextprotocol/clientCapabilities': undefined }),
  ];
  for (const req of cases) {
    const r = readEnvelope(req);
    assert.not.ok(r.ok, JSON.stringify(req));
    if (!r.ok) {
      assert.is(r.error.code, -32602);
      assert.is(r.error.status, 400);
    }
  }
});
read('should answer an unsupported version with -32022 naming the supported ones', () => {
  for (const version of ['2025-11-25', '1900-01-01', 'DRAFT-2026-v1', '2027-01-01']) {
    const r = readEnvelope(modernRequest('tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': version }));
    assert.not.ok(r.ok);
    if (!r.ok) {
      assert.equal(
        { code: r.error.code, data: r.error.data, status: r.error.status },
        { code: -32022, data: { supported: ['2026-07-28'], requested: version }, status: 400 },
      );
      assert.equal(
        validateMessage('2026-07-28', {
          jsonrpc: '2.0',
          id: 1,
          error: { code: r.error.code, message: r.error.message, data: r.error.data },
        }),
        [],
      );
    }
  }
});
read('should refuse an unknown log level and malformed client info or capabilities with -32602', () => {
  for (const meta of [
    { 'io.modelcontextprotocol/logLevel': 'verbose' },
    { 'io.modelcontextprotocol/clientInfo': { name: 'x' } },
    { 'io.modelcontextprotocol/clientCapabilities': 'all' },
  ]) {
    const r = readEnvelope(modernRequest('tools/list', {}, meta));
    assert.not.ok(r.ok, JSON.stringify(meta));
    if (!r.ok) assert.is(r.error.code, -32602);
  }
  read('should read a retry with the envelope, once, on the methods that may ask for input', () => {
    const inputResponses = { k: { action: 'accept', content: { n: 1 } } };
    const retry = okValue(readEnvelope(modernRequest('tools/call', { name: 't', inputResponses, requestState: 'sealed' })));
    assert.equal(retry.retry, { inputResponses, requestState: 'sealed' });
    assert.equal(okValue(readEnvelope(modernRequest('tools/call', { name: 't', requestState: 'sealed' }))).retry, {
      requestState: 'sealed',
    });
    assert.is(okValue(readEnvelope(modernRequest('tools/call', { name: 't' }))).retry, undefined);
    // completion/complete cannot ask for input: its requestState is the server's business.
    assert.is(okValue(readEnvelope(modernRequest('completion/complete', { requestState: 'x' }))).retry, undefined);
  });
  read('should refuse a retry whose members have the wrong type with -32602, answered in a 200', () => {
    for (const params of [{ inputResponses: [] }, { inputResponses: 'k' }, { requestState: 7 }, { requestState: null }]) {
      const r = readEnvelope(modernRequest('prompts/get', { name: 'p', ...params }));
      assert.not.ok(r.ok, JSON.stringify(params));
      if (!r.ok) assert.equal([r.error.code, r.error.status], [-32602, 200], JSON.stringify(params));
    }
  });
});
read.run();

const toLegacy = suite('requestToLegacy');
toLegacy('should strip the era keys and keep the progress token, trace context and other keys', () => {
  const r = requestToLegacy(
    modernRequest(
      'tools/call',
      { name: 'echo', arguments: { a: 1 } },
      { progressToken: 7, traceparent: '00-abc-def-01', 'com.example/x': true },
    ),
  );
  assert.ok(r.ok);
  if (r.ok)
    assert.equal(r.value.request, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { a: 1 }, _meta: { progressToken: 7, traceparent: '00-abc-def-01', 'com.example/x': true } },
    });
});
toLegacy('should omit params that end up empty, and take the MRTR members off a retry', () => {
  const r = requestToLegacy(modernRequest('tools/list'));
  assert.not.ok('params' in okValue(r).request);
  const retry = requestToLegacy(
    modernRequest('prompts/get', { name: 'p', inputResponses: { k: { action: 'cancel' } }, requestState: 's' }),
  );
  assert.ok(retry.ok);
  if (retry.ok) {
    assert.equal(retry.value.request.params, { name: 'p' });
    assert.equal(retry.value.envelope.retry, { inputResponses: { k: { action: 'cancel' } }, requestState: 's' });
  }
});
toLegacy("should drop a legacy task flag from a call: whether it runs as a task is the server side's to decide", () => {
  const r = okValue(requestToLegacy(modernRequest('tools/call', { name: 'greet', arguments: {}, task: { ttl: 60_000 } })));
  assert.equal(r.request.params, { name: 'greet', arguments: {} });
});
toLegacy('should leave inputResponses alone on methods that cannot carry MRTR', () => {
  const r = requestToLegacy(
    modernRequest('completion/complete', { ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' }, requestState: 'x' }),
  );
  assert.is(okValue(r).envelope.retry, undefined);
  assert.is(okValue(r).request.params?.['requestState'], 'x');
});
toLegacy('should answer methods with no legacy form, and methods removed in 2026-07-28, with -32601 / 404', () => {
  for (const method of ['server/discover', 'subscriptions/listen', 'ping', 'logging/setLevel', 'resources/subscribe', 'initialize']) {
    const r = requestToLegacy(modernRequest(method));
    assert.not.ok(r.ok, method);
    if (!r.ok) assert.equal([r.error.code, r.error.status], [-32601, 404]);
  }
});
toLegacy('should refuse a malformed requestState or inputResponses with -32602', () => {
  for (const extra of [{ requestState: 5 }, { inputResponses: [] }]) {
    const r = requestToLegacy(modernRequest('tools/call', { name: 't', ...extra }));
    assert.not.ok(r.ok);
    if (!r.ok) assert.is(r.error.code, -32602);
  }
});
toLegacy.run();

const toModern = suite('requestToModern');
const session = { clientInfo: CLIENT, capabilities: { roots: { listChanged: true }, sampling: {} }, logLevel: 'info' as const };
toModern('should stamp the session version, identity, capabilities and log level over the request _meta', () => {
  const r = requestToModern(
    { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 't', _meta: { progressToken: 'tok' } } },
    session,
  );
  assert.ok(r.ok);
  if (r.ok) {
    assert.equal(
      r.value.params?.['_meta'],
      modernMeta({
        progressToken: 'tok',
        'io.modelcontextprotocol/clientCapabilities': { roots: {}, sampling: {} },
        'io.modelcontextprotocol/logLevel': 'info',
      }),
    );
    assert.equal(validateMessage('2026-07-28', r.value), []);
  }
});
toModern('should not stamp a log level the session never set (no logs are asked for)', () => {
  const r = requestToModern({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { clientInfo: CLIENT, capabilities: {} });
  assert.not.ok('io.modelcontextprotocol/logLevel' in (okValue(r).params?.['_meta'] as object));
});
toModern('should refuse legacy-only methods, which the adapter answers itself', () => {
  for (const method of ['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'initialize']) {
    const r = requestToModern({ jsonrpc: '2.0', id: 1, method }, session);
    assert.not.ok(r.ok);
    if (!r.ok) assert.is(r.error.code, -32601);
  }
});
toModern.run();

const init = suite('initialize ⇄ server/discover requests');
init('should carry client info and capabilities across and keep the id', () => {
  const initialize = {
    jsonrpc: '2.0' as const,
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: { roots: { listChanged: true }, elicitation: {} }, clientInfo: CLIENT },
  };
  const d = initializeToDiscoverRequest(initialize);
  assert.ok(d.ok);
  if (!d.ok) return;
  assert.equal(d.value, {
    jsonrpc: '2.0',
    id: 0,
    method: 'server/discover',
    params: { _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': { roots: {}, elicitation: {} } }) },
  });
  const back = discoverToInitializeRequest(d.value, { legacyVersion: '2025-06-18' });
  assert.ok(back.ok);
  if (back.ok) assert.equal(back.value, { ...initialize, params: { ...initialize.params, capabilities: { roots: {}, elicitation: {} } } });
});
init('should synthesise client info for a discover that carries none, and refuse a malformed initialize', () => {
  const d = discoverToInitializeRequest({
    jsonrpc: '2.0',
    id: 'd',
    method: 'server/discover',
    params: { _meta: modernMeta({ 'io.modelcontextprotocol/clientInfo': undefined }) },
  });
  assert.ok(d.ok);
  if (d.ok) {
    assert.equal((d.value.params as { clientInfo: unknown }).clientInfo, { name: 'mcp-dual-era', version: '0.1.0' });
    assert.equal(validateMessage('2025-11-25', d.value), []);
  }
  const bad = initializeToDiscoverRequest({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } });
  assert.not.ok(bad.ok);
  if (!bad.ok) assert.is(bad.error.code, -32602);
});
init.run();

const hostile = suite('the envelope under hostile members');
hostile('should pass a params member named __proto__ upstream as data', () => {
  const request = JSON.parse(
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","__proto__":{"name":"y"},"_meta":${JSON.stringify(modernMeta())}}}`,
  );
  const r = requestToLegacy(request);
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.is(Object.getPrototypeOf(r.value.request.params), Object.prototype);
  assert.is(JSON.stringify(r.value.request.params), '{"name":"x","__proto__":{"name":"y"}}');
});
hostile('should refuse an initialize whose capabilities hold arrays where objects belong', () => {
  for (const capabilities of [[], { elicitation: [] }, { roots: [[0]] }, { tasks: { requests: [] } }]) {
    const r = initializeToDiscoverRequest({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: CLIENT },
    });
    assert.not.ok(r.ok, JSON.stringify(capabilities));
    if (!r.ok) assert.is(r.error.code, -32602);
  }
});
hostile('should refuse client capabilities or their members sent as arrays', () => {
  for (const caps of [[], [{ elicitation: {} }], { elicitation: [] }, { sampling: { tools: [] } }, { experimental: { a: [] } }]) {
    const r = readEnvelope(modernRequest('tools/list', {}, { 'io.modelcontextprotocol/clientCapabilities': caps }));
    assert.not.ok(r.ok, JSON.stringify(caps));
    if (!r.ok) assert.equal([r.error.code, r.error.status], [-32602, 400]);
  }
});
hostile.run();
