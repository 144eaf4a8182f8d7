/**
 * `mcp-dual-era migrate` as a user runs it: help and usage errors (exit 2), a dry run that prints a
 * unified diff and a summary and writes nothing, `--write` that applies (package.json included)
 * and a second run that finds nothing to do, native mode, and the failures (a file that does not
 * parse, a path that cannot be read) reported with exit 1, the file left as it was.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../helpers/everything.ts';
import { createProject, migrateCli, type Project } from '../helpers/migratedProject.ts';

const fixture = (name: string) => readFileSync(resolve(ROOT, 'fixtures/codemod', name), 'utf8');

const usage = suite('mcp-dual-era migrate: usage');

usage('should print its usage with --help and exit 0', async () => {
  const { code, stdout } = await migrateCli(['--help'], ROOT);
  assert.is(code, 0);
  assert.match(stdout, 'mcp-dual-era migrate [options] <paths…>');
  assert.match(stdout, '--mode native');
});

usage('should exit 2 with a clear message on a usage error', async () => {
  const none = await migrateCli([], ROOT);
  assert.is(none.code, 2);
  assert.match(none.stderr, 'mcp-dual-era migrate: name the files or directories to migrate');
  const mode = await migrateCli(['--mode', 'legacy', 'x.ts'], ROOT);
  assert.is(mode.code, 2);
  assert.match(mode.stderr, '--mode is wrap or native, not legacy');
});

usage('should say its exit codes in --help', async () => {
  const { stdout } = await migrateCli(['--help'], ROOT);
  assert.match(stdout, 'Exit codes: 0 done, 1 ');
});

usage('should exit 1, not 2, and say how to run it, when the TypeScript compiler is not installed', () => {
  const file = resolve(ROOT, 'fixtures/codemod/wrap-stdio-server.input.ts');
  const r = spawnSync(
    process.execPath,
    [
      '--require',
      resolve(ROOT, 'spec/helpers/withoutTypescript.cjs'),
      '--import',
      'tsx',
      resolve(ROOT, 'lib/cli/main.ts'),
      'migrate',
      file,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  assert.is(r.status, 1, r.stderr);
  assert.match(
    r.stderr,
    'mcp-dual-era migrate: the migration reads code with the TypeScript compiler, which is not installed here: add it to the project (npm install --save-dev typescript)',
  );
});

usage.run();

const cli = suite('mcp-dual-era migrate: a project');
let project: Project;
const server = () => readFileSync(join(project.dir, 'src/server.ts'), 'utf8');

cli.before(() => {
  project = createProject({ name: 'weather', version: '1.0.0', type: 'module', dependencies: { '@modelcontextprotocol/sdk': '^1.32.2' } });
  project.write('src/server.ts', fixture('wrap-stdio-server.input.ts'));
  project.write('src/tools/native.ts', fixture('native-elicit.input.ts'));
});
cli.after(() => project.close());

cli('should print a unified diff and a summary on a dry run, and write nothing', async () => {
  const { code, stdout } = await migrateCli(['src'], project.dir);
  assert.is(code, 0);
  assert.match(stdout, '--- a/src/server.ts\n+++ b/src/server.ts\n');
  assert.match(stdout, '-  await server.connect(new StdioServerTransport());\n+  serveStdio(wrapLegacyServer({ upstream: server }));\n');
  assert.match(stdout, '--- a/package.json\n+++ b/package.json\n');
  assert.match(
    stdout,
    /file\s+rewrites\s+markers\s+status\nsrc\/server\.ts\s+1\s+0\s+would change\npackage\.json\s+1\s+0\s+would change\n/,
  );
  assert.match(stdout, 'Nothing written: run again with --write to apply.');
  assert.is(server(), fixture('wrap-stdio-server.input.ts'));
  assert.not.match(readFileSync(join(project.dir, 'package.json'), 'utf8'), 'mcp-dual-era');
});

cli('should apply the changes with --write, then find nothing to do', async () => {
  const first = await migrateCli(['--write', 'src'], project.dir);
  assert.is(first.code, 0);
  assert.not.match(first.stdout, '--- a/');
  assert.match(first.stdout, '2 files written, 2 rewrites, 0 markers.');
  assert.is(server(), fixture('wrap-stdio-server.output.ts'));
  const pkg = JSON.parse(readFileSync(join(project.dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  assert.equal(Object.keys(pkg.dependencies), ['@modelcontextprotocol/sdk', 'mcp-dual-era']);
  // Run from a checkout, the dependency is the checkout itself: installable before the package is published.
  assert.is(pkg.dependencies['mcp-dual-era'], `file:${ROOT}`);
  const again = await migrateCli(['--write', 'src'], project.dir);
  assert.is(again.code, 0);
  assert.match(again.stdout, '2 files looked at; nothing to change.');
});

cli('should rewrite pushes in native mode', async () => {
  const { code, stdout } = await migrateCli(['--mode', 'native', '--json', 'src/tools'], project.dir);
  assert.is(code, 0);
  const report = JSON.parse(stdout) as {
    mode: string;
    files: Array<{ file: string; changed: boolean; rewrites: Array<{ line: number; what: string }> }>;
  };
  assert.is(report.mode, 'native');
  assert.equal(
    report.files.map((f) => [f.file, f.changed]),
    [['src/tools/native.ts', true]],
  );
  assert.match(report.files[0]!.rewrites[0]!.what, 'elicitation push → inputRequired');
});

cli('should exit 1 for a file that does not parse and a path that cannot be read, leaving them as they were', async () => {
  const broken =
    "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';\nawait server.connect(new StdioServerTransport(;\n";
  project.write('src/broken.ts', broken);
  const { code, stdout, stderr } = await migrateCli(['--write', 'src/broken.ts', 'src/missing.ts'], project.dir);
  assert.is(code, 1);
  assert.match(stderr, 'mcp-dual-era migrate: src/broken.ts: does not parse (2:');
  assert.match(stderr, 'mcp-dual-era migrate: src/missing.ts: cannot read: no such file or directory');
  assert.match(stdout, '2 files left as they were');
  assert.is(readFileSync(join(project.dir, 'src/broken.ts'), 'utf8'), broken);
  assert.not.ok(existsSync(join(project.dir, 'src/missing.ts')));
});

cli.run();
