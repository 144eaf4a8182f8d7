/**
 * The official MCP conformance suite in client mode: a modern-only client (the v2 SDK pinned to
 * 2026-07-28, fixtures/conformance/modernClient.ts) on a `wrapModernClient` transport must pass
 * every client scenario that applies, one at a time — at 2025-11-25, whose scenario servers are
 * legacy (the wrap translates), and at 2026-07-28, whose servers are modern (the wrap passes
 * through, routing headers included). Every authorization scenario (`auth/*`, the extension ones
 * too) signs in through the wrap's `authProvider` the way a user would configure it (see the
 * fixture), several at a time. Every other client scenario a revision lists must be in
 * fixtures/conformance/clientBaseline.json with its reason.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bundledClient } from '../helpers/conformanceRun.ts';
import { inTurns } from '../helpers/inTurns.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const HOOK = join(ROOT, 'spec/helpers/conformance/register.mjs');
// Many runs start the client: a prebuilt bundle (built once, first thing) starts faster than tsx.
const CLIENT = join(ROOT, 'fixtures/conformance/modernClient.ts');
const BASELINE = JSON.parse(readFileSync(join(ROOT, 'fixtures/conformance/clientBaseline.json'), 'utf8')) as Record<
  string,
  Record<string, string>
>;
/** The client scenarios a wrapped modern client is expected to pass, per revision. */
const APPLICABLE: Record<string, readonly string[]> = {
  '2025-11-25': ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry', 'json-schema-2020-12-preservation'],
  '2026-07-28': [
    'tools_call',
    'request-metadata',
    'sep-2322-client-request-state',
    'http-standard-headers',
    'http-custom-headers',
    'http-invalid-tool-headers',
    'json-schema-ref-no-deref',
    'json-schema-2020-12-preservation',
  ],
};

async function conformance(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'mde-conformance-client-'));
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', HOOK, SUITE, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => {
      rmSync(cwd, { recursive: true, force: true });
      done({ code, output });
    });
  });
}

/** The client in `scenario` at `revision`. */
async function clientRun(scenario: string, revision: string, ...extra: string[]): Promise<{ code: number | null; output: string }> {
  return conformance([
    'client',
    '--command',
    await bundledClient(CLIENT, 'conformanceModernClient'),
    '--scenario',
    scenario,
    '--spec-version',
    revision,
    '--timeout',
    '60000',
    ...extra,
  ]);
}

/** How many authorization scenarios run at once. */
const AT_ONCE = 4;

/** Why a run did not pass (`undefined` when it did): its tally and the end of its output. */
function failure(scenario: string, run: { code: number | null; output: string }): string | undefined {
  const tally = /Passed: (\d+)\/(\d+), (\d+) failed/u.exec(run.output);
  if (tally && tally[3] === '0' && Number(tally[1]) > 0 && run.output.includes('OVERALL: PASSED') && run.code === 0) return undefined;
  return `${scenario}: ${tally ? tally[0] : 'no tally'} (exit ${run.code})\n${run.output.slice(-2500)}`;
}

/** The client scenarios `list --client --requirements` names, scored or not. */
async function listedClientScenarios(revision: string): Promise<string[]> {
  const { output } = await conformance(['list', '--client', '--requirements', revision]);
  const scored = output.slice(output.indexOf('Client scenarios'), output.indexOf('Run and reported'));
  const names = [...scored.matchAll(/^\s+- (\S+)$/gmu)].map((m) => m[1]!);
  for (const m of output.slice(output.indexOf('Run and reported')).matchAll(/^\s+- (\S+) \[client\]$/gmu)) names.push(m[1]!);
  return names;
}

for (const [revision, applicable] of Object.entries(APPLICABLE)) {
  const c = suite(`conformance suite, client mode at ${revision}, through wrapModernClient`);

  let listed: string[] = [];
  c('should account for every client scenario: applicable, or baselined with a reason', async () => {
    listed = await listedClientScenarios(revision);
    assert.ok(listed.includes('tools_call') && listed.length >= 20, `unexpected listing: ${JSON.stringify(listed)}`);
    const baseline = BASELINE[revision] ?? {};
    for (const name of listed)
      assert.ok(
        applicable.includes(name) || name.startsWith('auth/') || name in baseline,
        `${name} is neither applicable nor in fixtures/conformance/clientBaseline.json`,
      );
    for (const name of Object.keys(baseline)) {
      assert.ok(listed.includes(name), `${name} is baselined but no longer listed: remove it`);
      assert.not.ok(applicable.includes(name), `${name} is both applicable and baselined`);
      assert.ok(baseline[name]!.length > 20, `${name} needs a reason`);
    }
  });

  for (const scenario of applicable) {
    c(`should pass ${scenario}`, async () => {
      const problem = failure(scenario, await clientRun(scenario, revision));
      assert.is(problem, undefined, problem);
    });
  }

  c('should sign in through the wrap in every authorization scenario not baselined', async () => {
    const baseline = BASELINE[revision] ?? {};
    const auth = (listed.length > 0 ? listed : await listedClientScenarios(revision)).filter(
      (name) => name.startsWith('auth/') && !(name in baseline),
    );
    assert.ok(auth.length >= 14, `unexpected listing: ${JSON.stringify(auth)}`);
    // The extension scenarios (client credentials, DPoP, enterprise-managed) are run at every revision on request (--force).
    const problems = await inTurns(auth, AT_ONCE, async (scenario) => failure(scenario, await clientRun(scenario, revision, '--force')));
    assert.equal(
      problems.filter((p) => p !== undefined),
      [],
      `${problems.filter((p) => p !== undefined).length} of ${auth.length} authorization scenarios failed`,
    );
  });

  c.run();
}
