/**
 * Tasks on a fleet: a task belongs to the replica whose upstream runs it, and its id says which.
 * Real replicas of `serve --fleet` in front of server-everything (whose `simulate-research-query`
 * runs only as a task, and asks for a clarification inside it when `ambiguous`), on the machine's
 * Redis: a task created on one replica is polled, answered and cancelled through another; another
 * caller is not let in through the hop; once the owner is killed, its tasks are told lost; and an
 * owner told SIGTERM serves its tasks to their ends (within a bound) before it exits.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { forwardedIn, startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { call, createTask, pollUntil, TASK_TOOL as TOOL, TERMINAL } from '../helpers/fleetTasks.ts';

type Obj = Record<string, any>;

const tasks = suite('tasks on a fleet of serve --fleet replicas (server-everything)');
let fleet: SpecFleet;
let a: Replica;
let b: Replica;

tasks.before(async () => {
  fleet = specFleet();
  [a, b] = await Promise.all([startReplica(fleet), startReplica(fleet)]);
});

tasks.after(async () => {
  await Promise.all([a, b].filter(Boolean).map((r) => stopReplica(r)));
  await fleet?.end();
});

tasks('should serve a task created on one replica through another: polled, its question answered, completed', async () => {
  const created = await call(a.url, 'tools/call', { name: TOOL, arguments: { topic: 'python', ambiguous: true } });
  const task = created.message['result'] as Obj;
  assert.is(task['resultType'], 'task', JSON.stringify(created.message));
  const taskId = task['taskId'] as string;
  const before = await forwardedIn([a, b]);
  const asking = await pollUntil(b.url, taskId, ['input_required', 'completed', 'failed', 'cancelled']);
  assert.is(asking['result']?.['status'], 'input_required', JSON.stringify(asking));
  const [key] = Object.keys(asking['result']['inputRequests'] as Obj);
  const update = await call(b.url, 'tasks/update', {
    taskId,
    inputResponses: { [key!]: { action: 'accept', content: { interpretation: 'snake' } } },
  });
  assert.equal(update.message['result'], { resultType: 'complete' }, JSON.stringify(update.message));
  const done = await pollUntil(b.url, taskId, ['completed', 'failed', 'cancelled']);
  assert.is(done['result']?.['status'], 'completed', JSON.stringify(done));
  assert.match(JSON.stringify(done['result']['result']), /snake/);
  assert.ok((await forwardedIn([a, b])) > before, 'the requests reached the owner through the hop');
});

tasks('should let no other caller at a task through another replica, and cancel it for its own', async () => {
  const created = await call(b.url, 'tools/call', { name: TOOL, arguments: { topic: 'rust' } });
  const taskId = created.message['result']?.['taskId'] as string;
  assert.type(taskId, 'string', JSON.stringify(created.message));
  const never = `${taskId.split('.')[0]}.00000000-0000-4000-8000-000000000000`;
  const stranger = await call(a.url, 'tasks/get', { taskId }, 'mallory');
  const unknown = await call(a.url, 'tasks/get', { taskId: never }, 'mallory');
  assert.is(stranger.message['error']?.['code'], -32602, JSON.stringify(stranger.message));
  assert.is(
    String(stranger.message['error']?.['message']).replace(taskId, '<id>'),
    String(unknown.message['error']?.['message']).replace(never, '<id>'),
    'another caller learns no more than of an id that never was',
  );
  const cancelled = await call(a.url, 'tasks/cancel', { taskId });
  assert.equal(cancelled.message['result'], { resultType: 'complete' }, JSON.stringify(cancelled.message));
  const after = await pollUntil(a.url, taskId, ['cancelled', 'completed', 'failed']);
  assert.is(after['result']?.['status'], 'cancelled', JSON.stringify(after));
});

tasks('should tell a task lost, within seconds, once the replica that ran it is killed', async () => {
  const created = await call(a.url, 'tools/call', { name: TOOL, arguments: { topic: 'go' } });
  const taskId = created.message['result']?.['taskId'] as string;
  assert.type(taskId, 'string', JSON.stringify(created.message));
  const exited = new Promise((r) => a.child.once('exit', r));
  a.child.kill('SIGKILL');
  await exited;
  const started = Date.now();
  const lost = await call(b.url, 'tasks/get', { taskId });
  const error = lost.message['error'] as Obj | undefined;
  assert.is(error?.['code'], -32602, JSON.stringify(lost.message));
  assert.match(String(error?.['message']), /lost/);
  assert.is(error?.['data']?.['taskId'], taskId);
  assert.ok(Date.now() - started < 10_000, `told after ${Date.now() - started} ms`);
});

tasks.run();

const draining = suite('a replica told SIGTERM while its tasks run (drain)');
let stays: Replica;

draining.before(async () => {
  fleet = specFleet();
  stays = await startReplica(fleet);
});

draining.after(async () => {
  await stopReplica(stays);
  await fleet?.end();
});

/** Whether `replica` exits within `ms`. */
function exitsWithin(replica: Replica, ms: number): Promise<boolean> {
  if (replica.child.exitCode !== null || replica.child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    replica.child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

draining(
  'should serve its task to its end through another replica, its question answered, and exit only once its end is read',
  async () => {
    const owner = await startReplica(fleet);
    try {
      const taskId = await createTask(owner.url, { topic: 'python', ambiguous: true });
      owner.child.kill('SIGTERM');
      const exited = exitsWithin(owner, 60_000);
      const asking = await pollUntil(stays.url, taskId, ['input_required', ...TERMINAL]);
      assert.is(asking['result']?.['status'], 'input_required', JSON.stringify(asking));
      const [key] = Object.keys(asking['result']['inputRequests'] as Obj);
      const update = await call(stays.url, 'tasks/update', {
        taskId,
        inputResponses: { [key!]: { action: 'accept', content: { interpretation: 'snake' } } },
      });
      assert.equal(update.message['result'], { resultType: 'complete' }, JSON.stringify(update.message));
      const done = await pollUntil(stays.url, taskId, [...TERMINAL]);
      assert.is(done['result']?.['status'], 'completed', JSON.stringify(done));
      assert.match(JSON.stringify(done['result']['result']), /snake/);
      assert.match(owner.log(), /draining: .*1 task\(s\) to finish/);
      assert.ok(await exited, 'the drained replica exits once its task ended and was read');
      assert.is(owner.child.exitCode, 0, owner.log());
    } finally {
      await stopReplica(owner);
    }
  },
);

draining('should wait for a task that does not end only as long as its bound, then exit and the task be told lost', async () => {
  const owner = await startReplica(fleet, ['--limit', 'task-drain-ms=1500']);
  try {
    const taskId = await createTask(owner.url, { topic: 'forever', ambiguous: true });
    const asking = await pollUntil(owner.url, taskId, ['input_required', ...TERMINAL]);
    assert.is(asking['result']?.['status'], 'input_required', 'the task waits for an answer it will never get');
    owner.child.kill('SIGTERM');
    assert.ok(await exitsWithin(owner, 30_000), 'the replica exits once the bound passed');
    const lost = await call(stays.url, 'tasks/get', { taskId });
    assert.is(lost.message['error']?.['code'], -32602, JSON.stringify(lost.message));
    assert.match(String(lost.message['error']?.['message']), /lost/);
  } finally {
    await stopReplica(owner);
  }
});

draining.run();
