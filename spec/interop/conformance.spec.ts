/**
 * The official MCP conformance suite (server scenarios) against the project's legacy, push-style
 * fixture server wrapped by wrapLegacyServer over Streamable HTTP: every scenario scored for
 * 2026-07-28 (modern clients, MRTR included) and for 2025-11-25 (legacy clients, same endpoint)
 * must pass, in suspend mode and (2026-07-28) again in replay mode; unscored failures must be
 * listed, with reasons, in fixtures/conformance/baseline.json. The 2026-07-28 suspend run goes
 * through the real command, `mcp-dual-era serve -- <the fixture over stdio>`, in a child process.
 * A scenario that checks a choice `serve` leaves to its user (`CHOSEN`) is run alone against the
 * command given the option that makes it, and must pass there.
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
import { runScenario, runSuite, startServeCommand } from '../helpers/conformanceRun.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const BASELINE = JSON.parse(readFileSync(join(ROOT, 'fixtures/conformance/baseline.json'), 'utf8')) as Record<
  string,
  Record<string, string>
>;

/**
 * Scenarios that check a choice `serve` leaves to its user, by revision, with the options that make
 * it. `tasks-required-task-error` wants `-32021` for a tool the server runs only as a task, called
 * by a client without the tasks extension; by default that client gets the tool's result instead,
 * the task run to its end (it cannot poll one), so the scenario must fail in the runs of every
 * scenario, against the default endpoint, and pass alone with `--tasks-without-extension refuse`.
 */
const CHOSEN: Record<string, Record<string, readonly string[]>> = {
  '2026-07-28': { 'tasks-required-task-error': ['--tasks-without-extension', 'refuse'] },
};

/** Stops a serve command, and waits until it has. */
async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

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
  if (command) await stop(command.child);
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
    const chosen = CHOSEN[revision] ?? {};
    for (const name of Object.keys(chosen))
      assert.ok((run.scenarios.get(name)?.failed ?? 0) > 0, `${name} passes at ${revision} without its options: take it out of CHOSEN`);
    const scored = [...run.scenarios].filter(([name]) => !run.unscored.has(name) && !(name in chosen));
    assert.ok(
      scored.length >= (revision === '2026-07-28' ? 37 : 30),
      `only ${scored.length} scored scenarios ran:\n${run.output.slice(-2000)}`,
    );
    const failing = scored.filter(([, r]) => r.failed > 0).map(([name]) => name);
    assert.equal(failing, [], `scored scenarios failing at ${revision}:\n${run.output.slice(-3000)}`);
    assert.is(run.code, 0, run.output.slice(-2000));
    const baseline = BASELINE[revision] ?? {};
    const unscoredFailing = [...run.unscored].filter((name) => !(name in chosen) && (run.scenarios.get(name)?.failed ?? 0) > 0);
    for (const name of unscoredFailing)
      assert.ok(name in baseline, `${name} fails at ${revision} and is not in fixtures/conformance/baseline.json`);
    const passing = Object.keys(baseline).filter((name) => !unscoredFailing.includes(name));
    assert.equal(passing, [], `in the ${revision} baseline but no longer failing (remove them): ${passing.join(', ')}`);
    const checks = scored.reduce((n, [, r]) => n + r.passed, 0);
    process.stdout.write(`  conformance ${revision} (${mode}, ${where}): ${scored.length} scored scenarios, ${checks} checks passed\n`);
  });
}

c('should pass each scenario that checks a choice left to the user, alone against serve with the options that make it', async () => {
  for (const [revision, scenarios] of Object.entries(CHOSEN))
    for (const [name, options] of Object.entries(scenarios)) {
      const chosen = await startServeCommand(options);
      try {
        const run = await runScenario(chosen.url, revision, name);
        assert.ok(run.passed > 0, `${name} ran no checks at ${revision}:\n${run.output.slice(-2000)}`);
        assert.is(run.failed, 0, `${name} fails at ${revision} with ${options.join(' ')}:\n${run.output.slice(-2000)}`);
        assert.is(run.code, 0, run.output.slice(-2000));
        process.stdout.write(`  conformance ${revision}: ${name} with ${options.join(' ')}, ${run.passed} checks passed\n`);
      } finally {
        await stop(chosen.child);
      }
    }
});

c.run();
