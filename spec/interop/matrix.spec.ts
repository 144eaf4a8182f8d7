/**
 * The compatibility matrix in `npm test`: every variant of every cell (client era × server era ×
 * transport, natively or through each remedy; spec/interop/matrix/) runs the whole script against
 * real peers and must pass every operation, and every unwrapped attempt at a cell that needs a wrap
 * must be refused by the peers. Variants with known gaps (fixtures/matrix/baseline.json) are judged
 * by `npm run matrix`, which also writes the report.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allVariants, variantId, type Variant } from './matrix/cells.ts';
import { ERA_LABEL, routeLabel, TRANSPORT_LABEL } from './matrix/report.ts';
import { readBaseline, runVariant } from './matrix/run.ts';

const baseline = readBaseline();
const matrix = suite('the compatibility matrix');

function describe(v: Variant): string {
  return `${ERA_LABEL[v.client]} client, ${ERA_LABEL[v.server]} server, ${TRANSPORT_LABEL[v.transport]}`;
}

for (const variant of allVariants().filter((v) => !(variantId(v) in baseline))) {
  if (variant.expect === 'refused') {
    matrix(`should be refused without a wrap: ${describe(variant)}`, async () => {
      const result = await runVariant(variant);
      assert.is(result.ops.length, 1);
      assert.ok(result.ok, `connected: ${result.ops[0]?.detail}`);
      // The peers' own refusals: the v2 client finds no 2026-07-28 in server/discover, the v2 server answers initialize with -32022.
      assert.match(result.ops[0]!.detail, variant.client === 'modern' ? /ERA_NEGOTIATION_FAILED/ : /-32022/);
    });
  } else {
    matrix(`should pass every operation, ${routeLabel(variant).replaceAll('`', '')}: ${describe(variant)}`, async () => {
      const result = await runVariant(variant);
      const failed = result.ops.filter((o) => !o.ok).map((o) => `${o.op}: ${o.detail}`);
      assert.equal(failed, [], failed.join('\n'));
      assert.ok(result.ok);
    });
  }
}

matrix.run();
