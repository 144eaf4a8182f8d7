/**
 * The codemod over files and directories: every JavaScript and TypeScript file under the given
 * paths (not `node_modules`, not hidden directories, not declaration files) through
 * `migrateSource`, plus `mcp-dual-era` added to the nearest package.json of each file whose new
 * code imports it. Writes only with `write: true`, and only files that changed.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import type { Rewrite } from './fileRewrite.ts';
import { migrateSource, type MarkerLine, type MigrateMode } from './migrateSource.ts';
import { addDependency, nearestPackageJson, packageType } from './packageJson.ts';
import { applyEdits } from './edits.ts';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../core/version.ts';

const SOURCE = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);
const DECLARATION = /\.d\.(ts|mts|cts)$/;

/** Options of {@link migrate}. */
export interface MigrateOptions {
  readonly paths: readonly string[];
  readonly mode?: MigrateMode;
  /** Write the changes (default: a dry run). */
  readonly write?: boolean;
  /** The version range added to package.json (default `^` and this package's version). */
  readonly dependencyRange?: string;
}

/** What happened to one file. */
export interface FileReport {
  /** Absolute path. */
  readonly path: string;
  readonly before: string;
  readonly after: string;
  readonly changed: boolean;
  readonly rewrites: readonly Rewrite[];
  readonly markers: readonly MarkerLine[];
  readonly markersAdded: number;
  /** Why it was left as it is (unreadable, does not parse, the rewrite would not parse, could not be written). */
  readonly error?: string;
  /** A note that is not a failure (no package.json to add the dependency to). */
  readonly note?: string;
}

/** What {@link migrate} did (or, in a dry run, would do) to each file, with the markers left. */
export interface MigrateReport {
  readonly mode: MigrateMode;
  readonly write: boolean;
  /** Every file looked at, in order (source files, then package.json files). */
  readonly files: readonly FileReport[];
}

function ownRange(): string {
  return `^${PACKAGE_VERSION}`;
}

/** The source files under a path; throws with a clear message when it cannot be read. */
function sourcesUnder(path: string): string[] {
  let stats;
  try {
    stats = statSync(path);
  } catch (e) {
    throw new Error(`cannot read: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`);
  }
  if (stats.isFile()) return [path];
  if (!stats.isDirectory()) throw new Error('cannot read: not a file or directory');
  const out: string[] = [];
  for (const name of readdirSync(path).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const child = join(path, name);
    const s = statSync(child);
    if (s.isDirectory()) out.push(...sourcesUnder(child));
    else if (s.isFile() && SOURCE.has(extname(name)) && !DECLARATION.test(name)) out.push(child);
  }
  return out;
}

function failed(path: string, error: string): FileReport {
  return { path, before: '', after: '', changed: false, rewrites: [], markers: [], markersAdded: 0, error };
}

/** Runs the codemod. Never throws for a file's problem: it is reported on that file. */
export function migrate(options: MigrateOptions): MigrateReport {
  const mode = options.mode ?? 'wrap';
  const write = options.write === true;
  const files: FileReport[] = [];
  const seen = new Set<string>();
  /** package.json path → its text, for those that get the dependency. */
  const packages = new Map<string, string>();
  const packageTypes = new Map<string, 'module' | 'commonjs' | undefined>();
  for (const given of options.paths) {
    let sources: string[];
    try {
      sources = sourcesUnder(resolve(given));
    } catch (e) {
      files.push(failed(resolve(given), (e as Error).message));
      continue;
    }
    for (const path of sources) {
      if (seen.has(path)) continue;
      seen.add(path);
      if (!SOURCE.has(extname(path)) || DECLARATION.test(path)) {
        files.push(failed(path, 'not a JavaScript or TypeScript source file'));
        continue;
      }
      let before: string;
      try {
        before = readFileSync(path, 'utf8');
      } catch (e) {
        files.push(failed(path, `cannot read: ${(e as Error).message}`));
        continue;
      }
      const pkg = nearestPackageJson(path);
      if (pkg && !packageTypes.has(pkg)) packageTypes.set(pkg, packageType(readFileSync(pkg, 'utf8')));
      const outcome = migrateSource(before, { fileName: path, mode, packageType: pkg ? packageTypes.get(pkg) : undefined });
      const changed = outcome.text !== before;
      let note: string | undefined;
      if (changed && outcome.imports.some((m) => m === PACKAGE_NAME || m.startsWith(`${PACKAGE_NAME}/`))) {
        if (!pkg) note = `no package.json above this file: add ${PACKAGE_NAME} to your dependencies`;
        else if (!packages.has(pkg)) packages.set(pkg, readFileSync(pkg, 'utf8'));
      }
      files.push({
        path,
        before,
        after: outcome.text,
        changed,
        rewrites: outcome.rewrites,
        markers: outcome.markers,
        markersAdded: outcome.markersAdded,
        ...(outcome.error ? { error: outcome.error } : {}),
        ...(note ? { note } : {}),
      });
    }
  }
  const range = options.dependencyRange ?? ownRange();
  for (const [path, before] of packages) {
    const edit = addDependency(before, PACKAGE_NAME, range);
    const after = edit ? applyEdits(before, [edit]) : before;
    const line = edit ? before.slice(0, edit.start).split('\n').length : 0;
    files.push({
      path,
      before,
      after,
      changed: after !== before,
      rewrites: edit ? [{ line, what: `dependency ${PACKAGE_NAME} ${range} added` }] : [],
      markers: [],
      markersAdded: 0,
    });
  }
  if (write) {
    for (const [i, file] of files.entries()) {
      if (!file.changed || file.error) continue;
      try {
        writeFileSync(file.path, file.after);
      } catch (e) {
        files[i] = { ...file, changed: false, error: `cannot write: ${(e as Error).message}` };
      }
    }
  }
  return { mode, write, files };
}
