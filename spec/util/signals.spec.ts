import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Cancellation, DeadlineList, scope } from '../../lib/util/signals.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const deadlines = suite('DeadlineList');

deadlines('expires what is not removed, in due order, each once', async () => {
  const expired: string[] = [];
  const list = new DeadlineList<string>((item) => expired.push(item));
  list.add('late', 60);
  const gone = list.add('removed', 20);
  list.add('early', 10);
  list.add('middle', 30);
  list.remove(gone);
  list.remove(gone);
  assert.is(list.size, 3);
  await sleep(100);
  assert.equal(expired, ['early', 'middle', 'late']);
  assert.is(list.size, 0);
});

deadlines('a shorter deadline added after a longer one re-arms the timer earlier', async () => {
  const expired: number[] = [];
  const list = new DeadlineList<number>((item) => expired.push(item));
  list.add(1, 10_000);
  list.add(2, 15);
  await sleep(60);
  assert.equal(expired, [2]);
  assert.is(list.size, 1, 'the longer deadline is still listed');
});

deadlines('removing everything before the timer fires expires nothing, and keeps no timer alive', async () => {
  const expired: number[] = [];
  const list = new DeadlineList<number>((item) => expired.push(item));
  const live = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = live();
  const all = Array.from({ length: 1000 }, (_, i) => list.add(i, 20));
  assert.is(live(), before, 'the one timer is unreferenced');
  for (const d of all) list.remove(d);
  assert.is(list.size, 0);
  await sleep(50);
  assert.equal(expired, []);
});

deadlines('an item may add a new deadline while it expires', async () => {
  const expired: number[] = [];
  const list = new DeadlineList<number>((item) => {
    expired.push(item);
    if (item < 3) list.add(item + 1, 5);
  });
  list.add(1, 5);
  await sleep(80);
  assert.equal(expired, [1, 2, 3]);
});

deadlines.run();

const scopes = suite('scope');

scopes('follows its sources and times out', async () => {
  const source = new Cancellation();
  const a = scope([source]);
  source.abort();
  assert.ok(a.signal.aborted);
  assert.not.ok(a.timedOut);
  const b = scope([], 10);
  await sleep(40);
  assert.ok(b.signal.aborted);
  assert.ok(b.timedOut);
});

scopes.run();
