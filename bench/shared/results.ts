/**
 * What the fleet and tasks benches' results files share: the run's header (when, on what, which
 * commit and build, in front of which server) and its end (wrong answers, failures, time taken),
 * and how a bench ends: the end filled in, the summary printed, the file written, the exit status
 * set by wrong answers and failures alone.
 */
import { cpus } from 'node:os';
import type { Wrong } from '../mrtr/requests.ts';
import { gitCommit } from './build.ts';
import { writeResults } from './format.ts';

/** The header of a bench's results file: when, where and what it ran. */
export interface BenchRunInfo {
  readonly date: string;
  readonly quick: boolean;
  readonly node: string;
  readonly cpus: number;
  readonly loadAverage: number;
  readonly commit?: string | undefined;
  readonly lib: string;
  /** The legacy server behind every front, and its tools. */
  readonly server: string;
}

/** The header of a run started now, in front of `server`, on lib/ compiled as `npm run build` does (`loadAverage` read at its start). */
export function benchRunInfo(quick: boolean, loadAverage: number, server: string): BenchRunInfo {
  return {
    date: new Date().toISOString(),
    quick,
    node: process.version,
    cpus: cpus().length,
    loadAverage,
    commit: gitCommit(),
    lib: 'lib/ compiled (tsc, tsconfig.build.json)',
    server,
  };
}

/** The end of a bench's results file: what it got wrong, what failed, how long it took. */
export interface BenchOutcome {
  readonly wrongAnswers: number;
  readonly wrongSamples: readonly string[];
  readonly failures: readonly string[];
  readonly elapsedSeconds: number;
}

/** How a bench's run went, for `finishBench`: its wrong answers, its failures, and when it started (`performance.now()`). */
export interface BenchTally {
  readonly wrong: Wrong;
  readonly failures: readonly string[];
  readonly started: number;
}

/**
 * Ends a bench: `results` completed with the tally's outcome, its summary lines and a last line of
 * wrong answers and time printed, written as bench/results/`name`; exits non-zero for a wrong
 * answer or a failure, never for a timing.
 */
export function finishBench<R extends BenchOutcome>(
  name: string,
  results: Omit<R, keyof BenchOutcome>,
  tally: BenchTally,
  summaryLines: (r: Omit<R, keyof BenchOutcome> & BenchOutcome) => string[],
): never {
  const { wrong, failures, started } = tally;
  const done = {
    ...results,
    wrongAnswers: wrong.count,
    wrongSamples: wrong.first,
    failures,
    elapsedSeconds: (performance.now() - started) / 1000,
  };
  console.log([...summaryLines(done), `wrong answers: ${wrong.count}; ${done.elapsedSeconds.toFixed(1)} s in all`].join('\n'));
  writeResults(name, done);
  process.exit(wrong.count > 0 || failures.length > 0 ? 1 : 0);
}
