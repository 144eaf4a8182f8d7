import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { failure, okValue } from '../../helpers/outcome.ts';
import * as t from '../../../lib/core/translate/inputRequests.ts';
import { modernRequest, SERVER } from '../../helpers/messages.ts';
import { validateMessage } from '../../helpers/schemas.ts';

const form = {
  jsonrpc: '2.0' as const,
  id: 5,
  method: 'elicitation/create',
  params: {
    message: 'Name?',
    requestedSchema: { type: 'object' as const, properties: { name: { type: 'string' } } },
    _meta: { progressToken: 1 },
    task: { ttl: 100 },
  },
};
const url = {
  jsonrpc: '2.0' as const,
  id: 6,
  method: 'elicitation/create',
  params: { mode: 'url', message: 'Log in', url: 'https://example.com/login', elicitationId: 'el-9' },
};
const sampling = {
  jsonrpc: '2.0' as const,
  id: 7,
  method: 'sampling/createMessage',
  params: {
    messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
    maxTokens: 10,
    tools: [{ name: 'x', inputSchema: { type: 'object' } }],
  },
};
const roots = { jsonrpc: '2.0' as const, id: 8, method: 'roots/list', params: { _meta: { 'mcp-dual-era/inputKey': 'workspace' } } };

const push = suite('pushToInputRequest / inputRequiredResult');
push('should strip id, _meta, task and elicitationId, and key pushes deterministically or by the server', () => {
  const r = t.inputRequiredResult(
    [form, url, sampling, roots].map((p, i) => ({ key: t.inputKeyOf(p, i + 1), request: p })),
    { requestState: 'sealed', serverInfo: SERVER },
  );
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.value, {
    resultType: 'input_required',
    inputRequests: {
      'elicitation-1': {
        method: 'elicitation/create',
        params: { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
      },
      'elicitation-2': { method: 'elicitation/create', params: { mode: 'url', message: 'Log in', url: 'https://example.com/login' } },
      'sampling-3': { method: 'sampling/createMessage', params: sampling.params },
      workspace: { method: 'roots/list' },
    },
    requestState: 'sealed',
    _meta: { 'io.modelcontextprotocol/serverInfo': SERVER },
  });
  assert.equal(validateMessage('2026-07-28', { jsonrpc: '2.0', id: 1, result: r.value }, { method: 'tools/call' }), []);
});
push('should refuse a push that MRTR cannot carry, a malformed one, and a key used twice', () => {
  assert.is(failure(t.pushToInputRequest({ method: 'ping' })).code, -32602);
  assert.is(failure(t.pushToInputRequest({ method: 'elicitation/create', params: { message: 'no schema' } })).code, -32602);
  assert.is(failure(t.pushToInputRequest({ method: 'sampling/createMessage', params: { messages: [] } })).code, -32602);
  const twice = t.inputRequiredResult([
    { key: 'k', request: form },
    { key: 'k', request: roots },
  ]);
  assert.match(failure(twice).message, 'input key k is used twice');
  assert.is(failure(twice).code, -32602);
  assert.is(failure(t.inputRequiredResult([]), 'input_required needs something').code, -32602);
  const loadShed = t.inputRequiredResult([], { requestState: 's' });
  assert.is(okValue(loadShed)['inputRequests'], undefined);
});
push.run();

const back = suite('inputRequestToPush');
back('should give a URL-mode push the elicitationId a legacy client needs', () => {
  const r = t.inputRequestToPush(
    'login',
    { method: 'elicitation/create', params: { mode: 'url', message: 'Log in', url: 'https://example.com/login' } },
    { id: 'p1', elicitationId: 'el-1' },
  );
  assert.ok(r.ok);
  if (r.ok) {
    assert.equal(r.value, {
      jsonrpc: '2.0',
      id: 'p1',
      method: 'elicitation/create',
      params: {
        mode: 'url',
        message: 'Log in',
        url: 'https://example.com/login',
        elicitationId: 'el-1',
        _meta: { 'mcp-dual-era/inputKey': 'login' },
      },
    });
    assert.equal(validateMessage('2025-11-25', r.value), []);
  }
  assert.not.ok(
    t.inputRequestToPush('login', { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://x' } }, { id: 1 }).ok,
  );
});
back('should record the key so a round trip keeps the server-visible name', () => {
  const p = t.inputRequestToPush('user_name', { method: 'elicitation/create', params: form.params }, { id: 3 });
  assert.is(t.inputKeyOf(okValue(p), 1), 'user_name');
});
back.run();

const resp = suite('input responses');
resp('should check a response against its method and name the key in -32602', () => {
  assert.ok(t.inputResponseToResult('elicitation/create', 'k', { action: 'accept', content: { name: 'Ada' } }).ok);
  const wrong = t.inputResponseToResult('elicitation/create', 'user_name', { action: 'maybe' });
  assert.not.ok(wrong.ok);
  if (!wrong.ok) {
    assert.is(wrong.error.code, -32602);
    assert.match(wrong.error.message, /inputResponses\.user_name/);
  }
  assert.not.ok(
    t.inputResponseToResult('sampling/createMessage', 'k', { role: 'assistant', content: { type: 'text', text: 'x' } }).ok,
    'model is required',
  );
  assert.not.ok(t.inputResponseToResult('roots/list', 'k', { roots: 'all' }).ok);
  assert.not.ok(t.inputResponseToResult('roots/list', 'k', null).ok);
});
resp('should drop _meta from a legacy client result and resultType from a modern response', () => {
  const r = t.resultToInputResponse('roots/list', 'k', { roots: [{ uri: 'file:///w' }], _meta: { a: 1 } });
  assert.is(okValue(r)['_meta'], undefined);
  const m = t.inputResponseToResult('elicitation/create', 'k', { action: 'decline', resultType: 'complete' });
  assert.not.ok('resultType' in okValue(m));
});
resp('should build the retry with a new id and the state echoed byte for byte', () => {
  const original = modernRequest('tools/call', { name: 'greet', arguments: {}, inputResponses: { old: {} }, requestState: 'old' }, {}, 1);
  const retry = t.retryRequest(original, {
    id: 2,
    inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
    requestState: 'AEAD+/=',
  });
  assert.equal(retry.params?.['inputResponses'], { user_name: { action: 'accept', content: { name: 'Ada' } } });
  assert.is(retry.params?.['requestState'], 'AEAD+/=');
  assert.is(retry.id, 2);
  const noState = t.retryRequest(original, { id: 3, inputResponses: {} });
  assert.not.ok('requestState' in (noState.params ?? {}));
  assert.equal(validateMessage('2026-07-28', retry), []);
});
resp.run();

const caps = suite('checkInputCapability');
caps('should allow what the request declared and answer -32021 with requiredCapabilities otherwise', () => {
  const elicitForm = { method: 'elicitation/create' as const, params: form.params };
  const elicitUrl = { method: 'elicitation/create' as const, params: { mode: 'url', message: 'm', url: 'https://x' } };
  assert.ok(t.checkInputCapability(elicitForm, { elicitation: {} }).ok, '{} is form mode');
  assert.ok(t.checkInputCapability(elicitForm, { elicitation: { form: {} } }).ok);
  assert.equal(failure(t.checkInputCapability(elicitForm, { elicitation: { url: {} } }), 'url only is not form').data, {
    requiredCapabilities: { elicitation: { form: {} } },
  });
  assert.is(failure(t.checkInputCapability(elicitForm, { elicitation: { url: {} } })).code, -32021);
  assert.equal(
    [
      failure(t.checkInputCapability(elicitUrl, { elicitation: {} })).code,
      failure(t.checkInputCapability(elicitUrl, { elicitation: {} })).data,
    ],
    [-32021, { requiredCapabilities: { elicitation: { url: {} } } }],
  );
  assert.ok(t.checkInputCapability(elicitUrl, { elicitation: { url: {} } }).ok);
  const noSampling = t.checkInputCapability({ method: 'sampling/createMessage', params: sampling.params }, { sampling: {} });
  assert.not.ok(noSampling.ok, 'tools need sampling.tools');
  if (!noSampling.ok) {
    assert.equal([noSampling.error.code, noSampling.error.data], [-32021, { requiredCapabilities: { sampling: { tools: {} } } }]);
    assert.equal(validateMessage('2026-07-28', { jsonrpc: '2.0', id: 1, error: noSampling.error }), []);
  }
  assert.not.ok(t.checkInputCapability({ method: 'roots/list' }, {}).ok);
  assert.ok(t.legacyClientAllows({ method: 'roots/list' }, { roots: { listChanged: true } }));
});
caps('should say what the client lacks in words a person reading the host log understands', () => {
  const said = (input: { method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list'; params?: unknown }, have: object = {}) =>
    failure(t.checkInputCapability(input as never, have as never)).message;
  assert.is(
    said({ method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } }),
    'The client cannot do what this call needs: the server asked it to write a reply with its language model (sampling/createMessage), and the client did not declare the sampling capability',
  );
  assert.is(
    said({ method: 'sampling/createMessage', params: sampling.params }, { sampling: {} }),
    'The client cannot do what this call needs: the server asked it to write a reply with its language model, with tools (sampling/createMessage), and the client did not declare the sampling and sampling.tools capability',
  );
  assert.is(
    said({ method: 'roots/list' }),
    'The client cannot do what this call needs: the server asked it to list its roots (the folders or files it lets servers work on) (roots/list), and the client did not declare the roots capability',
  );
  assert.match(said({ method: 'elicitation/create', params: form.params }), 'ask the user to fill in a form (elicitation/create)');
  assert.match(
    said({ method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://x' } }, { elicitation: {} }),
    'send the user to a web page (elicitation/create), and the client did not declare the elicitation.url capability',
  );
});
caps.run();

const urlErr = suite('-32042 ⇄ input_required');
urlErr('should turn URL elicitations into entries without ids, and back with the ids given', () => {
  const error = {
    code: -32042,
    message: 'Authorization required',
    data: { elicitations: [{ mode: 'url', message: 'Connect', url: 'https://example.com/connect', elicitationId: 'e1' }] },
  };
  const r = t.urlElicitationToInputRequired(error, { requestState: 's' });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.value.elicitationIds, { 'elicitation-1': 'e1' });
  assert.equal(r.value.result['inputRequests'], {
    'elicitation-1': { method: 'elicitation/create', params: { mode: 'url', message: 'Connect', url: 'https://example.com/connect' } },
  });
  const backErr = t.inputRequiredToUrlElicitation(
    r.value.result['inputRequests'] as never,
    (k) => r.value.elicitationIds[k]!,
    error.message,
  );
  assert.ok(backErr.ok);
  if (backErr.ok) assert.equal(backErr.value, error);
  assert.not.ok(t.urlElicitationToInputRequired({ code: -32042, message: 'x', data: {} }).ok);
  assert.not.ok(t.inputRequiredToUrlElicitation({ k: { method: 'roots/list' } }, () => 'x').ok);
});
urlErr.run();

const hostile = suite('inputRequiredResult under hostile keys');
hostile('should keep an input request whose server-chosen key is __proto__', () => {
  const r = t.inputRequiredResult([{ key: '__proto__', request: form }], { requestState: 's' });
  assert.ok(r.ok);
  if (!r.ok) return;
  const inputs = r.value['inputRequests'] as Record<string, unknown>;
  assert.is(Object.getPrototypeOf(inputs), Object.prototype);
  assert.equal(Object.keys(inputs), ['__proto__']);
  assert.equal(
    validateMessage('2026-07-28', JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: 1, result: r.value })), { method: 'tools/call' }),
    [],
  );
});
hostile.run();

const inputs = suite('unanswerableInputs');

inputs('should list the input requests a legacy client did not declare', () => {
  const requests = {
    form: { method: 'elicitation/create', params: { mode: 'form', message: 'm', requestedSchema: { type: 'object', properties: {} } } },
    url: { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://example.com' } },
    llm: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
    roots: { method: 'roots/list' },
  } as never;
  assert.equal(t.unanswerableInputs(requests, { elicitation: {}, roots: { listChanged: true } }), ['url', 'llm']);
  assert.equal(t.unanswerableInputs(requests, { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} }), []);
});

inputs.run();
