/**
 * The known gaps the fuzz oracles allow (fixtures/fuzz/baseline.json): a rule is relaxed only
 * while the gap that needs it is listed there, with its reason.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

interface Gap {
  readonly id: string;
  readonly where: string;
  readonly allows: string;
  readonly reason: string;
}

const BASELINE = resolve(import.meta.dirname, '../../fixtures/fuzz/baseline.json');
const gaps = (JSON.parse(readFileSync(BASELINE, 'utf8')) as { gaps: Gap[] }).gaps;

/** True while the gap `id` is listed in the baseline. */
export function knownGap(id: 'relayed-request-may-go-unanswered' | 'stream-errors-inside-200'): boolean {
  return gaps.some((g) => g.id === id);
}

/** Every listed gap (for the check that each has its reason). */
export function listedGaps(): readonly Gap[] {
  return gaps;
}
