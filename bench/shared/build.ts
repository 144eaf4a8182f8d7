/**
 * The benches' one build step: plain JavaScript for every process that must not pay for a
 * TypeScript loader, in bench/results/.build/ (git-ignored, inside the package, so bare imports
 * resolve from its node_modules). `transpile` erases the types of a bench script and of what it
 * imports by relative path (the echo server, the pass-through, the MRTR children); `buildLib`
 * compiles lib/ as `npm run build` does; `exportLib` takes lib/ as committed at a git ref instead.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');
/** Where everything built goes. */
export const BUILD_DIR = join(root, 'bench', 'results', '.build');

const mtime = (path: string): number => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

/** Relative module specifiers that survive type erasure (static imports, re-exports, dynamic imports of a literal). */
const RELATIVE_IMPORT = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * Writes `source` (relative to the package root) and every `.ts` file it imports by relative path
 * as JavaScript under bench/results/.build/, at the same relative path with `.js` for `.ts`; a file
 * whose JavaScript is newer than its source is kept. Returns the path of `source`'s JavaScript.
 */
export function transpile(source: string): string {
  const done = new Set<string>();
  const visit = (file: string): string => {
    const out = join(BUILD_DIR, relative(root, file)).replace(/\.ts$/, '.js');
    if (done.has(file)) return out;
    done.add(file);
    let js: string;
    if (mtime(out) >= mtime(file)) js = readFileSync(out, 'utf8');
    else {
      js = ts.transpileModule(readFileSync(file, 'utf8'), {
        fileName: file,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          verbatimModuleSyntax: true,
          rewriteRelativeImportExtensions: true,
        },
      }).outputText;
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, js);
    }
    for (const [, spec] of js.matchAll(RELATIVE_IMPORT)) {
      const imported = resolve(dirname(file), spec!.replace(/\.js$/, '.ts'));
      if (imported.endsWith('.ts') && existsSync(imported)) visit(imported);
    }
    return out;
  };
  return visit(join(root, source));
}

/** The echo server every wrap-bench contender fronts (and the probe and first-answer benches start), as JavaScript. */
export function buildEchoServer(): string {
  return transpile(join('bench', 'servers', 'echoServer.ts'));
}

/** The newest modification time of a `.ts` file under `dir`. */
function newestSource(dir: string): number {
  let newest = -1;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, mtime(path));
  }
  return newest;
}

/**
 * Compiles lib/ to JavaScript with the package's tsconfig.build.json settings into `<base>/dist/`;
 * returns the path of the CLI entry point (the modules sit beside it, `dist/` mirroring lib/).
 * `from` is a folder holding a lib/ and a package.json (an `exportLib` result); by default the
 * working tree's lib/, compiled again only when a source is newer than the last compile.
 */
export function buildLib(from?: string): string {
  const base = from ?? BUILD_DIR;
  const dist = join(base, 'dist');
  const cli = join(dist, 'cli', 'main.js');
  const stamp = join(dist, '.compiled');
  const sources = join(from ?? root, 'lib');
  if (
    !from &&
    existsSync(cli) &&
    mtime(stamp) > Math.max(newestSource(sources), mtime(join(root, 'tsconfig.build.json')), mtime(join(root, 'tsconfig.json')))
  )
    return cli;
  rmSync(dist, { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const config = join(base, 'tsconfig.bench.json');
  mkdirSync(base, { recursive: true });
  writeFileSync(
    config,
    `${JSON.stringify({ extends: join(root, 'tsconfig.build.json'), compilerOptions: { rootDir: from ? 'lib' : sources, outDir: 'dist', declaration: false, declarationMap: false, sourceMap: false }, include: [from ? 'lib' : sources], exclude: [] }, null, 2)}\n`,
  );
  const started = Date.now();
  try {
    execFileSync(process.execPath, [tsc, '-p', config], { cwd: root, stdio: 'inherit' });
  } catch {
    // Type errors still emit JavaScript; only a missing entry point is fatal.
  }
  if (!from) copyFileSync(join(root, 'package.json'), join(base, 'package.json'));
  if (!existsSync(cli)) throw new Error(`compiling lib/ produced no ${cli}`);
  // Stamped with the time the compile began: a source saved during it is newer, and is compiled next time.
  writeFileSync(stamp, '');
  utimesSync(stamp, new Date(started), new Date(started));
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
 * (through the tsx loader, like the working tree's). Its module paths are that commit's.
 */
export function exportLib(ref: string): { readonly commit: string; readonly dir: string; readonly cli: readonly string[] } {
  const commit = commitOf(ref);
  const dir = join(BUILD_DIR, `ref-${commit}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', commit, 'lib', 'package.json'], { cwd: root, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  return { commit, dir, cli: ['--import', 'tsx', join(dir, 'lib', 'cli', 'main.ts')] };
}

/** The commit the package is checked out at, if it is a git checkout. */
export function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}
