/**
 * `npm run bench:report [-- FILE]`: writes bench/RESULTS.md and bench/chart.svg from a saved run —
 * bench/results/latest.json, as `npm run bench` leaves it, or FILE (a copy of one) — without
 * running any bench. `npm run bench` calls the same `writeReport` after a full run.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderChart } from './report/chart.ts';
import { writeAtomic } from './shared/format.ts';
import { figuresOf } from './report/figures.ts';
import { renderReadmeWrap, renderResults, runCommit, runDate } from './report/markdown.ts';
import type { Run } from './report/types.ts';

const benchDir = import.meta.dirname;
export const RESULTS_FILE = 'RESULTS.md';
export const CHART_FILE = 'chart.svg';
export const LATEST = join(benchDir, 'results', 'latest.json');

/** Where a full run on another Node than the main run's is kept (`npm run bench -- --node=PATH`). */
export function latestOn(nodeVersion: string): string {
  return join(benchDir, 'results', `latest-node${nodeVersion.replace(/^v/, '')}.json`);
}

/** The saved full runs on other Nodes than `main`'s (of other major versions), oldest major first. */
export function readOtherNodeRuns(main: Run): Run[] {
  const dir = join(benchDir, 'results');
  if (!existsSync(dir)) return [];
  const major = (v: string) => Number(/^v?(\d+)/.exec(v)?.[1] ?? 0);
  const runs = readdirSync(dir)
    .filter((f) => /^latest-node[\d.]+\.json$/.test(f))
    .map((f) => readRun(join(dir, f)))
    .filter((r) => !r.quick && r.args.length === 0 && major(r.machine.node) !== major(main.machine.node));
  // One per major: the latest written.
  const byMajor = new Map<number, Run>();
  for (const r of runs) {
    const m = major(r.machine.node);
    const had = byMajor.get(m);
    if (!had || had.generatedAt < r.generatedAt) byMajor.set(m, r);
  }
  return [...byMajor.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r);
}

/** Reads a combined run, refusing anything that is not one. */
export function readRun(file: string): Run {
  const run = JSON.parse(readFileSync(file, 'utf8')) as Partial<Run>;
  if (run.schema !== 1 || !run.parts || !run.machine) throw new Error(`${file} is not a combined bench run (written by npm run bench)`);
  return run as Run;
}

/** RESULTS.md and the chart for `run`, as text. */
/** What is said by hand of the runs on other Node lines (why their ratios differ), put under their table. */
export const NODE_LINES_NOTE = join(benchDir, 'node-lines.md');

export function renderReport(run: Run, others: readonly Run[] = []): { markdown: string; chart: string } {
  const m = run.machine;
  const chart = renderChart(figuresOf(run), {
    title: `mcp-dual-era bench: ratios measured side by side in one run${run.quick ? ' (quick run, not figures to quote)' : ''}`,
    subtitle: `${runDate(run)}, commit ${runCommit(run)}; ${m.cpuModel}, ${m.cores} cores, ${m.os}, Node ${m.node}`,
  });
  const note = others.length > 0 && existsSync(NODE_LINES_NOTE) ? readFileSync(NODE_LINES_NOTE, 'utf8').trim() : undefined;
  return { markdown: renderResults(run, CHART_FILE, others, note), chart };
}

/** Writes RESULTS.md and the chart into `dir` (default bench/); returns their paths. */
export function writeReport(run: Run, dir: string = benchDir, others: readonly Run[] = []): { results: string; chart: string } {
  const { markdown, chart } = renderReport(run, others);
  const results = join(dir, RESULTS_FILE);
  const chartPath = join(dir, CHART_FILE);
  writeAtomic(chartPath, chart);
  writeAtomic(results, markdown);
  return { results, chart: chartPath };
}

export const README_START = '<!-- bench:wrap:start (written by npm run bench) -->';
export const README_END = '<!-- bench:wrap:end -->';

/**
 * Puts the wrap's table of `run` between the README's markers; false (and nothing written) when the
 * file has no markers. Only a full run belongs there: callers check.
 */
export function updateReadme(file: string, run: Run): boolean {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(README_START);
  const end = text.indexOf(README_END);
  if (start === -1 || end < start) return false;
  const updated = `${text.slice(0, start + README_START.length)}\n\n${renderReadmeWrap(run)}\n\n${text.slice(end)}`;
  if (updated !== text) writeAtomic(file, updated);
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  if (args.length > 1 || args.some((a) => a.startsWith('-'))) {
    console.error('usage: npm run bench:report [-- FILE]   (default bench/results/latest.json)');
    process.exit(2);
  }
  const file = resolve(args[0] ?? LATEST);
  let run: Run;
  try {
    run = readRun(file);
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : String(e)}\nrun npm run bench first (or give the file of a saved run)`);
    process.exit(1);
  }
  const written = writeReport(run, undefined, readOtherNodeRuns(run));
  const root = join(benchDir, '..');
  if (!run.quick && run.args.length === 0) updateReadme(join(root, 'docs/speed.md'), run);
  console.log(
    `from ${relative(root, file)} (run of ${runDate(run)}, commit ${runCommit(run)}): wrote ${relative(root, written.results)} and ${relative(root, written.chart)}`,
  );
}
