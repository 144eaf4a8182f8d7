import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { inputFailure, refusalToInitializeError, unanswerableInputs, upstreamErrorToLegacy } from '../../../lib/core/translate/legacyClient.ts';

const refusal = suite('refusalToInitializeError');

refusal('should name the versions the upstream supports', () => {
  const error = refusalToInitializeError({ error: { code: -32022, message: 'Unsupported', data: { supported: ['2027-01-01', '2025-11-25'], requested: '2026-07-28' } } });
  assert.is(error.code, -32602);
  assert.match(error.message, '2027-01-01, 2025-11-25');
  assert.equal(error.data, { supported: ['2027-01-01', '2025-11-25'], requested: '2026-07-28', upstreamCode: -32022 });
});

refusal('should name the HTTP status', () => {
  assert.match(refusalToInitializeError({ status: 401 }).message, 'requires authorization (HTTP 401)');
  assert.match(refusalToInitializeError({ status: 403 }).message, 'refused access (HTTP 403)');
  assert.equal(refusalToInitializeError({ status: 403 }).data, { httpStatus: 403 });
});

refusal.run();

const inputs = suite('unanswerableInputs');

inputs('should list the input requests a legacy client did not declare', () => {
  const requests = {
    form: { method: 'elicitation/create', params: { mode: 'form', message: 'm', requestedSchema: { type: 'object', properties: {} } } },
    url: { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'https://example.com' } },
    llm: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
    roots: { method: 'roots/list' },
  } as never;
  assert.equal(unanswerableInputs(requests, { elicitation: {}, roots: { listChanged: true } }), ['url', 'llm']);
  assert.equal(unanswerableInputs(requests, { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} }), []);
});

inputs.run();

const failure = suite('inputFailure and upstreamErrorToLegacy');

failure('should end tools/call with an isError result, other methods with an error', () => {
  assert.equal(inputFailure('tools/call', 'why'), { result: { content: [{ type: 'text', text: 'why' }], isError: true } });
  assert.equal(inputFailure('prompts/get', 'why'), { error: { code: -32603, message: 'why' } });
});

failure('should turn -32021 on tools/call into an isError result, and -32602 on resources/read into -32002', () => {
  const missing = { code: -32021, message: 'needs elicitation', data: { requiredCapabilities: { elicitation: {} } } };
  const call = upstreamErrorToLegacy('tools/call', missing);
  assert.ok('result' in call && call.result['isError'] === true);
  assert.equal(upstreamErrorToLegacy('prompts/get', missing), { error: missing });
  const notFound = upstreamErrorToLegacy('resources/read', { code: -32602, message: 'Resource not found', data: { uri: 'x://y' } });
  assert.equal(notFound, { error: { code: -32002, message: 'Resource not found', data: { uri: 'x://y' } } });
});

failure.run();
