/**
 * `mcp-dual-era migrate`: the migration codemod on the command line. A dry run prints a unified
 * diff and a summary (files, rewrites, markers) on stdout; `--write` applies. Exit 0 when done,
 * 1 when a path could not be read or a file could not be migrated or written, 2 on a usage error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../core/version.ts';
import { parseArgs } from 'node:util';
import { MIGRATE_USAGE } from './migrateUsage.ts';
import { usageError } from './options.ts';

/** Runs the migrate command; resolves with the exit code. */
export async function migrateCommand(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { write: { type: 'boolean' }, mode: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    return usageError('migrate')(e instanceof Error ? e.message : String(e));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(MIGRATE_USAGE);
    return 0;
  }
  const mode = values.mode ?? 'wrap';
  if (mode !== 'wrap' && mode !== 'native') {
    return usageError('migrate')(`--mode is wrap or native, not ${mode}`);
  }
  if (positionals.length === 0) {
    return usageError('migrate')('name the files or directories to migrate');
  }
  // The codemod (and the TypeScript compiler) is loaded once the arguments are known to be right.
  let codemod: [typeof import('../codemod/migrate.ts'), typeof import('../codemod/report.ts')];
  try {
    codemod = await Promise.all([import('../codemod/migrate.ts'), import('../codemod/report.ts')]);
  } catch (e) {
    process.stderr.write(`mcp-dual-era migrate: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  const [{ migrate }, { renderReport, reportJson }] = codemod;
  const report = migrate({ paths: positionals, mode, write: values.write === true, dependencyRange: installableRange() });
  const base = process.cwd();
  process.stdout.write(values.json ? `${JSON.stringify(reportJson(report, base), null, 2)}\n` : renderReport(report, base));
  const failures = report.files.filter((f) => f.error);
  for (const f of failures) process.stderr.write(`mcp-dual-era migrate: ${relative(base, f.path) || f.path}: ${f.error}\n`);
  return failures.length > 0 ? 1 : 0;
}

/**
 * What `--write` puts in `dependencies` for this package: its version range when this copy was
 * installed (from the registry, a tarball or git: it sits in a `node_modules`), and the checkout
 * itself (`file:<its directory>`) when it runs from one, since that range is not on the registry
 * to install from until the package is published.
 */
function installableRange(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME) break;
    const up = dirname(dir);
    if (up === dir) return `^${PACKAGE_VERSION}`;
    dir = up;
  }
  return dir.split(sep).includes('node_modules') ? `^${PACKAGE_VERSION}` : `file:${dir}`;
}
