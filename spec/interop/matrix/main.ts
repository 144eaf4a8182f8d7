/**
 * `npm run matrix [-- --stdio | --http]`: runs the compatibility matrix, prints each variant as it
 * ends, and on a full run writes docs/matrix.md, docs/matrix.svg and the README's matrix block.
 * Exits 1 when an operation fails that `fixtures/matrix/baseline.json` does not name, when an
 * unwrapped attempt connects, or when a baseline entry no longer fails; 2 on a usage error.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ROOT } from '../../helpers/everything.ts';
import { allVariants, TRANSPORTS } from './cells.ts';
import { judge, markdown, orphans, readmeBlock, spliceReadme, totals, type Verdict } from './report.ts';
import { BASELINE, readBaseline, runVariants } from './run.ts';
import { svg } from './svg.ts';
import type { TransportKind } from './servers.ts';

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--stdio' && a !== '--http');
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run matrix [-- --stdio | --http]`);
  process.exit(2);
}
const only = TRANSPORTS.filter((t) => args.includes(`--${t}`));
const transports: readonly TransportKind[] = only.length > 0 ? only : TRANSPORTS;
const full = transports.length === TRANSPORTS.length;

const baseline = readBaseline();
const started = performance.now();
const verdicts: Verdict[] = [];
await runVariants(allVariants(transports), (result) => {
  const verdict = judge(result, baseline);
  verdicts.push(verdict);
  const passed = result.ops.filter((o) => o.ok).length;
  const status = result.variant.expect === 'refused' ? (result.ok ? 'refused' : 'CONNECTED') : `${passed}/${result.ops.length}`;
  console.log(
    `${verdict.unexpected.length + verdict.stale.length > 0 ? '✗' : '✓'} ${result.id.padEnd(52)} ${status.padEnd(9)} ${(result.ms / 1000).toFixed(1)} s`,
  );
  for (const id of verdict.unexpected) console.log(`    ${id}: ${result.ops.find((o) => o.op === id)?.detail ?? 'did not run'}`);
  for (const { op } of verdict.known) console.log(`    ${op} (known): ${result.ops.find((o) => o.op === op)?.detail}`);
  for (const id of verdict.stale) console.log(`    ${id}: passes now; remove it from ${BASELINE}`);
});

const problems =
  verdicts.reduce((n, v) => n + v.unexpected.length + v.stale.length, 0) +
  (full
    ? orphans(
        baseline,
        verdicts.map((v) => v.result),
      ).length
    : 0);
if (full) {
  for (const id of orphans(
    baseline,
    verdicts.map((v) => v.result),
  ))
    console.log(`✗ baseline entry for a variant that does not exist: ${id}`);
  writeFileSync(resolve(ROOT, 'docs/matrix.md'), markdown(verdicts, 'matrix.svg'));
  writeFileSync(resolve(ROOT, 'docs/matrix.svg'), svg(verdicts));
  const readme = resolve(ROOT, 'README.md');
  writeFileSync(readme, spliceReadme(readFileSync(readme, 'utf8'), readmeBlock(verdicts)));
}
console.log(
  `\n${totals(verdicts)}. ${((performance.now() - started) / 1000).toFixed(1)} s${full ? '; wrote docs/matrix.md, docs/matrix.svg and the README block' : ''}.`,
);
process.exit(problems > 0 ? 1 : 0);
