/**
 * The official MCP conformance suite's 2026-07-28 server scenarios against a fleet: three
 * replicas of `mcp-dual-era serve --fleet` in front of the conformance fixture over stdio, behind
 * a real nginx (round robin, no stickiness), give exactly the result the single-process command
 * (`mcp-dual-era serve`, run here first) gives: every scored scenario passes, and each scenario
 * passes and fails the same checks. Retries of parked calls really land on other replicas and are
 * forwarded to their owners (the replicas' `/healthz` counts the forwards).
 */
import type { ChildProcess } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFORMANCE_FIXTURE as FIXTURE, runSuite, startServeCommand, type Run } from '../helpers/conformanceRun.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { forwardedIn, startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { startNginx, type RunningNginx } from '../helpers/nginx.ts';

const REVISION = '2026-07-28';

/** The scored scenarios of `run` and their passed checks, after asserting that every one passed. */
function scoredPassing(run: Run, where: string): { scenarios: number; checks: number } {
  const scored = [...run.scenarios].filter(([name]) => !run.unscored.has(name));
  assert.ok(scored.length >= 37, `only ${scored.length} scored scenarios ran ${where}:\n${run.output.slice(-2000)}`);
  const failing = scored.filter(([, r]) => r.failed > 0).map(([name]) => name);
  assert.equal(failing, [], `scored scenarios failing ${where}:\n${run.output.slice(-3000)}`);
  assert.is(run.code, 0, `the suite exited ${run.code} ${where}:\n${run.output.slice(-2000)}`);
  return { scenarios: scored.length, checks: scored.reduce((n, [, r]) => n + r.passed, 0) };
}

/** Each scenario whose checks differ between the runs, with both results. */
function differences(fleet: Run, alone: Run): string[] {
  const text = (r: { passed: number; failed: number } | undefined) => (r ? `${r.passed} passed, ${r.failed} failed` : 'not run');
  const names = [...new Set([...fleet.scenarios.keys(), ...alone.scenarios.keys()])].sort();
  return names
    .filter((name) => text(fleet.scenarios.get(name)) !== text(alone.scenarios.get(name)))
    .map((name) => `${name}: ${text(fleet.scenarios.get(name))} behind nginx, ${text(alone.scenarios.get(name))} in one process`);
}

const replicaLogs = (replicas: readonly Replica[]) =>
  replicas.map((r, i) => `--- replica ${i} (${r.origin}) ---\n${r.log().slice(-3000)}`).join('\n');

const c = suite(`conformance suite (${REVISION}) through three fleet replicas behind nginx`);
let fleet: SpecFleet | undefined;
let alone: { url: string; child: ChildProcess } | undefined;
let replicas: Replica[] = [];
let nginx: RunningNginx | undefined;
let reference: Run | undefined;

c.before(async () => {
  fleet = specFleet();
  const f = fleet;
  [alone, ...replicas] = await Promise.all([startServeCommand(), ...[0, 1, 2].map(() => startReplica(f, [], FIXTURE))] as const);
  nginx = await startNginx(replicas.map((r) => new URL(r.origin).host));
});
c.after(async () => {
  await nginx?.stop();
  await Promise.all(replicas.map(stopReplica));
  if (alone && alone.child.exitCode === null && alone.child.signalCode === null) {
    const exited = new Promise((r) => alone!.child.once('exit', r));
    alone.child.kill('SIGTERM');
    await exited;
  }
  await fleet?.end();
});

c('should pass every scored scenario in one process (the reference)', async () => {
  reference = await runSuite(alone!.url, REVISION);
  const { scenarios, checks } = scoredPassing(reference, 'in one process');
  process.stdout.write(`  one process: ${scenarios} scored scenarios, ${checks} checks passed\n`);
});

c('should give the same result through three replicas behind nginx, retries forwarded to their owners', async () => {
  assert.ok(reference, 'the single-process run finished');
  const before = await forwardedIn(replicas);
  const run = await runSuite(`${nginx!.url}/mcp`, REVISION);
  const forwarded = (await forwardedIn(replicas)) - before;
  const { scenarios, checks } = scoredPassing(run, `behind nginx\n${replicaLogs(replicas)}`);
  process.stdout.write(
    `  three replicas behind nginx: ${scenarios} scored scenarios, ${checks} checks passed, ${forwarded} retries forwarded\n`,
  );
  assert.ok(forwarded > 0, `no retry was forwarded between replicas:\n${replicaLogs(replicas)}`);
  assert.equal(differences(run, reference), [], 'every scenario passes and fails the same checks behind nginx as in one process');
  assert.equal([...run.unscored].sort(), [...reference.unscored].sort(), 'the same scenarios are unscored');
});

c.run();
