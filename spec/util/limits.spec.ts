import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdapterError, ErrorCode } from '../../lib/core/errors.ts';
import { limitError, limitExceeded, limitHeaders, limitRefusal, limitStatus, refusalOf } from '../../lib/util/limits.ts';

const limits = suite('limitExceeded');

limits('should name the limit in the message and in data, with -32005', () => {
  const error = limitExceeded(limitRefusal('listens-per-caller', 16, 'this caller has 16 listens open'));
  assert.is(error.code, ErrorCode.LimitExceeded);
  assert.is(error.code, -32005);
  assert.is(error.message, 'Limit exceeded: listens-per-caller (16): this caller has 16 listens open');
  assert.equal(error.data, { limit: 'listens-per-caller', max: 16, retryAfterSeconds: 5 });
});

limits('should answer a caller limit with 429 and a server limit with 503, each with Retry-After', () => {
  const caller = limitRefusal('sessions-per-caller', 16, 'x');
  const server = limitRefusal('sessions', 64, 'x');
  assert.is(caller.scope, 'caller');
  assert.is(server.scope, 'server');
  assert.is(limitStatus(caller), 429);
  assert.is(limitStatus(server), 503);
  assert.equal(limitHeaders(server), { 'retry-after': '1' });
  assert.equal(
    limitHeaders(limitRefusal('sessions', 64, 'x', { retryAfterSeconds: 2.2 })),
    { 'retry-after': '3' },
    'whole seconds, rounded up',
  );
  assert.equal(limitHeaders(limitRefusal('sessions', 64, 'x', { retryAfterSeconds: 0 })), { 'retry-after': '1' }, 'never zero');
});

limits('should carry a refusal through a thrown AdapterError and read it back', () => {
  const refusal = limitRefusal('parked', 10, 'ten calls wait');
  const error = limitError(refusal);
  assert.instance(error, AdapterError);
  assert.is(error.code, 'limit');
  assert.is(refusalOf(error), refusal);
  assert.is(refusalOf(new AdapterError('closed', 'x')), undefined);
  assert.is(refusalOf(new Error('x')), undefined);
});

limits.run();
