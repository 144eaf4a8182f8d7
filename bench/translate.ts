/**
 * `npm run bench:translate [-- --quick] [-- --filter=TEXT]` (also the first of `npm run bench`,
 * before bench/wrap.ts): the translator's cost per message (classify +
 * validate + translate, on the decoded message) against `JSON.parse` + `JSON.stringify` of the same
 * message text, for small, medium and large messages in both directions.
 *
 * Prints a table and writes the same results to bench/results/translate.json. Timings are reported,
 * never asserted; the exit status is non-zero only when a translation fails (a bug, not a timing).
 */
import { CASES, type BenchCase, type Translated } from './cases.ts';
import { measure, type MeasureOptions, type Measurement, type SideStats } from './measure.ts';
import { SIZES, type SizeName } from './messages.ts';
import { banner, consoleTable, environment, int, writeResults } from './shared/format.ts';

/** Translator cost may be at most this multiple of parse + stringify for small and medium messages. */
const GOAL_RATIO = 1.5;
const GOAL_SIZES: readonly SizeName[] = ['small', 'medium'];

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const filter = args
  .find((a) => a.startsWith('--filter='))
  ?.slice('--filter='.length)
  .toLowerCase();
const unknown = args.filter((a) => a !== '--quick' && !a.startsWith('--filter='));
if (unknown.length > 0) {
  console.error(`unknown argument(s): ${unknown.join(' ')}\nusage: npm run bench:translate -- [--quick] [--filter=TEXT]`);
  process.exit(2);
}

const options: MeasureOptions = quick ? { sampleMs: 40, samples: 5, warmupMs: 20 } : { sampleMs: 200, samples: 5, warmupMs: 100 };

interface Row {
  readonly case: string;
  readonly direction: BenchCase['direction'];
  readonly size: SizeName;
  readonly bytes: number;
  readonly measurement?: Measurement;
  readonly failure?: string;
}

function label(c: BenchCase): string {
  return `${c.name} ${c.direction}`;
}

function describeError(error: unknown): string {
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** Runs a translation once on a fresh decode and checks its output; a string says what went wrong. */
function verify(c: BenchCase, text: string): string | undefined {
  const input = JSON.parse(text) as Record<string, unknown>;
  let translated: Translated;
  try {
    translated = c.translate(input);
  } catch (e) {
    return `threw: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (!translated.ok) return `failure outcome: ${describeError(translated.error)}`;
  const wrong = c.check(input, translated.value);
  if (wrong) return `wrong output: ${wrong}`;
  if (JSON.stringify(input) !== text) return 'the translation mutated its input';
  return undefined;
}

const fmtRatio = (r: number): string => (r < 0.01 ? r.toFixed(4) : r.toFixed(3));

/** Half the range of the samples without the fastest and the slowest, relative to the median. */
function spreadOf(side: SideStats): number {
  const sorted = [...side.samplesNs].sort((a, b) => a - b);
  const inner = sorted.length >= 5 ? sorted.slice(1, -1) : sorted;
  return (inner[inner.length - 1]! - inner[0]!) / 2 / side.medianNs;
}

function table(rows: readonly Row[]): string {
  const head = ['case', 'direction', 'size', 'bytes', 'baseline ns/msg', 'translate ns/msg', 'ratio', 'spread'];
  const body = rows.map((r) => {
    const m = r.measurement;
    if (!m) return [r.case, r.direction, r.size, int.format(r.bytes), '-', '-', 'FAILED', ''];
    const spread = Math.max(spreadOf(m.baseline), spreadOf(m.candidate));
    return [
      r.case,
      r.direction,
      r.size,
      int.format(r.bytes),
      int.format(m.baseline.medianNs),
      int.format(m.candidate.medianNs),
      fmtRatio(m.ratio),
      `±${Math.round(spread * 100)}%`,
    ];
  });
  return consoleTable(head, body, { left: 3 });
}

console.log(banner('translator bench'));
console.log(
  `${quick ? 'quick: ' : ''}${options.samples} alternating samples of ≥${options.sampleMs} ms per side, median reported; ` +
    'baseline = JSON.parse + JSON.stringify of the message text; translate = classify + validate + translate of the decoded message',
);
console.log('');

const started = Date.now();
const rows: Row[] = [];
let failed = false;

interface Input {
  readonly c: BenchCase;
  readonly size: SizeName;
  readonly text: string;
  readonly bytes: number;
  readonly decoded: unknown;
  /** Set when the one-off checked translation failed: the input is reported, not timed. */
  readonly problem: string | undefined;
}

// Build every input and check its translation once before timing anything.
const inputs: Input[] = [];
for (const c of CASES) {
  for (const size of SIZES) {
    if (filter && !`${label(c)} ${size.name}`.toLowerCase().includes(filter)) continue;
    const text = JSON.stringify(c.build(size.bytes));
    const bytes = Buffer.byteLength(text);
    const problem = verify(c, text);
    if (problem) {
      failed = true;
      console.error(`FAIL ${label(c)} (${size.name}, ${bytes} B): ${problem}`);
    }
    inputs.push({ c, size: size.name, text, bytes, decoded: JSON.parse(text) as unknown, problem });
  }
}

// Global warm-up: every case and size runs before any is timed, so the shared code (valibot, the
// translator) has seen every message shape, as in a long-running adapter, and the results do not
// depend on the order of the cases.
for (let round = 0; round < 2; round++) {
  for (const { c, text, decoded, problem } of inputs) {
    if (problem) continue;
    const until = performance.now() + options.warmupMs / 4;
    do {
      JSON.stringify(JSON.parse(text));
      c.translate(decoded);
    } while (performance.now() < until);
  }
}

for (const { c, size, text, bytes, decoded, problem } of inputs) {
  const row = { case: c.name, direction: c.direction, size, bytes };
  if (problem) {
    rows.push({ ...row, failure: problem });
    continue;
  }
  let loopFailures = 0;
  const baseline = (): unknown => JSON.stringify(JSON.parse(text));
  const candidate = (): unknown => {
    const r = c.translate(decoded);
    if (!r.ok) loopFailures++;
    return r;
  };
  const measurement = measure(baseline, candidate, options);
  if (loopFailures > 0) {
    failed = true;
    const failure = `${loopFailures} failure outcome(s) while timing`;
    console.error(`FAIL ${label(c)} (${size}): ${failure}`);
    rows.push({ ...row, failure });
  } else rows.push({ ...row, measurement });
}

console.log(table(rows));
const elapsedS = (Date.now() - started) / 1000;

const goalRows = rows.filter((r) => GOAL_SIZES.includes(r.size) && r.measurement);
const misses = goalRows.filter((r) => r.measurement!.ratio > GOAL_RATIO);
console.log('');
if (goalRows.length === 0) console.log(`goal (ratio ≤ ${GOAL_RATIO} for small and medium messages): not measured`);
else if (misses.length === 0)
  console.log(`goal (ratio ≤ ${GOAL_RATIO} for small and medium messages): HOLDS for all ${goalRows.length} measured`);
else {
  console.log(`goal (ratio ≤ ${GOAL_RATIO} for small and medium messages): MISSED by ${misses.length} of ${goalRows.length}:`);
  for (const r of misses) console.log(`  ${r.case} ${r.direction} ${r.size}: ratio ${fmtRatio(r.measurement!.ratio)}`);
}
console.log(`(${elapsedS.toFixed(1)} s; spread = half the range of the samples without the extremes, relative to the median, worse side)`);

const report = {
  generatedAt: new Date().toISOString(),
  environment: environment(),
  options: { ...options, quick, filter: filter ?? null },
  baseline: 'JSON.parse + JSON.stringify of the message text',
  translate: 'classify + validate + translate of the already-decoded message',
  goal: { maxRatio: GOAL_RATIO, sizes: GOAL_SIZES, measured: goalRows.length, holds: goalRows.length > 0 && misses.length === 0 },
  elapsedSeconds: elapsedS,
  results: rows.map((r) => ({
    case: r.case,
    direction: r.direction,
    size: r.size,
    bytes: r.bytes,
    ...(r.measurement
      ? {
          baselineNsPerMsg: r.measurement.baseline.medianNs,
          translateNsPerMsg: r.measurement.candidate.medianNs,
          ratio: r.measurement.ratio,
          pairedRatio: r.measurement.pairedRatio,
          baseline: r.measurement.baseline,
          translate: r.measurement.candidate,
        }
      : { failure: r.failure }),
  })),
};
writeResults('translate.json', report);

if (failed) {
  console.error('a translation failed: that is a bug, not a timing');
  process.exitCode = 1;
}
