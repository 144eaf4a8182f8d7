/**
 * The fleet's Redis restarted without persistence (it comes back empty) while a replica runs, and
 * a replica started before that replica could write anything back: the two still make one fleet.
 * Each retry, sent to the replica that does not own its call, is opened there, forwarded to its
 * owner, taken as a hop of the fleet and served; neither replica has to restart. Real replicas of
 * `serve --fleet` in front of server-everything, on a redis-server of the spec's own.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { specFleet } from '../helpers/fleetRedis.ts';
import { ELICITATION_ANSWER, elicitationCall, startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { ownRedis, stopRedis, type OwnRedis } from '../helpers/ownRedis.ts';

/** How long the two replicas may take to agree again (a few heartbeats and key reads). */
const AGREE_MS = 20_000;

/** Parks a call of server-everything's eliciting tool at `url`: the retry that answers it. */
async function park(url: string, id: number): Promise<Record<string, unknown>> {
  const parked = (await (await elicitationCall(url, id)).json()) as {
    result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
  };
  assert.is(parked.result.resultType, 'input_required', JSON.stringify(parked));
  const [key] = Object.keys(parked.result.inputRequests);
  return { requestState: parked.result.requestState, inputResponses: { [key!]: ELICITATION_ANSWER } };
}

/** Sends `retry` to `url` until it is served (its tool's answer), or `AGREE_MS` passed: what it was last answered. */
async function servedEventually(url: string, id: number, retry: Record<string, unknown>): Promise<string> {
  const until = Date.now() + AGREE_MS;
  for (;;) {
    const answer = await (await elicitationCall(url, id, retry)).text();
    if (answer.includes('User provided the requested information!') || Date.now() > until) return answer;
    await new Promise((r) => setTimeout(r, 250));
  }
}

const restart = suite('a Redis restarted without persistence (serve --fleet, real replicas)');
let redis: OwnRedis | undefined;
let replicas: Replica[] = [];
restart.after(async () => {
  for (const r of replicas) r.child.kill('SIGCONT');
  await Promise.all(replicas.map(stopReplica));
  await stopRedis(redis?.child);
});

restart('should keep a replica started before it and one started after it in one fleet', async () => {
  redis = await ownRedis();
  const fleet = specFleet(redis.url);
  const before = await startReplica(fleet);
  replicas = [before];
  const parkedBefore = await park(before.url, 1);
  // Redis comes back empty while the running replica is held still: the next one to start finds
  // no secret and no key, and writes its own.
  before.child.kill('SIGSTOP');
  await stopRedis(redis.child);
  redis = await ownRedis(redis.port);
  const after = await startReplica(fleet);
  replicas.push(after);
  before.child.kill('SIGCONT');
  const parkedAfter = await park(after.url, 2);
  assert.match(
    await servedEventually(after.url, 3, parkedBefore),
    'User provided the requested information!',
    'a call parked before the restart, retried on the replica started after it',
  );
  assert.match(
    await servedEventually(before.url, 4, parkedAfter),
    'User provided the requested information!',
    'a call parked on the newer replica, retried on the older one',
  );
  const forwarded = await Promise.all(
    replicas.map(async (r) => ((await (await fetch(`${r.origin}/healthz`)).json()) as { forwarded: number }).forwarded),
  );
  assert.equal(forwarded, [1, 1], 'each retry was forwarded to its owner');
  await fleet.end();
});

restart.run();
