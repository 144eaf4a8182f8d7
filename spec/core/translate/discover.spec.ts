import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { refusalToInitializeError } from '../../../lib/core/translate/discover.ts';

const refusal = suite('refusalToInitializeError');

refusal('should name the versions the upstream supports', () => {
  const error = refusalToInitializeError({
    error: { code: -32022, message: 'Unsupported', data: { supported: ['2027-01-01', '2025-11-25'], requested: '2026-07-28' } },
  });
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
