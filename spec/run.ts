/**
 * Runs every `*.spec.ts` under `spec/` with uvu, or only the files (or folders of them) given as
 * arguments (`npm run test:unit -- spec/core/era.spec.ts spec/cli`), and ends with one
 * `N passed, N failed` line whatever happens: a file that fails to load, an uncaught exception or
 * an unhandled rejection counts as a failure of the file it happened in, and a run that stops
 * short (a test waiting on something that can never come) still prints the line. The exit code is
 * 1 when anything failed.
 *
 * Files run in `--jobs N` worker processes at once (default: the machine's cores, at most 4), each
 * file in one worker, its output printed whole when it ends. The files of `ALONE` (load runs and
 * specs that measure how a round behaves under load) run afterwards, one at a time, with nothing
 * else running. `--jobs 1` runs every file in this process, one after the other. A file that has
 * not ended after `--file-timeout` seconds (default 900) fails, and its worker is stopped.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtCli } from './helpers/built.ts';

/**
 * Files that run with no other file running: they put the machine under load on purpose, or what
 * they assert (every push of a round in one answer, nothing lost) depends on the timing a load
 * leaves them (the AI SDK waits 1 s for the first answer over stdio before it falls back to the
 * legacy handshake; the conformance suite reads a listen stream for 1.5 s and fails a scenario that
 * got nothing in that time, which a loaded machine's boots overran in 2 of 3 runs), or they rebuild
 * or run what others rebuild (`npm pack` rebuilds `dist/`, which the AI SDK spec runs). Paths from
 * the project's root.
 */
const ALONE = new Set([
  'spec/fleet/load.spec.ts',
  'spec/interop/conformance.spec.ts',
  'spec/fleet/conformance.spec.ts',
  'spec/wrap/mrtr/roundGathering.spec.ts',
  'spec/load/mixed.spec.ts',
  'spec/package.spec.ts',
  'spec/interop/aiSdk.spec.ts',
]);

/**
 * The slowest of the other files, started first so that the workers end together. A file missing
 * here only runs later; one listed that no longer exists is skipped.
 */
const SLOW_FIRST = [
  'spec/interop/conformanceClient.spec.ts',
  'spec/fleet/conformance.spec.ts',
  'spec/interop/lockouts.spec.ts',
  'spec/faults/faults.spec.ts',
  'spec/cli/serve.spec.ts',
  'spec/fleet/serveFleet.spec.ts',
  'spec/interop/conformance.spec.ts',
  'spec/cli/connect.spec.ts',
  'spec/interop/conformanceLegacyClient.spec.ts',
  'spec/interop/matrix.spec.ts',
  'spec/cli/probe.spec.ts',
];

type Runner = () => Promise<[string, number, number, number]>;
const g = globalThis as unknown as { UVU_DEFER: number; UVU_INDEX: number; UVU_QUEUE: Array<Array<string | Runner> | null> };
g.UVU_DEFER = 1;
g.UVU_QUEUE = [];

/** What one file came to. */
interface FileResult {
  file: string;
  passed: number;
  total: number;
  skipped: number;
  /** Failures outside any test's own assertions: a failure to load, a crash, a stop. */
  crashes: number;
  ms: number;
  output: string;
}

/** Messages between the runner and its workers. */
type ToWorker = { run: string } | { exit: true };
type FromWorker = { ready: true } | { done: FileResult };

function specs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...specs(path));
    else if (name.endsWith('.spec.ts')) out.push(path);
  }
  return out;
}

function option(name: string): string | undefined {
  const args = process.argv.slice(2);
  for (const [i, a] of args.entries()) {
    if (a === `--${name}`) return args[i + 1];
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}

function positional(): string[] {
  const args = process.argv.slice(2);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--worker') continue;
    if (a === '--jobs' || a === '--file-timeout') i++;
    else if (!a.startsWith('--')) out.push(a);
  }
  return out;
}

// --- running one file, in this process ------------------------------------------------------

/** Where a crash is counted and written: the file whose tests run now, or the next one to. */
let current: FileResult = blank('(starting)');
let write: (text: string) => void = (text) => process.stdout.write(text);

function blank(file: string): FileResult {
  return { file, passed: 0, total: 0, skipped: 0, crashes: 0, ms: 0, output: '' };
}

function crashed(kind: string): (error: unknown) => void {
  return (error) => {
    current.crashes += 1;
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    write(`\n✘ ${kind} in ${current.file}:\n${text}\n`);
  };
}

/**
 * Imports one spec file and runs its suites. Crashes counted since the last file ended (a timer
 * it left behind) count against this one, as they would running the files in one process.
 */
async function runFile(path: string, index: number): Promise<FileResult> {
  const file = relative(process.cwd(), path);
  const result: FileResult = { ...blank(file), crashes: current.crashes };
  current = result;
  const started = performance.now();
  write(`\n${file}\n`);
  g.UVU_INDEX = index;
  g.UVU_QUEUE[index] = [file];
  try {
    await import(pathToFileURL(path).href);
  } catch (e) {
    crashed('a failure to load')(e);
  }
  const [, ...runners] = g.UVU_QUEUE[index] as [string, ...Runner[]];
  g.UVU_QUEUE[index] = null;
  for (const run of runners) {
    const [errors, ran, skip, max] = await run();
    result.passed += ran;
    result.total += max;
    result.skipped += skip;
    if (errors.length > 0) write(`\n${errors}\n`);
  }
  result.ms = Math.round(performance.now() - started);
  write(`  (${result.ms} ms)\n`);
  current = blank('(between files)');
  return result;
}

// --- a worker: runs the files it is sent, one at a time -------------------------------------

async function serveAsWorker(): Promise<void> {
  const send = (m: FromWorker): Promise<void> => new Promise((ok) => process.send?.(m, undefined, {}, () => ok()));
  let output: string[] = [];
  write = (text) => output.push(text);
  const capture = (chunk: unknown, ...rest: unknown[]): boolean => {
    output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString());
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    if (done) process.nextTick(done);
    return true;
  };
  process.stdout.write = capture as typeof process.stdout.write;
  process.stderr.write = capture as typeof process.stderr.write;
  process.on('uncaughtException', crashed('uncaught exception'));
  process.on('unhandledRejection', crashed('unhandled rejection'));
  // A file whose tests wait on what never comes empties the loop: what it printed still shows.
  process.on('exit', () => {
    if (output.length > 0) writeSync(1, `${output.join('')}\n✘ the run stopped in ${current.file} before its end\n`);
  });
  let index = 0;
  process.on('message', (m: ToWorker) => {
    if ('exit' in m) process.exit(0);
    // While a file runs, only its own work keeps this process alive.
    process.channel?.unref();
    void runFile(resolve(m.run), index++).then(async (result) => {
      result.output = output.join('');
      output = [];
      process.channel?.ref();
      await send({ done: result });
    });
  });
  await send({ ready: true });
}

// --- the run ---------------------------------------------------------------------------------

function summaryLine(
  results: FileResult[],
  fileCount: number,
  started: number,
  note = '',
): { line: string; failed: number; total: number } {
  let passed = 0;
  let total = 0;
  let skipped = 0;
  let crashes = 0;
  for (const r of results) {
    passed += r.passed;
    total += r.total;
    skipped += r.skipped;
    crashes += r.crashes;
  }
  // uvu counts skipped tests apart from the total it reports.
  const failed = total - passed + crashes;
  const line = `\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} (${fileCount} files, ${Math.round(performance.now() - started)} ms)${note}\n`;
  return { line, failed, total };
}

function failedFiles(results: FileResult[]): string {
  const failing = results.filter((r) => r.total - r.passed + r.crashes > 0).map((r) => r.file);
  return failing.length > 0 ? `\nfailed in: ${failing.join(', ')}\n` : '';
}

/** Every file in this process, one after the other. */
async function runHere(files: string[]): Promise<void> {
  const started = performance.now();
  const results: FileResult[] = [];
  let summarised = false;
  process.on('uncaughtException', crashed('uncaught exception'));
  process.on('unhandledRejection', crashed('unhandled rejection'));
  // A run whose event loop empties while a test still waits ends here, not silently.
  process.on('exit', () => {
    if (summarised) return;
    const stopped = { ...current, crashes: current.crashes + 1 };
    const { line } = summaryLine([...results, stopped], files.length, started, `; the run stopped in ${current.file} before its end`);
    process.stdout.write(line);
    process.exitCode = 1;
  });
  for (const [i, file] of files.entries()) results.push(await runFile(file, i));
  summarised = true;
  results.push(current); // crashes after the last file ended
  const { line, failed, total } = summaryLine(results, files.length, started);
  process.stdout.write(failedFiles(results) + line);
  process.exitCode = failed > 0 || total === 0 ? 1 : 0;
}

/** Workers running now. */
const workers = new Set<ChildProcess>();

/** Sends `signal` to a worker's process group: the worker and whatever its specs started. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** The files across `jobs` workers; the `ALONE` ones afterwards, one at a time. */
async function runInWorkers(files: string[], jobs: number, fileTimeoutMs: number): Promise<void> {
  const started = performance.now();
  // Workers are groups of their own (see below): a runner stopped from the terminal stops them too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      for (const child of workers) killGroup(child, 'SIGKILL');
      process.exit(130);
    });
  // The specs that run the built command find it built: built once here (when missing or older than
  // a source), never by two workers at once.
  builtCli();
  const results: FileResult[] = [];
  const rel = (f: string) => relative(process.cwd(), f);
  const first = new Map(SLOW_FIRST.map((f, i) => [f, i]));
  const shared = files
    .filter((f) => !ALONE.has(rel(f)))
    .sort((a, b) => (first.get(rel(a)) ?? first.size) - (first.get(rel(b)) ?? first.size));
  const alone = files.filter((f) => ALONE.has(rel(f)));
  const self = import.meta.filename;

  /** Runs `queue` on `n` workers; resolves when every file has a result. */
  const drain = (queue: string[], n: number): Promise<void> =>
    new Promise((done) => {
      let running = 0;
      const start = (): void => {
        if (queue.length === 0) {
          if (running === 0) done();
          return;
        }
        running += 1;
        // Each worker leads a process group of its own: what its specs started and left behind (a
        // replica whose spec was stopped at its timeout, say) ends with it, not later beside
        // another spec.
        const child: ChildProcess = fork(self, ['--worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
        workers.add(child);
        let file: string | undefined;
        let timer: NodeJS.Timeout | undefined;
        let ended = false;
        const next = (): void => {
          file = queue.shift();
          if (file === undefined) {
            child.send({ exit: true } satisfies ToWorker);
            return;
          }
          const name = rel(file);
          timer = setTimeout(() => {
            process.stdout.write(`\n✘ ${name} did not end in ${fileTimeoutMs / 1000} s: its worker is stopped\n`);
            killGroup(child, 'SIGTERM');
            setTimeout(() => killGroup(child, 'SIGKILL'), 5000).unref();
          }, fileTimeoutMs);
          child.send({ run: file } satisfies ToWorker);
        };
        child.on('message', (m: FromWorker) => {
          if ('ready' in m) return next();
          clearTimeout(timer);
          file = undefined;
          results.push(m.done);
          process.stdout.write(m.done.output);
          next();
        });
        child.on('exit', () => {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          workers.delete(child);
          killGroup(child, 'SIGKILL');
          running -= 1;
          if (file !== undefined) {
            // The worker ended with a file in hand: that file failed; the others go on elsewhere.
            results.push({ file: rel(file), passed: 0, total: 0, skipped: 0, crashes: 1, ms: 0, output: '' });
            file = undefined;
          }
          start();
        });
      };
      for (let i = 0; i < Math.min(n, queue.length); i++) start();
      if (queue.length === 0) done();
    });

  await drain(shared, jobs);
  await drain(alone, 1);
  const { line, failed, total } = summaryLine(results, files.length, started);
  process.stdout.write(failedFiles(results) + line);
  process.exitCode = failed > 0 || total === 0 ? 1 : 0;
}

if (process.argv.includes('--worker')) {
  await serveAsWorker();
} else {
  const root = resolve(import.meta.dirname);
  const args = positional();
  // Arguments are spec files or folders of them (every spec under the folder).
  const files =
    args.length > 0 ? args.flatMap((f) => (statSync(resolve(f)).isDirectory() ? specs(resolve(f)) : [resolve(f)])) : specs(root);
  const jobs = Number(option('jobs') ?? process.env['MCP_DUAL_ERA_SPEC_JOBS'] ?? Math.min(availableParallelism(), 4));
  const fileTimeoutMs = Number(option('file-timeout') ?? 900) * 1000;
  if (!Number.isInteger(jobs) || jobs < 1) {
    process.stderr.write('spec/run.ts: --jobs takes a whole number of at least 1\n');
    process.exit(2);
  }
  if (jobs === 1) await runHere(files);
  else await runInWorkers(files, jobs, fileTimeoutMs);
}
