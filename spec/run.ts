/**
 * Runs every `*.spec.ts` under `spec/` in one process with uvu, or only the files (or folders of
 * them) given as arguments (`npm run test:unit -- spec/core/era.spec.ts spec/cli`), and ends with one
 * `N passed, N failed` line whatever happens: a file that fails to load, an uncaught exception or
 * an unhandled rejection counts as a failure of the file it happened in, and a run that stops
 * short (a test waiting on something that can never come) still prints the line. The exit code is
 * 1 when anything failed.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Runner = () => Promise<[string, number, number, number]>;
const g = globalThis as unknown as { UVU_DEFER: number; UVU_INDEX: number; UVU_QUEUE: Array<Array<string | Runner>> };
g.UVU_DEFER = 1;
g.UVU_QUEUE = [];

function specs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...specs(path));
    else if (name.endsWith('.spec.ts')) out.push(path);
  }
  return out;
}

let passed = 0;
let total = 0;
let skipped = 0;
/** Failures outside any test's own assertions: a file that did not load, a crash. */
let crashes = 0;
let current = '(starting)';
let summarised = false;
const started = performance.now();

function crashed(kind: string): (error: unknown) => void {
  return (error) => {
    crashes += 1;
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stdout.write(`\n✘ ${kind} in ${current}:\n${text}\n`);
  };
}
process.on('uncaughtException', crashed('uncaught exception'));
process.on('unhandledRejection', crashed('unhandled rejection'));

function summary(note = ''): void {
  if (summarised) return;
  summarised = true;
  const failed = total - passed - skipped + crashes;
  process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} (${files.length} files, ${Math.round(performance.now() - started)} ms)${note}\n`);
  process.exitCode = failed > 0 || total === 0 ? 1 : 0;
}
// A run whose event loop empties while a test still waits ends here, not silently.
process.on('exit', () => {
  if (summarised) return;
  crashes += 1;
  summary(`; the run stopped in ${current} before its end`);
  process.exitCode = 1;
});

const root = resolve(import.meta.dirname);
// Arguments are spec files or folders of them (every spec under the folder).
const files = process.argv.length > 2 ? process.argv.slice(2).flatMap((f) => (statSync(resolve(f)).isDirectory() ? specs(resolve(f)) : [resolve(f)])) : specs(root);
for (const [i, file] of files.entries()) {
  current = relative(process.cwd(), file);
  g.UVU_INDEX = i;
  g.UVU_QUEUE.push([current]);
  try {
    await import(pathToFileURL(file).href);
  } catch (e) {
    crashed('a failure to load')(e);
  }
}

for (const group of g.UVU_QUEUE) {
  const [name, ...runners] = group as [string, ...Runner[]];
  current = name;
  process.stdout.write(`\n${name}\n`);
  const fileStarted = performance.now();
  for (const run of runners) {
    const [errors, ran, skip, max] = await run();
    passed += ran;
    total += max;
    skipped += skip;
    if (errors.length > 0) process.stdout.write(`\n${errors}\n`);
  }
  process.stdout.write(`  (${Math.round(performance.now() - fileStarted)} ms)\n`);
}
summary();
