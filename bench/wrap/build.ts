/**
 * Plain JavaScript for the processes the wrap bench starts, so none of them needs a TypeScript
 * loader at run time when that matters. Everything goes to bench/results/.build/ (gitignored),
 * inside the package, so bare imports resolve from the package's node_modules.
 *
 * - `transpile`: one self-contained file (TypeScript's `transpileModule`: types erased, nothing
 *   bundled): the echo server, and the pass-through unless `--tsx`.
 * - `buildLib` (unless `--tsx`): the whole of lib/ compiled with tsconfig.build.json's settings, as
 *   `npm run build` does, with a package.json beside it (the CLI reads its version from there).
 * - `exportLib` (`--ref`): lib/ as committed at a git ref, to run or compile instead of the working tree.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');
const outDir = join(root, 'bench', 'results', '.build');

/** Writes `source` (relative to the package root) as JavaScript and returns the path of the result. */
export function transpile(source: string): string {
  const file = join(root, source);
  mkdirSync(outDir, { recursive: true });
  const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    fileName: file,
  });
  const out = join(outDir, basename(file).replace(/\.ts$/, '.mjs'));
  writeFileSync(out, outputText);
  return out;
}

/** The echo server every contender fronts, as JavaScript. */
export function buildEchoServer(): string {
  return transpile(join('bench', 'servers', 'echoServer.ts'));
}

/**
 * Compiles lib/ to JavaScript with the package's tsconfig.build.json settings; returns the path of
 * the CLI entry point. `from` is a folder holding a lib/ and a package.json (an `exportLib` result);
 * by default the working tree's lib/.
 */
export function buildLib(from?: string): string {
  const base = from ?? outDir;
  const dist = join(base, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const config = join(base, 'tsconfig.bench.json');
  mkdirSync(base, { recursive: true });
  writeFileSync(
    config,
    `${JSON.stringify({ extends: join(root, 'tsconfig.build.json'), compilerOptions: { rootDir: from ? 'lib' : join(root, 'lib'), outDir: 'dist', declaration: false, declarationMap: false, sourceMap: false }, include: [from ? 'lib' : join(root, 'lib')], exclude: [] }, null, 2)}\n`,
  );
  try {
    execFileSync(process.execPath, [tsc, '-p', config], { cwd: root, stdio: 'inherit' });
  } catch {
    // Type errors still emit JavaScript; only a missing entry point is fatal.
  }
  if (!from) copyFileSync(join(root, 'package.json'), join(base, 'package.json'));
  const cli = join(dist, 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error(`compiling lib/ produced no ${cli}`);
  return cli;
}

/** The commit `ref` names, abbreviated. */
export function commitOf(ref: string): string {
  return execFileSync('git', ['rev-parse', '--short', ref], { cwd: root, encoding: 'utf8' }).trim();
}

/** Whether lib/ differs from HEAD in the working tree (uncommitted or untracked changes). */
export function libIsDirty(): boolean {
  return execFileSync('git', ['status', '--porcelain', '--', 'lib'], { cwd: root, encoding: 'utf8' }).trim().length > 0;
}

/**
 * lib/ (and package.json) as committed at `ref`, exported into bench/results/.build/ref-HASH/, so a
 * run can measure a fixed commit while the working tree changes; returns the CLI's node arguments
 * (through the tsx loader, like the working tree's).
 */
export function exportLib(ref: string): { readonly commit: string; readonly dir: string; readonly cli: readonly string[] } {
  const commit = commitOf(ref);
  const dir = join(outDir, `ref-${commit}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', commit, 'lib', 'package.json'], { cwd: root, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  return { commit, dir, cli: ['--import', 'tsx', join(dir, 'lib', 'cli', 'main.ts')] };
}
