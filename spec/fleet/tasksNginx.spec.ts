/**
 * Tasks through a real nginx in front of three replicas of `serve --fleet` (server-everything
 * behind each, `simulate-research-query` running only as a task and asking a clarification inside
 * it when `ambiguous`), on the machine's Redis.
 *
 * Round robin, no stickiness: a caller declaring the tasks extension creates a task, polls it,
 * answers its question with `tasks/update`, sees it complete, cancels another, all through nginx;
 * the requests that land on a replica other than the task's owner are forwarded there (each
 * replica's `/healthz` counts its forwards, and its `/metrics` the `tasks/get` it answered itself:
 * the owner answers every poll, the others none). Once the owner is killed (SIGKILL), `tasks/get`
 * through nginx is told the task is lost.
 *
 * The task-hash variant (docs/fleet.md): nginx hashes a task's requests on their `Mcp-Name` (the
 * task's id), so that every request about one task lands on one replica: forwarded from there all,
 * or none when it is the owner.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { call, createTask, pollUntil, replicaCounts, TERMINAL } from '../helpers/fleetTasks.ts';
import { sleep } from '../helpers/everything.ts';
import { startNginx, type NginxBalance, type RunningNginx } from '../helpers/nginx.ts';

type Obj = Record<string, any>;
type Counts = Awaited<ReturnType<typeof replicaCounts>>;

/** Three replicas (with `/metrics`) behind an nginx balancing as `balance` says, for one suite. */
function fleetBehindNginx(balance: NginxBalance): {
  replicas: () => Replica[];
  nginx: () => RunningNginx;
  start(): Promise<void>;
  stop(): Promise<void>;
} {
  let fleet: SpecFleet | undefined;
  let replicas: Replica[] = [];
  let nginx: RunningNginx | undefined;
  return {
    replicas: () => replicas,
    nginx: () => nginx!,
    async start() {
      fleet = specFleet();
      replicas = await Promise.all([0, 1, 2].map(() => startReplica(fleet!, ['--metrics'])));
      nginx = await startNginx(
        replicas.map((r) => new URL(r.origin).host),
        balance,
      );
    },
    async stop() {
      await nginx?.stop();
      await Promise.all(replicas.map(stopReplica));
      await fleet?.end();
    },
  };
}

/** Each replica's counts, by replica id. */
async function countsOf(replicas: readonly Replica[]): Promise<Map<string, Counts>> {
  return new Map((await Promise.all(replicas.map(replicaCounts))).map((c) => [c.id, c]));
}

/**
 * Runs an ambiguous task to its end through `url`: polled until it asks, its question answered
 * with `tasks/update`, polled until it completes, then polled three times more one after another.
 * Its id, and how many requests about it were sent.
 */
async function taskAnsweredThrough(url: string): Promise<{ taskId: string; sent: number }> {
  const taskId = await createTask(url, { topic: 'python', ambiguous: true });
  const asking = await pollUntil(url, taskId, ['input_required', ...TERMINAL]);
  assert.is(asking['result']?.['status'], 'input_required', JSON.stringify(asking));
  const [key] = Object.keys(asking['result']['inputRequests'] as Obj);
  const update = await call(url, 'tasks/update', {
    taskId,
    inputResponses: { [key!]: { action: 'accept', content: { interpretation: 'snake' } } },
  });
  assert.equal(update.message['result'], { resultType: 'complete' }, JSON.stringify(update.message));
  const done = await pollUntil(url, taskId, TERMINAL);
  assert.is(done['result']?.['status'], 'completed', JSON.stringify(done));
  assert.match(JSON.stringify(done['result']['result']), /snake/);
  for (let i = 0; i < 3; i++) {
    const again = await call(url, 'tasks/get', { taskId });
    assert.is(again.message['result']?.['status'], 'completed', JSON.stringify(again.message));
  }
  return { taskId, sent: asking.polls + 1 + done.polls + 3 };
}

/** What changed in each replica's counts between `before` and `after`, by replica id. */
function deltas(before: Map<string, Counts>, after: Map<string, Counts>): Map<string, { forwarded: number; tasksGetServed: number }> {
  return new Map(
    [...after].map(([id, c]) => [
      id,
      { forwarded: c.forwarded - before.get(id)!.forwarded, tasksGetServed: c.tasksGetServed - before.get(id)!.tasksGetServed },
    ]),
  );
}

const roundRobin = suite('tasks through nginx, round robin, in front of three serve --fleet replicas');
const rr = fleetBehindNginx('round-robin');
roundRobin.before(() => rr.start());
roundRobin.after(() => rr.stop());

roundRobin('should poll, answer and complete a task through nginx, the requests landing elsewhere forwarded to its owner', async () => {
  const before = await countsOf(rr.replicas());
  const { taskId, sent } = await taskAnsweredThrough(`${rr.nginx().url}/mcp`);
  const owner = taskId.split('.')[0]!;
  assert.ok(before.has(owner), `the task's id names a replica of the fleet: ${taskId}`);
  const changed = deltas(before, await countsOf(rr.replicas()));
  const polls = sent - 1;
  const others = [...changed].filter(([id]) => id !== owner);
  const seen = JSON.stringify({ owner, sent, changed: [...changed] });
  assert.is(changed.get(owner)!.tasksGetServed, polls, `the owner answered every poll, wherever it landed: ${seen}`);
  assert.is(changed.get(owner)!.forwarded, 0, `the owner forwarded none: ${seen}`);
  for (const [, c] of others) {
    assert.is(c.tasksGetServed, 0, `a replica that does not own the task answers no poll itself: ${seen}`);
    // The last three polls, one after another, landed one on each replica.
    assert.ok(c.forwarded >= 1, `each other replica forwarded polls to the owner: ${seen}`);
  }
  // Round robin over three: of the task's requests sent one after another, at most one in three
  // landed on the owner; every other one was forwarded there.
  const forwarded = others.reduce((n, [, c]) => n + c.forwarded, 0);
  assert.ok(forwarded >= sent - Math.ceil(sent / 3) && forwarded <= sent, `forwarded ${forwarded} of ${sent}: ${seen}`);
});

roundRobin('should cancel a task through nginx', async () => {
  const url = `${rr.nginx().url}/mcp`;
  const taskId = await createTask(url, { topic: 'rust' });
  const cancelled = await call(url, 'tasks/cancel', { taskId });
  assert.equal(cancelled.message['result'], { resultType: 'complete' }, JSON.stringify(cancelled.message));
  const after = await pollUntil(url, taskId, TERMINAL);
  assert.is(after['result']?.['status'], 'cancelled', JSON.stringify(after));
});

roundRobin('should tell a task lost through nginx once the replica that ran it is killed (SIGKILL)', async () => {
  const url = `${rr.nginx().url}/mcp`;
  const taskId = await createTask(url, { topic: 'go', ambiguous: true });
  const owner = taskId.split('.')[0]!;
  const ids = await Promise.all(rr.replicas().map(replicaCounts));
  const ownerReplica = rr.replicas()[ids.findIndex((c) => c.id === owner)];
  assert.ok(ownerReplica, `the task's id names a replica of the fleet: ${taskId}`);
  const exited = new Promise((r) => ownerReplica.child.once('exit', r));
  ownerReplica.child.kill('SIGKILL');
  await exited;
  // Polled until told lost, within a generous bound: at once when the owner's port refuses, or
  // once its directory record expires. A poll nginx had already sent to the killed replica is cut
  // by nginx itself (a 502 of its own, not JSON): polled again.
  const deadline = Date.now() + 30_000;
  let last: Obj = {};
  while (Date.now() < deadline) {
    last = await call(url, 'tasks/get', { taskId }).then(
      (got) => got.message,
      (e: unknown) => ({ cut: String(e) }),
    );
    if (last['error']) break;
    await sleep(200);
  }
  const error = last['error'] as Obj | undefined;
  assert.is(error?.['code'], -32602, JSON.stringify(last));
  assert.ok(String(error?.['message']).startsWith(`Task ${taskId} is lost`), JSON.stringify(last));
  assert.equal(error?.['data'], { reason: 'owner-gone', owner, taskId }, JSON.stringify(last));
});

roundRobin.run();

const hashed = suite('tasks through nginx hashing a task on its Mcp-Name, in front of three serve --fleet replicas');
const th = fleetBehindNginx('task-hash');
hashed.before(() => th.start());
hashed.after(() => th.stop());

hashed('should land every request about one task on one replica', async () => {
  const before = await countsOf(th.replicas());
  const { taskId, sent } = await taskAnsweredThrough(`${th.nginx().url}/mcp`);
  const owner = taskId.split('.')[0]!;
  const changed = deltas(before, await countsOf(th.replicas()));
  const seen = JSON.stringify({ owner, sent, changed: [...changed] });
  assert.is(changed.get(owner)!.tasksGetServed, sent - 1, `the owner answered every poll: ${seen}`);
  const forwarding = [...changed].filter(([, c]) => c.forwarded > 0);
  // The replica the hash picked is the owner (nothing forwarded) or another, which forwarded them all.
  assert.ok(forwarding.length <= 1, `one replica at most forwarded: ${seen}`);
  if (forwarding.length === 1) {
    assert.is.not(forwarding[0]![0], owner, seen);
    assert.is(forwarding[0]![1].forwarded, sent, `every request about the task landed on that one replica: ${seen}`);
  }
});

hashed.run();
