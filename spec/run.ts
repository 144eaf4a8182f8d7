/**
 * Runs every `*.spec.ts` under `spec/` in one process with uvu, or only the files given as
 * arguments (`npm run test:unit -- spec/core/era.spec.ts`), and ends with one
 * `N passed, N failed` line. The exit code is 1 when anything failed.
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

const root = resolve(import.meta.dirname);
const files = process.argv.length > 2 ? process.argv.slice(2).map((f) => resolve(f)) : specs(root);
for (const [i, file] of files.entries()) {
  g.UVU_INDEX = i;
  g.UVU_QUEUE.push([relative(process.cwd(), file)]);
  await import(pathToFileURL(file).href);
}

let passed = 0;
let total = 0;
let skipped = 0;
const started = performance.now();
for (const group of g.UVU_QUEUE) {
  const [name, ...runners] = group as [string, ...Runner[]];
  process.stdout.write(`\n${name}\n`);
  for (const run of runners) {
    const [errors, ran, skip, max] = await run();
    passed += ran;
    total += max;
    skipped += skip;
    if (errors.length > 0) process.stdout.write(`\n${errors}\n`);
  }
}
const failed = total - passed - skipped;
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} (${files.length} files, ${Math.round(performance.now() - started)} ms)\n`);
process.exitCode = failed > 0 || total === 0 ? 1 : 0;
