/**
 * The tasks bench's report: the shape of bench/results/tasks.json (which bench/report/ turns into
 * RESULTS.md's Tasks section), and the same figures as console lines.
 */
import { consoleTable, formatRatio, int, us } from '../shared/format.ts';
import type { BenchOutcome, BenchRunInfo } from '../shared/results.ts';
import type { PollCell } from './polls.ts';
import { KINDS } from './settings.ts';

/** bench/results/tasks.json. */
export interface TasksResults extends BenchRunInfo, BenchOutcome {
  /** Options every `serve` of the fleet was given, beyond its port, its fleet and its server. */
  readonly serveOptions: readonly string[];
  readonly oneProcess?: PollCell;
  /** Why the fleet was not measured (no Redis to run one on), if so. */
  readonly fleetSkipped?: string;
  readonly redis?: { readonly url: string; readonly version: string };
  readonly fleet?: PollCell;
}

/** What each kind of request is, by its key. */
export const KIND_LABELS: Readonly<Record<string, string>> = {
  [KINDS.oneProcess.poll]: 'tasks/get of a working task',
  [KINDS.oneProcess.plain]: 'plain call (greet)',
  [KINDS.fleet.forwarded]: 'tasks/get to B, forwarded to A',
  [KINDS.fleet.plainB]: 'plain call to B',
  [KINDS.fleet.local]: 'tasks/get to A, where the task runs',
  [KINDS.fleet.plainA]: 'plain call to A',
};

function cellLines(title: string, c: PollCell): string[] {
  return [
    `${title} (${int.format(c.rounds)} rounds after ${c.warm}, one request at a time, the order rotating)`,
    consoleTable(
      ['request', 'n', 'p50', 'p99', 'mean'],
      Object.entries(c.kinds).map(([key, s]) => [KIND_LABELS[key] ?? key, int.format(s.n), us(s.p50Us), us(s.p99Us), us(s.meanUs)]),
    ),
    consoleTable(
      ['ratio', 'p50', 'p99', 'paired'],
      c.ratios.map((r) => [r.label, formatRatio(r.ratioP50), formatRatio(r.ratioP99), formatRatio(r.pairedRatio)]),
    ),
  ];
}

/** The console report. */
export function summaryLines(r: TasksResults): string[] {
  const out: string[] = [];
  if (r.oneProcess) out.push('', ...cellLines('1. One process: the wrap over Node HTTP in front of the fixture', r.oneProcess));
  if (r.fleetSkipped) out.push('', `2. Fleet not measured: ${r.fleetSkipped}`);
  if (r.fleet) out.push('', ...cellLines('2. Two replicas of serve --fleet: the task on A', r.fleet));
  out.push('');
  for (const w of r.wrongSamples) out.push(`WRONG ${w}`);
  for (const f of r.failures) out.push(`FAILED ${f}`);
  return out;
}
