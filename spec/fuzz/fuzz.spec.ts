/**
 * The short fuzz run of `npm test` (a few thousand cases; `npm run fuzz` is the full one): bad
 * input into every translator entry point and into the HTTP (Web handler and Node listener) and
 * stdio fronts of `wrapLegacyServer`. See spec/fuzz/plan.ts for the targets and the knobs.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { listedGaps } from './gaps.ts';
import { decodeAsWritten, shapeOf } from './httpOracle.ts';
import { planFromEnv, runPlan, SHORT } from './plan.ts';
import { translatorFunctions, translatorTargets } from './translators.ts';

const fuzz = suite('fuzz (short run)');

fuzz('should call every exported translator function', () => {
  const targeted = new Set(translatorTargets());
  assert.equal(
    translatorFunctions().filter((f) => !targeted.has(f)),
    [],
  );
});

fuzz('should list each known gap with where it is, what it allows and why', () => {
  for (const gap of listedGaps())
    for (const key of ['id', 'where', 'allows', 'reason'] as const)
      assert.ok(typeof gap[key] === 'string' && gap[key].length > 10, `${gap.id}: ${key}`);
});

fuzz('should read a request id as its text writes it, not as a double rounds it', () => {
  const idOf = (id: string) => shapeOf(decodeAsWritten(`{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`));
  for (const id of ['6.816282210487058e-1541', '1e-400', '0.5', '9007199254740993.5'])
    assert.equal(idOf(id), { kind: 'broken', id: undefined }, id);
  for (const [id, read] of [
    ['1.50e2', 150],
    ['0e-5', 0],
    ['100e-2', 1],
    ['-0', -0],
  ] as const)
    assert.equal(idOf(id), { kind: 'request', id: read, method: 'tools/list' }, id);
  assert.equal(shapeOf(decodeAsWritten('{"jsonrpc":"2.0","id":1,"method":"x","params":{"id":0.5,"s":"1e-9"}}')), {
    kind: 'request',
    id: 1,
    method: 'x',
  });
});

fuzz('should answer every bad input as the spec says, and hold nothing after', async () => {
  const outcome = await runPlan(planFromEnv(SHORT));
  assert.equal(outcome.failures, [], outcome.failures.join('\n\n'));
  assert.ok(
    outcome.reports.reduce((n, r) => n + r.cases, 0) >= 3000 ||
      process.env['FUZZ_RUNS'] !== undefined ||
      process.env['FUZZ_TARGET'] !== undefined,
    'a few thousand cases',
  );
});

fuzz.run();
