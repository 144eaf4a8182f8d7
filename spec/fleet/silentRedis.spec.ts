/**
 * A Redis that accepts connections but never answers (a real redis-server of the spec's own,
 * stopped with SIGSTOP: the kernel still takes its connections): `serve --fleet` says so on stderr
 * and exits 1 instead of hanging before it listens, and a command of a connected fleet client is
 * refused within its bound instead of waiting without end. A Redis gone mid-run (killed): a retry
 * sent to a replica that does not own its call is told at once to come again (503), not that its
 * call is gone, while the owner still serves it; `/healthz` says Redis is unreachable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { closeFleetRedis, connectFleetRedis, REDIS_COMMAND_MS } from '../../lib/fleet/fleetRedis.ts';
import { specFleet } from '../helpers/fleetRedis.ts';
import { ELICITATION_ANSWER, elicitationCall, startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { builtCli } from '../helpers/built.ts';
import { EVERYTHING } from '../helpers/everything.ts';
import { ownRedis, stopRedis } from '../helpers/ownRedis.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const silent = suite('a Redis that accepts connections but never answers');
let redis: ChildProcess | undefined;
let url = '';
silent.before(async () => {
  ({ child: redis, url } = await ownRedis());
});
silent.after(() => stopRedis(redis));

silent('should let a connected client’s command fail within its bound once Redis stops answering', async () => {
  const client = await connectFleetRedis({ url });
  try {
    assert.is(await client.set('k', 'v'), 'OK');
    redis!.kill('SIGSTOP');
    const started = performance.now();
    let hung: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      client.get('k').then(
        () => 'answered',
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      ),
      new Promise<string>((r) => (hung = setTimeout(() => r('still waiting'), REDIS_COMMAND_MS * 3))),
    ]).finally(() => clearTimeout(hung));
    assert.match(outcome, /timeout/i);
    assert.ok(performance.now() - started < REDIS_COMMAND_MS * 3, 'refused within its bound');
  } finally {
    redis!.kill('SIGCONT');
    await closeFleetRedis(client);
  }
});

silent('should make serve --fleet say so and exit 1, not hang before it listens', async () => {
  redis!.kill('SIGSTOP');
  try {
    const child = spawn(
      process.execPath,
      [builtCli(), 'serve', '--port', '0', '--fleet', url, '--', process.execPath, EVERYTHING, 'stdio'],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((done) => {
      const hung = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.once('exit', (c) => {
        clearTimeout(hung);
        done(c);
      });
    });
    assert.is(code, 1, `exit code (${err})`);
    assert.match(err, `cannot join the fleet at ${url}`);
    assert.match(err, 'did not answer');
    assert.not.match(err, 'serving');
  } finally {
    redis!.kill('SIGCONT');
  }
});

silent.run();

const down = suite("the fleet's Redis gone mid-run (serve --fleet, real replicas)");
let downRedis: ChildProcess | undefined;
let downReplicas: Replica[] = [];
down.after(async () => {
  await Promise.all(downReplicas.map(stopReplica));
  stopRedis(downRedis);
});

down('should tell a retry sent to another replica to come again at once, serve it on its owner, and say so on /healthz', async () => {
  const own = await ownRedis();
  downRedis = own.child;
  const fleet = specFleet(own.url);
  downReplicas = await Promise.all([startReplica(fleet), startReplica(fleet)]);
  const [a, b] = downReplicas as [Replica, Replica];
  const parked = (await (await elicitationCall(a.url, 1)).json()) as {
    result: { requestState: string; inputRequests: Record<string, unknown> };
  };
  const [key] = Object.keys(parked.result.inputRequests);
  const retry = { requestState: parked.result.requestState, inputResponses: { [key!]: ELICITATION_ANSWER } };
  await stopRedis(downRedis);
  const started = performance.now();
  const elsewhere = await elicitationCall(b.url, 2, retry);
  const waited = performance.now() - started;
  const said = await elsewhere.text();
  assert.is(elsewhere.status, 503, said);
  assert.is(elsewhere.headers.get('retry-after'), '1');
  assert.match(said, "the fleet's directory (its Redis) cannot be reached");
  assert.ok(waited < REDIS_COMMAND_MS, `told at once (${Math.round(waited)} ms), not after waiting for Redis`);
  const health = (await (await fetch(`${b.origin}/healthz`)).json()) as { redis: string };
  assert.is(health.redis, 'unreachable');
  // The call is still parked on its owner: the retry sent there is served.
  const done = await (await elicitationCall(a.url, 3, retry)).text();
  assert.match(done, 'User provided the requested information!');
});

down.run();
