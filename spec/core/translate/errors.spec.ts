import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { upstreamErrorToLegacy } from '../../../lib/core/translate/errors.ts';
import { inputFailure } from '../../../lib/core/translate/inputRequests.ts';

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
