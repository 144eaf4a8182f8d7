/**
 * The official MCP conformance suite (server scenarios) against the project's legacy, push-style
 * fixture server wrapped by wrapLegacyServer over Streamable HTTP: every scenario scored for
 * 2026-07-28 (modern clients, MRTR included) and for 2025-11-25 (legacy clients, same endpoint)
 * must pass, in suspend mode and (2026-07-28) again in replay mode; unscored failures must be
 * listed, with reasons, in fixtures/conformance/baseline.json. The 2026-07-28 suspend run goes
 * through the real command, `mcp-dual-era serve -- <the fixture over stdio>`, in a child process.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createConformanceServer } from '../../fixtures/servers/conformanceServer.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { MrtrBroker } from '../../lib/wrap/mrtr/suspend.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { runSuite, startServeCommand } from '../helpers/conformanceRun.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BASELINE = JSON.parse(readFileSync(join(ROOT, 'fixtures/conformance/baseline.json'), 'utf8')) as Record<
  string,
  Record<string, string>
>;

const servers: Record<'suspend' | 'replay', { wrap?: LegacyServerWrap; server?: RunningHttpServer }> = { suspend: {}, replay: {} };
let command: { url: string; child: ChildProcess } | undefined;
const c = suite('conformance suite through wrapLegacyServer');

c.before(async () => {
  command = await startServeCommand();
  for (const mode of ['suspend', 'replay'] as const) {
    const wrap = wrapLegacyServer({ upstream: () => createConformanceServer(), mrtr: new MrtrBroker({ replay: mode === 'replay' }) });
    servers[mode] = { wrap, server: await serveNodeHttp(wrap, { port: 0 }) };
  }
});
c.after(async () => {
  if (command) {
    const exited = new Promise((r) => command!.child.once('exit', r));
    command.child.kill('SIGTERM');
    await exited;
  }
  for (const { wrap, server } of Object.values(servers)) {
    await wrap?.close();
    await server?.close();
  }
});

for (const [revision, mode, where] of [
  ['2026-07-28', 'suspend', 'the serve command'],
  ['2026-07-28', 'replay', 'in process'],
  ['2025-11-25', 'suspend', 'in process'],
] as const) {
  c(`should pass every scenario scored for ${revision} (${mode} mode, ${where}), with only baselined unscored failures`, async () => {
    const run = await runSuite(where === 'the serve command' ? command!.url : `${servers[mode].server!.origin}/mcp`, revision);
    const scored = [...run.scenarios].filter(([name]) => !run.unscored.has(name));
    assert.ok(
      scored.length >= (revision === '2026-07-28' ? 37 : 30),
      `only ${scored.length} scored scenarios ran:\n${run.output.slice(-2000)}`,
    );
    const failing = scored.filter(([, r]) => r.failed > 0).map(([name]) => name);
    assert.equal(failing, [], `scored scenarios failing at ${revision}:\n${run.output.slice(-3000)}`);
    assert.is(run.code, 0, run.output.slice(-2000));
    const baseline = BASELINE[revision] ?? {};
    const unscoredFailing = [...run.unscored].filter((name) => (run.scenarios.get(name)?.failed ?? 0) > 0);
    for (const name of unscoredFailing)
      assert.ok(name in baseline, `${name} fails at ${revision} and is not in fixtures/conformance/baseline.json`);
    const passing = Object.keys(baseline).filter((name) => !unscoredFailing.includes(name));
    assert.equal(passing, [], `in the ${revision} baseline but no longer failing (remove them): ${passing.join(', ')}`);
    const checks = scored.reduce((n, [, r]) => n + r.passed, 0);
    process.stdout.write(`  conformance ${revision} (${mode}, ${where}): ${scored.length} scored scenarios, ${checks} checks passed\n`);
  });
}

c.run();
