/**
 * The era verdict on every answer a server can give to `server/discover` (core/verdict.ts): the
 * one rule the probe, the legacy-client handshake and `claimedEra` follow.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimedEra } from '../../lib/core/era.ts';
import { eraOfDiscoverAnswer, type DiscoverAnswer, type DiscoverAsked, type EraVerdict } from '../../lib/core/verdict.ts';
import { isRecognisedModernError } from '../../lib/core/errors.ts';

const sent = '2026-07-28';
const discover = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28', '2025-11-25'],
  capabilities: {},
  ttlMs: 0,
  cacheScope: 'public',
};
const err = (code: number, data?: unknown) => ({ code, message: 'm', ...(data === undefined ? {} : { data }) });

type Row = readonly [
  what: string,
  answer: DiscoverAnswer,
  era: EraVerdict['era'],
  more?: Partial<Record<string, unknown>>,
  asked?: Partial<DiscoverAsked>,
];

const ROWS: readonly Row[] = [
  // results
  ['a DiscoverResult sharing our version', { kind: 'result', result: discover }, 'modern', { version: sent, discover }],
  ['a DiscoverResult over HTTP 200', { kind: 'result', result: discover, status: 200 }, 'modern', { version: sent }],
  ['a DiscoverResult listing a legacy version only', { kind: 'result', result: { supportedVersions: ['2025-11-25'] } }, 'legacy'],
  [
    'a DiscoverResult listing only modern versions we do not speak',
    { kind: 'result', result: { supportedVersions: ['2027-01-01'] } },
    'unshared',
    { supported: ['2027-01-01'] },
  ],
  ['a result without supportedVersions (a legacy server answering anything)', { kind: 'result', result: {} }, 'legacy'],
  ['a result that is not an object', { kind: 'result', result: 'ok' }, 'legacy'],
  ['a result with HTTP 400', { kind: 'result', result: discover, status: 400 }, 'legacy'],
  // recognised modern errors
  [
    '-32022 naming the version sent: asked again, once',
    { kind: 'error', error: err(-32022, { supported: [sent], requested: sent }) },
    'retry',
    { version: sent },
  ],
  [
    '-32022 naming the version sent, after the retry',
    { kind: 'error', error: err(-32022, { supported: [sent], requested: sent }) },
    'modern',
    { version: sent },
    { retried: true },
  ],
  [
    '-32022 naming another version we speak',
    { kind: 'error', error: err(-32022, { supported: ['2027-01-01'] }) },
    'retry',
    { version: '2027-01-01' },
    { ours: ['2026-07-28', '2027-01-01'] as never },
  ],
  ['-32022 naming only a legacy version', { kind: 'error', error: err(-32022, { supported: ['2025-11-25'] }) }, 'legacy'],
  [
    '-32022 naming only modern versions we do not speak',
    { kind: 'error', error: err(-32022, { supported: ['2027-01-01'] }), status: 400 },
    'unshared',
    { supported: ['2027-01-01'] },
  ],
  ['-32022 without data.supported', { kind: 'error', error: err(-32022) }, 'legacy'],
  ['-32020 (header mismatch)', { kind: 'error', error: err(-32020), status: 400 }, 'modern', { version: sent }],
  [
    '-32021 with requiredCapabilities',
    { kind: 'error', error: err(-32021, { requiredCapabilities: { sampling: {} } }) },
    'modern',
    { version: sent },
  ],
  ['-32021 without requiredCapabilities', { kind: 'error', error: err(-32021) }, 'legacy'],
  ['HTTP 404 with -32601', { kind: 'error', error: err(-32601), status: 404 }, 'modern', { version: sent }],
  // errors both eras give
  ['-32601 on stdio', { kind: 'error', error: err(-32601) }, 'legacy', { streamable: undefined }],
  ['-32601 with HTTP 200', { kind: 'error', error: err(-32601), status: 200 }, 'legacy', { streamable: true }],
  ['-32602 on stdio', { kind: 'error', error: err(-32602) }, 'legacy'],
  ['-32600 with HTTP 400', { kind: 'error', error: err(-32600), status: 400 }, 'legacy', { streamable: true }],
  ['-32000 "No valid session ID" with HTTP 400', { kind: 'error', error: err(-32000), status: 400 }, 'legacy', { streamable: true }],
  // HTTP statuses without a JSON-RPC answer
  ['HTTP 400, no JSON-RPC body', { kind: 'status', status: 400 }, 'legacy', { streamable: undefined }],
  ['HTTP 404, no JSON-RPC body (HTTP+SSE)', { kind: 'status', status: 404 }, 'legacy'],
  ['HTTP 405, no JSON-RPC body', { kind: 'status', status: 405 }, 'legacy'],
  ['HTTP 200, no JSON-RPC body', { kind: 'status', status: 200 }, 'legacy'],
  ['HTTP 401', { kind: 'status', status: 401 }, 'unknown', { status: 401 }],
  ['HTTP 403', { kind: 'status', status: 403 }, 'unknown', { status: 403 }],
  ['HTTP 401 with a JSON-RPC error', { kind: 'error', error: err(-32001), status: 401 }, 'unknown', { status: 401 }],
  ['HTTP 302', { kind: 'status', status: 302 }, 'unknown', { status: 302 }],
  ['HTTP 500', { kind: 'status', status: 500 }, 'unknown', { status: 500 }],
  ['HTTP 503 with a JSON-RPC error', { kind: 'error', error: err(-32603), status: 503 }, 'unknown', { status: 503 }],
  // silence and the rest
  ['silence after the server has spoken', { kind: 'silence', spoken: true, ms: 2000 }, 'legacy'],
  ['silence from a server that never spoke', { kind: 'silence', spoken: false, ms: 30000 }, 'unknown'],
  ['the process exiting', { kind: 'exit' }, 'legacy'],
  ['an answer to initialize instead', { kind: 'other', what: 'the server answered initialize' }, 'legacy'],
];

const verdict = suite('the era verdict on an answer to server/discover');

for (const [what, answer, era, more, asked] of ROWS) {
  verdict(`${what} → ${era}`, () => {
    const got = eraOfDiscoverAnswer(answer, { sent, ...asked });
    assert.is(got.era, era, JSON.stringify(got));
    for (const [k, v] of Object.entries(more ?? {}))
      assert.equal((got as unknown as Record<string, unknown>)[k], v, `${k} of ${JSON.stringify(got)}`);
    if (got.era !== 'modern' && got.era !== 'retry') assert.ok(got.reason.length > 0, 'a verdict that is not modern says why');
  });
}

verdict('should ask again only once: -32022 naming a version we speak after the retry is no shared version', () => {
  const ours = ['2026-07-28', '2027-01-01'] as never;
  const answer: DiscoverAnswer = { kind: 'error', error: err(-32022, { supported: ['2027-01-01'] }) };
  assert.equal(eraOfDiscoverAnswer(answer, { sent, ours }), { era: 'retry', version: '2027-01-01' });
  const again = eraOfDiscoverAnswer(answer, { sent, ours, retried: true });
  assert.is(again.era, 'unshared');
});

verdict('should carry the refusal of a modern error, for a handshake to answer with', () => {
  const error = err(-32020);
  const got = eraOfDiscoverAnswer({ kind: 'error', error, status: 400 }, { sent });
  assert.equal(got, { era: 'modern', version: sent, refusal: error });
});

verdict('should recognise the same modern errors in claimedEra', () => {
  for (const [what, answer, era] of ROWS) {
    if (answer.kind !== 'error' || answer.status !== undefined) continue;
    const claimed = claimedEra({ jsonrpc: '2.0', id: 1, error: answer.error });
    const modern = isRecognisedModernError(answer.error);
    assert.is(
      modern,
      era === 'modern' ||
        era === 'retry' ||
        era === 'unshared' ||
        (era === 'legacy' && answer.error.code === -32022 && Array.isArray((answer.error.data as { supported?: unknown })?.supported)),
      what,
    );
    if (modern) assert.is(claimed, 'modern', what);
    else assert.is.not(claimed, 'modern', what);
  }
});

verdict.run();
