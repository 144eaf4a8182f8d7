/**
 * The package as a user gets it: `npm pack` (which builds), the tarball installed into an empty
 * project, then checked from that project alone — every entry point and every name the README
 * documents from it loads in plain Node ESM, the command runs (`--version`, `--help`, `migrate`
 * dry and `--write`), every source map's sources and every file the README links to are in the
 * package, with its LICENSE, and a TypeScript consumer type-checks against the installed types.
 * Not a check of what the code does: the other specs run it from the sources.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as TS from 'typescript';
import { ts } from '../lib/codemod/typescript.ts';
import { ROOT } from './helpers/everything.ts';
import { codeBlocks, docText, documentedNames, relativeLinks } from './helpers/readme.ts';

const OWN = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  exports: Record<string, unknown>;
};
const ENTRIES = Object.keys(OWN.exports)
  .filter((key) => key !== './package.json')
  .map((key) => (key === '.' ? OWN.name : `${OWN.name}/${key.slice(2)}`));
const TYPES_NODE = (JSON.parse(readFileSync(join(ROOT, 'node_modules/@types/node/package.json'), 'utf8')) as { version: string }).version;
const SDK_V1 = (JSON.parse(readFileSync(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')) as { version: string })
  .version;
const TYPESCRIPT = (JSON.parse(readFileSync(join(ROOT, 'node_modules/typescript/package.json'), 'utf8')) as { version: string }).version;

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its end (killed past `timeoutMs`); never rejects. */
function run(file: string, args: readonly string[], cwd: string, timeoutMs = 60_000): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, stdout, stderr: error && code === 1 && !stderr ? String(error.message) : stderr });
      },
    );
  });
}

const npm = (args: readonly string[], cwd: string, timeoutMs?: number) =>
  run(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, cwd, timeoutMs);

function describeRun(what: string, ran: Ran): string {
  return `${what} exited ${ran.code}\n--- stdout\n${ran.stdout.slice(-4000)}\n--- stderr\n${ran.stderr.slice(-4000)}`;
}

/** Every file under `dir`, as paths relative to it. */
function walk(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path, base) : [relative(base, path)];
  });
}

let temp = '';
let project = '';
/** The installed package, inside the project's node_modules. */
let installed = '';
let tarball = '';

/** Packs and installs once, for every test (a failure is reported by each test, with its output). */
async function prepare(): Promise<void> {
  temp = mkdtempSync(join(tmpdir(), 'mcp-dual-era-package-'));
  const packs = join(temp, 'pack');
  mkdirSync(packs);
  const packed = await npm(['pack', '--pack-destination', packs, '--no-audit', '--no-fund'], ROOT, 120_000);
  assert.is(packed.code, 0, describeRun('npm pack', packed));
  const tgz = readdirSync(packs).filter((name) => name.endsWith('.tgz'));
  assert.is(tgz.length, 1, `one tarball: ${tgz.join(', ')}`);
  tarball = join(packs, tgz[0]!);
  project = join(temp, 'consumer');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  // A TypeScript project, as the codemod's users have: the compiler is theirs (an optional peer of ours).
  const install = await npm(
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      tarball,
      `@types/node@${TYPES_NODE}`,
      `@modelcontextprotocol/sdk@${SDK_V1}`,
      `typescript@${TYPESCRIPT}`,
    ],
    project,
    120_000,
  );
  assert.is(install.code, 0, describeRun('npm install', install));
  installed = join(project, 'node_modules', OWN.name);
}

let prepared: Promise<void> | undefined;
const ready = () => (prepared ??= prepare());

const p = suite('the packed package, installed');

p.after(() => {
  if (temp) rmSync(temp, { recursive: true, force: true });
});

p('should load every entry point, with every name the README documents from it, in plain Node ESM', async () => {
  await ready();
  const { values } = documentedNames();
  for (const specifier of values.keys())
    assert.ok(ENTRIES.includes(specifier), `the README documents ${specifier}, an entry point of package.json`);
  const probe = `const out = {};
for (const specifier of ${JSON.stringify(ENTRIES)}) out[specifier] = Object.keys(await import(specifier));
process.stdout.write(JSON.stringify(out));
`;
  writeFileSync(join(project, 'entries.mjs'), probe);
  const ran = await run(process.execPath, ['entries.mjs'], project);
  assert.is(ran.code, 0, describeRun('node entries.mjs', ran));
  const exported = JSON.parse(ran.stdout) as Record<string, string[]>;
  assert.equal(Object.keys(exported).sort(), [...ENTRIES].sort());
  for (const [specifier, names] of values) {
    const missing = [...names].filter((name) => !exported[specifier]!.includes(name));
    assert.equal(missing, [], `${specifier} lacks ${missing.join(', ')}`);
  }
  // The translator's guide imports from `mcp-dual-era/core`: its names are there in the installed package.
  const design = docText('docs/design.md');
  const translator = design.slice(design.indexOf('\n## The translator'));
  const core = codeBlocks(translator).find((b) => b.lang === 'ts')!;
  const coreNames = [...core.code.matchAll(/import\s*\{([^}]*)\}\s*from\s*'mcp-dual-era\/core'/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean),
  );
  assert.ok(coreNames.length > 0, 'the translator section imports names');
  assert.equal(
    coreNames.filter((name) => !exported[`${OWN.name}/core`]!.includes(name)),
    [],
  );
});

p('should run the command: --version and --help exit 0', async () => {
  await ready();
  const version = await npm(['exec', '--offline', '--', OWN.name, '--version'], project);
  assert.is(version.code, 0, describeRun('npx mcp-dual-era --version', version));
  assert.is(version.stdout.trim(), OWN.version);
  const help = await npm(['exec', '--offline', '--', OWN.name, '--help'], project);
  assert.is(help.code, 0, describeRun('npx mcp-dual-era --help', help));
  for (const command of ['serve', 'connect', 'probe', 'explain', 'migrate']) assert.match(help.stdout, command);
});

p('should migrate an SDK v1 server: a dry run prints a diff and changes nothing, --write changes the file', async () => {
  await ready();
  const server = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'demo', version: '1.0.0' });
server.tool('hello', async () => ({ content: [{ type: 'text', text: 'hello' }] }));
await server.connect(new StdioServerTransport());
`;
  mkdirSync(join(project, 'src'), { recursive: true });
  const file = join(project, 'src/server.ts');
  writeFileSync(file, server);
  const dry = await npm(['exec', '--offline', '--', OWN.name, 'migrate', 'src/server.ts'], project);
  assert.is(dry.code, 0, describeRun('mcp-dual-era migrate src/server.ts', dry));
  assert.match(dry.stdout, /^-import \{ StdioServerTransport \}/m);
  assert.match(dry.stdout, /^\+.*serveStdio\(wrapLegacyServer\(\{ upstream: server \}\)\)/m);
  assert.is(readFileSync(file, 'utf8'), server, 'a dry run writes nothing');
  const write = await npm(['exec', '--offline', '--', OWN.name, 'migrate', '--write', 'src/server.ts'], project);
  assert.is(write.code, 0, describeRun('mcp-dual-era migrate --write src/server.ts', write));
  const migrated = readFileSync(file, 'utf8');
  assert.match(migrated, 'serveStdio(wrapLegacyServer({ upstream: server }))');
  assert.match(migrated, /from 'mcp-dual-era\/server'/);
  assert.not.match(migrated, 'StdioServerTransport');
});

p('should ship the sources of every source map, LICENSE and every file the README links to', async () => {
  await ready();
  const files = walk(installed);
  const maps = files.filter((f) => f.endsWith('.map'));
  const js = files.filter((f) => f.startsWith('dist/') && f.endsWith('.js'));
  assert.ok(js.length > 0, 'dist/ has JavaScript');
  assert.is(maps.length, 2 * js.length, 'a .js.map and a .d.ts.map per module');
  const missing: string[] = [];
  for (const map of maps) {
    const { sources, sourceRoot } = JSON.parse(readFileSync(join(installed, map), 'utf8')) as { sources: string[]; sourceRoot?: string };
    assert.ok(sources.length > 0, `${map} names its sources`);
    for (const source of sources) {
      const path = resolve(dirname(join(installed, map)), sourceRoot ?? '', source);
      if (!path.startsWith(installed + '/') || !existsSync(path)) missing.push(`${map} → ${source}`);
    }
  }
  assert.equal(missing, []);
  assert.match(readFileSync(join(installed, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright \(c\) 2026 the mcp-dual-era authors\n/);
  const links = relativeLinks();
  assert.ok(links.length > 0, 'the README links to files');
  assert.equal(
    links.filter((link) => !existsSync(join(installed, link))),
    [],
  );
});

p('should keep the tarball lean: no specs, fixtures or benches beyond what the README links to', async () => {
  await ready();
  const files = walk(installed);
  const linked = new Set(relativeLinks());
  const extra = files.filter((f) => !/^(dist|lib)\//.test(f) && !['package.json', 'README.md', 'LICENSE'].includes(f) && !linked.has(f));
  assert.equal(extra, []);
  assert.equal(
    files.filter((f) => /\.spec\.ts$|^spec\/|^fixtures\//.test(f)),
    [],
  );
});

p('should type-check a TypeScript consumer (strict, exactOptionalPropertyTypes, NodeNext) against the installed types', async () => {
  await ready();
  const consumer = `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { wrapLegacyClient, type JsonRpcRequest } from 'mcp-dual-era';
import { wrapLegacyServer, stdioBackend, Keyring, type HttpFrontOptions, type LegacyServerWrap, type WrapStats } from 'mcp-dual-era/server';
import { inspectServer, wrapModernClient, type InspectOptions, type ServerReport } from 'mcp-dual-era/client';
import { migrateSource } from 'mcp-dual-era/codemod';
import { classify, requestToLegacy } from 'mcp-dual-era/core';

const client = new Client({ name: 'host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
await client.connect(wrapLegacyClient('https://mcp.example.com/mcp'));
await client.connect(wrapModernClient({ command: 'node', args: ['server.js'] }));
const http: HttpFrontOptions = { path: '/mcp' };
const wrap: LegacyServerWrap = wrapLegacyServer({ upstream: stdioBackend({ command: 'node', args: ['server.js'] }), mrtr: { keyring: new Keyring([Keyring.parse('k1', process.env.STATE_KEY)]) }, http });
const stats: WrapStats = wrap.stats();
const options: InspectOptions = { timeoutMs: 1000 };
const report: ServerReport = await inspectServer({ command: 'node', args: ['server.js'] }, options);
const kind: 'modern-only' | 'dual-era' | 'legacy' = report.kind;
const request: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
const up = requestToLegacy(request);
const sorted = classify(request);
const outcome = migrateSource('export {};', { fileName: 'server.ts', mode: 'wrap' });
void [wrap, stats.requests, kind, up.ok, sorted.ok, outcome];
`;
  writeFileSync(join(project, 'consumer.ts'), consumer);
  const options: TS.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(project, 'node_modules/@types')],
  };
  const program = ts.createProgram({ rootNames: [join(project, 'consumer.ts')], options });
  const own = program.getSourceFiles().filter((sf) => sf.fileName.startsWith(installed + '/'));
  assert.ok(
    own.some((sf) => sf.fileName.endsWith('/dist/client.d.ts')),
    'the types come from the installed dist/',
  );
  assert.not.ok(
    own.some((sf) => sf.fileName.endsWith('.ts') && !sf.fileName.endsWith('.d.ts')),
    'no source file is type-checked in place of a declaration',
  );
  // The consumer and the package's own declarations (checked as skipLibCheck: false would); other packages' are theirs.
  const checked = [program.getSourceFile(join(project, 'consumer.ts'))!, ...own];
  const diagnostics = [
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((sf) => [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]),
  ].map((d) => {
    const where = d.file ? `${relative(project, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} ` : '';
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  assert.equal(diagnostics, []);
});

p('should not install the TypeScript compiler for the command, and say how to migrate without it', async () => {
  await ready();
  const own = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
  assert.not.ok('typescript' in own.dependencies, 'typescript is not a dependency');
  assert.ok(own.peerDependenciesMeta?.['typescript']?.optional, 'an optional peer');
  const removed = await npm(['uninstall', '--offline', '--no-audit', '--no-fund', 'typescript'], project, 120_000);
  assert.is(removed.code, 0, describeRun('npm uninstall typescript', removed));
  assert.not.ok(existsSync(join(project, 'node_modules/typescript')), 'nothing else brought it back');
  const help = await npm(['exec', '--offline', '--', OWN.name, 'serve', '--help'], project);
  assert.is(help.code, 0, describeRun('mcp-dual-era serve --help', help));
  const migrate = await npm(['exec', '--offline', '--', OWN.name, 'migrate', 'src/server.ts'], project);
  assert.is(migrate.code, 1, describeRun('mcp-dual-era migrate without typescript', migrate));
  assert.match(migrate.stderr, 'mcp-dual-era migrate: the migration reads code with the TypeScript compiler, which is not installed here');
  assert.match(migrate.stderr, 'npx -p typescript -p mcp-dual-era mcp-dual-era migrate');
});

p.run();
