/**
 * The official conformance suite in client mode, `--requirements 2026-07-28`, against an SDK v1
 * client (1.32.2) that knows only the legacy wire: through `wrapLegacyClient` it passes the core
 * client scenarios (tool calls, per-request metadata, MRTR request state, the standard and custom
 * headers, invalid header annotations); the gaps it still has are baselined with reasons in
 * fixtures/conformance/client-baseline.yml. Without the wrap the same client fails `tools_call`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bundledClient } from '../helpers/conformanceRun.ts';
import { inTurns } from '../helpers/inTurns.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const HOOK = join(ROOT, 'spec/helpers/conformance/register.mjs');
// The suite starts every scenario's client at once: a prebuilt bundle keeps 39 cold starts cheap.
let CLIENT = '';
const BASELINE = join(ROOT, 'fixtures/conformance/client-baseline.yml');

/** The scenarios the baseline names (a line `  - name` each). */
const BASELINED = new Set([...readFileSync(BASELINE, 'utf8').matchAll(/^\s+- (\S+)\s*$/gmu)].map((m) => m[1]!));

const REQUIRED = [
  'tools_call',
  'request-metadata',
  'sep-2322-client-request-state',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
];

interface ClientRun {
  readonly code: number | null;
  readonly output: string;
  readonly scenarios: Map<string, { passed: number; failed: number }>;
  /** Per scenario: the checks that did not pass, and the client's stderr. */
  readonly details: Map<string, string>;
}

function runClientSuite(args: string[], env: Record<string, string> = {}): Promise<ClientRun> {
  const cwd = mkdtempSync(join(tmpdir(), 'mde-conformance-client-'));
  const results = join(cwd, 'results');
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', HOOK, SUITE, 'client', '--command', CLIENT, '-o', results, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => {
      const details = new Map<string, string>();
      const walk = (dir: string, prefix: string): void => {
        for (const entry of existsSync(dir) ? readdirSync(dir) : []) {
          const path = join(dir, entry);
          if (!existsSync(join(path, 'checks.json'))) {
            walk(path, `${prefix}${entry}/`);
            continue;
          }
          const checks = JSON.parse(readFileSync(join(path, 'checks.json'), 'utf8')) as Array<{
            name: string;
            status: string;
            errorMessage?: string;
          }>;
          const bad = checks
            .filter((c) => c.status !== 'SUCCESS' && c.status !== 'SKIPPED')
            .map((c) => `${c.name} ${c.status}: ${c.errorMessage ?? ''}`);
          const stderr = existsSync(join(path, 'stderr.txt')) ? readFileSync(join(path, 'stderr.txt'), 'utf8') : '';
          details.set(`${prefix}${entry.replace(/-\d{4}-\d\d-\d\dT.*$/, '')}`, `${bad.join('\n')}\nclient stderr: ${stderr.slice(-1500)}`);
        }
      };
      walk(results, '');
      rmSync(cwd, { recursive: true, force: true });
      const scenarios = new Map<string, { passed: number; failed: number }>();
      for (const m of output.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed/gmu))
        scenarios.set(m[1]!, { passed: Number(m[2]), failed: Number(m[3]) });
      const single = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(output);
      if (scenarios.size === 0 && single)
        scenarios.set(args[args.indexOf('--scenario') + 1]!, { passed: Number(single[1]), failed: Number(single[3]) });
      done({ code, output, scenarios, details });
    });
  });
}

const c = suite('conformance suite, client mode, 2026-07-28');

c.before(async () => {
  CLIENT = await bundledClient(join(ROOT, 'fixtures/clients/conformanceLegacyClient.ts'), 'conformanceLegacyClient');
});

c('should fail tools_call with the v1 client alone: it sends no MCP-Protocol-Version header', async () => {
  const run = await runClientSuite(['--scenario', 'tools_call', '--spec-version', '2026-07-28', '--timeout', '60000'], {
    MCP_DUAL_ERA_UNWRAPPED: '1',
  });
  const result = run.scenarios.get('tools_call');
  assert.ok(result && result.failed > 0, run.output.slice(-2000));
  assert.match(run.output, '-32020');
  assert.match(run.output, 'Missing MCP-Protocol-Version header');
});

c('should pass the core client scenarios through wrapLegacyClient, with only baselined gaps', async () => {
  const run = await runClientSuite(['--requirements', '2026-07-28', '--timeout', '120000', '--expected-failures', BASELINE]);
  for (const name of REQUIRED) {
    const result = run.scenarios.get(name);
    assert.ok(result, `${name} ran:\n${run.output.slice(-2000)}`);
    assert.is(result!.failed, 0, `${name} failed:\n${run.details.get(name) ?? run.output.slice(-3000)}`);
    assert.ok(result!.passed > 0, name);
  }
  const unexpected = [...run.scenarios]
    .filter(([name, r]) => r.failed > 0 && !BASELINED.has(name))
    .map(([name]) => `${name}:\n${run.details.get(name) ?? ''}`);
  assert.match(run.output, 'Baseline check passed', `${unexpected.join('\n\n')}\n${run.output.slice(-2000)}`);
  assert.is(run.code, 0, run.output.slice(-3000));
  const passed = [...run.scenarios].filter(([, r]) => r.failed === 0).length;
  process.stdout.write(`  conformance client 2026-07-28: ${passed} of ${run.scenarios.size} scenarios pass\n`);
});

c('should sign in through wrapLegacyClient in every authorization scenario but workload identity federation, four at a time', async () => {
  const auth = [...BASELINED].filter((name) => name.startsWith('auth/') && name !== 'auth/wif-jwt-bearer');
  assert.ok(auth.length >= 25, `unexpected baseline: ${JSON.stringify(auth)}`);
  const results = await inTurns(auth, 4, async (scenario) => {
    const run = await runClientSuite(['--scenario', scenario, '--spec-version', '2026-07-28', '--timeout', '60000', '--force'], {
      MCP_DUAL_ERA_SIGN_IN: '1',
    });
    const result = run.scenarios.get(scenario);
    return !result || result.failed > 0 || result.passed === 0
      ? `${scenario}: ${result ? `${result.passed} passed, ${result.failed} failed` : 'no tally'}\n${run.details.get(scenario) ?? run.output.slice(-1500)}`
      : undefined;
  });
  const problems = results.filter((p) => p !== undefined);
  assert.equal(problems, [], `${problems.length} of ${auth.length} authorization scenarios failed`);
});

c.run();
