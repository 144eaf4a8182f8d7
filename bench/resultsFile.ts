/**
 * Where the benches leave their reports: bench/results/ (git-ignored), one JSON file each, written
 * whole (a temporary file renamed into place), so a reader never sees half a report.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const RESULTS_DIR = join(import.meta.dirname, 'results');

/** Writes `report` as bench/results/`name` and prints where; returns the path. */
export function writeResults(name: string, report: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, name);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  console.log(`results written to ${join('bench', 'results', name)}`);
  return file;
}
