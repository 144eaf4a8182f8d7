/**
 * Known gaps on one line of Node, each with its reason (fixtures/baselines/nodeLines.json): a spec
 * that has one skips it on that line only, saying so, and runs everywhere else.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './everything.ts';

const GAPS = JSON.parse(readFileSync(join(ROOT, 'fixtures/baselines/nodeLines.json'), 'utf8')) as Record<string, Record<string, string>>;

/** The reason `suite / test` is a known gap on this process's line of Node, if it is one. */
export function gapOnThisLine(suite: string, test: string): string | undefined {
  const line = process.versions.node.split('.')[0]!;
  return GAPS[line]?.[`${suite} / ${test}`];
}
