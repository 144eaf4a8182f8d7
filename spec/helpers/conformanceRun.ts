/**
 * Runs the official MCP conformance suite (server scenarios) against an endpoint in a child
 * process, on Node 20 through the hooks in spec/helpers/conformance/, and parses what it prints:
 * each scenario's passed and failed checks, and which scenarios it did not score. And the
 * endpoint most runs score: `mcp-dual-era serve` in front of the conformance fixture server. For
 * client mode, a client fixture bundled once into a command that starts fast.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { build } from 'esbuild';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const HOOK = join(ROOT, 'spec/helpers/conformance/register.mjs');

const bundles = new Map<string, Promise<string>>();
/**
 * The command that runs the client fixture `entry` (TypeScript), bundled once per process into
 * node_modules/.cache/mcp-dual-era/`name`.mjs: the suite starts the client for every scenario, and
 * a bundle starts much faster than tsx.
 */
export function bundledClient(entry: string, name: string): Promise<string> {
  let command = bundles.get(name);
  if (!command) {
    const outfile = join(ROOT, 'node_modules/.cache/mcp-dual-era', `${name}.mjs`);
    mkdirSync(join(ROOT, 'node_modules/.cache/mcp-dual-era'), { recursive: true });
    command = build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outfile,
      logLevel: 'silent',
    }).then(() => `${process.execPath} ${outfile}`);
    bundles.set(name, command);
  }
  return command;
}

/** One run of the suite: its exit code, everything it printed, and the parsed results. */
export interface Run {
  readonly code: number | null;
  readonly output: string;
  readonly scenarios: Map<string, { passed: number; failed: number }>;
  readonly unscored: Set<string>;
}

/** Runs the suite's server command with `args` (after `--url url`) in a directory of its own: its exit code and all it printed. */
function runServer(url: string, args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'mde-conformance-'));
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', HOOK, SUITE, 'server', '--url', url, ...args, '--timeout', '20000'], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => {
      rmSync(cwd, { recursive: true, force: true });
      done({ code, output });
    });
  });
}

/** Runs every server scenario of `revision` against the MCP endpoint at `url`. */
export async function runSuite(url: string, revision: string): Promise<Run> {
  const { code, output } = await runServer(url, ['--requirements', revision]);
  return parseRun(code, output);
}

/**
 * Runs the server scenario `scenario` alone against `url`, at `revision`'s wire as a run of its
 * requirements does (`--force`: an extension scenario is run though it is not on the revision's
 * timeline): its exit code, what it printed, and its checks passed and failed.
 */
export async function runScenario(
  url: string,
  revision: string,
  scenario: string,
): Promise<{ code: number | null; output: string; passed: number; failed: number }> {
  const { code, output } = await runServer(url, ['--scenario', scenario, '--spec-version', revision, '--force']);
  const m = /^Passed: (\d+)\/(\d+), (\d+) failed/mu.exec(output);
  return { code, output, passed: m ? Number(m[1]) : 0, failed: m ? Number(m[3]) : 0 };
}

/** The results the suite printed in `output`. */
export function parseRun(code: number | null, output: string): Run {
  const scenarios = new Map<string, { passed: number; failed: number }>();
  for (const m of output.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed/gmu))
    scenarios.set(m[1]!, { passed: Number(m[2]), failed: Number(m[3]) });
  const unscored = new Set<string>();
  if (output.includes('Not scored'))
    for (const m of output.slice(output.indexOf('Not scored')).matchAll(/^\s+[✓✗] (\S+) \(/gmu)) unscored.add(m[1]!);
  return { code, output, scenarios, unscored };
}

/** The conformance fixture server over stdio, as a command line. */
export const CONFORMANCE_FIXTURE: readonly string[] = [
  process.execPath,
  '--import',
  'tsx',
  join(ROOT, 'fixtures/servers/conformanceStdio.ts'),
];

/** `mcp-dual-era serve --port 0 [options] -- <the conformance fixture>`, one process: resolves with its endpoint. */
export function startServeCommand(options: readonly string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'lib/cli/main.ts'), 'serve', '--port', '0', ...options, '--', ...CONFORMANCE_FIXTURE],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  return new Promise((resolveUrl, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /serving .* at (http:\/\/\S+)/.exec(err);
      if (m) resolveUrl({ url: m[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`mcp-dual-era serve exited ${code}: ${err}`)));
  });
}
