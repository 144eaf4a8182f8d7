/**
 * Listens across a fleet (real Redis, real replicas of `serve --fleet`): a change an upstream
 * reports to one replica reaches the `subscriptions/listen` streams of the same caller on every
 * replica, once per stream, and never another caller's. Twice: each replica in front of a legacy
 * server process of its own (a change seen by one process only), and both in front of one shared
 * legacy HTTP server (the change reported to both replicas, delivered once all the same).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join, resolve } from 'node:path';
import { startLegacyHttp } from '../../fixtures/servers/legacyHttp.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { modernPost, openListen } from '../helpers/modernHttp.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = [process.execPath, '--import', 'tsx', join(ROOT, 'fixtures/servers/legacyStdio.ts')];
const URI = 'memo://fleet/doc';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Listening = Extract<Awaited<ReturnType<typeof openListen>>, { acknowledged: true }>;

async function listen(replica: Replica, principal: string): Promise<Listening> {
  const opened = await openListen(replica.url, { principal, id: `listen-${principal}`, notifications: { resourceSubscriptions: [URI] } });
  if (!opened.acknowledged) throw new Error(`listen refused: ${JSON.stringify(opened.answer.message)}`);
  return opened;
}

/** The resource updates a listen has received so far. */
function updates(l: Listening): number {
  return l.seen.filter((m) => m['method'] === 'notifications/resources/updated' && m['params']?.['uri'] === URI).length;
}

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await sleep(20);
  }
  return true;
}

async function touch(replica: Replica, principal: string): Promise<void> {
  const answer = await modernPost(replica.url, 'tools/call', { name: 'touch', arguments: { uri: URI } }, { principal });
  assert.equal(answer.message['result']?.['content']?.[0]?.['text'], `touched ${URI}`, JSON.stringify(answer.message));
}

const own = suite('listens across replicas, each in front of a server process of its own');
let fleet: SpecFleet;
let replicas: Replica[] = [];
own.before(async () => {
  fleet = specFleet();
  replicas = await Promise.all([startReplica(fleet, [], FIXTURE), startReplica(fleet, [], FIXTURE)]);
});
own.after(async () => {
  await Promise.all(replicas.map(stopReplica));
  await fleet.end();
});

own('should carry a change one replica heard to the same caller’s listens on the others, once each, and to no one else', async () => {
  const [a, b] = replicas as [Replica, Replica];
  const aliceA = await listen(a, 'alice');
  const aliceB = await listen(b, 'alice');
  const bobA = await listen(a, 'bob');
  const bobB = await listen(b, 'bob');
  const counts = () => [updates(aliceA), updates(aliceB), updates(bobA), updates(bobB)];
  try {
    // Only the server process behind alice's session on A sees this change.
    await touch(a, 'alice');
    assert.ok(await until(() => updates(aliceA) === 1 && updates(aliceB) === 1), `alice on A, on B, bob on A, on B: ${counts()}`);
    // Only the one behind bob's session on B sees this one.
    await touch(b, 'bob');
    assert.ok(await until(() => updates(bobA) === 1 && updates(bobB) === 1), `alice on A, on B, bob on A, on B: ${counts()}`);
    await sleep(300);
    assert.equal(counts(), [1, 1, 1, 1], 'nothing twice, nothing to the other caller');
    // Each update is tagged with its own listen's id.
    for (const [l, id] of [
      [aliceA, 'listen-alice'],
      [aliceB, 'listen-alice'],
      [bobA, 'listen-bob'],
      [bobB, 'listen-bob'],
    ] as const) {
      const tagged = l.seen
        .filter((m) => m['method'] === 'notifications/resources/updated')
        .map((m) => m['params']['_meta']['io.modelcontextprotocol/subscriptionId']);
      assert.equal(tagged, [id]);
    }
  } finally {
    for (const l of [aliceA, aliceB, bobA, bobB]) l.close();
  }
});

own.run();

const shared = suite('listens across replicas in front of one shared legacy HTTP server');
let sharedFleet: SpecFleet;
let upstream: Awaited<ReturnType<typeof startLegacyHttp>>;
let sharedReplicas: Replica[] = [];
shared.before(async () => {
  sharedFleet = specFleet();
  upstream = await startLegacyHttp();
  sharedReplicas = await Promise.all([
    startReplica(sharedFleet, ['--upstream', upstream.url], []),
    startReplica(sharedFleet, ['--upstream', upstream.url], []),
  ]);
});
shared.after(async () => {
  await Promise.all(sharedReplicas.map(stopReplica));
  await upstream.close();
  await sharedFleet.end();
});

shared('should deliver a change both replicas heard once per stream, and each change of its own', async () => {
  const [a, b] = sharedReplicas as [Replica, Replica];
  const onA = await listen(a, 'carol');
  const onB = await listen(b, 'carol');
  try {
    // The server tells both replicas' sessions; each replica also hears the other's report.
    await touch(a, 'carol');
    assert.ok(await until(() => updates(onA) >= 1 && updates(onB) >= 1));
    await sleep(300);
    assert.equal([updates(onA), updates(onB)], [1, 1]);
    // A second change alike, at once: a change of its own, not a repeat.
    await touch(b, 'carol');
    assert.ok(await until(() => updates(onA) >= 2 && updates(onB) >= 2));
    await sleep(300);
    assert.equal([updates(onA), updates(onB)], [2, 2]);
  } finally {
    onA.close();
    onB.close();
  }
});

shared.run();
