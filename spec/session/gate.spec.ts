import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Acquaintances, Gate } from '../../lib/session/gate.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const gate = suite('Gate');

gate('should let `size` through at once and the others in turn, giving up on those that wait too long', async () => {
  const g = new Gate(2, { rest: false });
  const a = await g.enter(1000);
  const b = await g.enter(1000);
  assert.ok(a && b);
  const c = g.enter(1000);
  const late = await g.enter(50);
  assert.is(late, undefined, 'no place came within 50 ms');
  a!();
  assert.ok(await c, 'a freed place goes to the next in line');
  assert.is(g.held, 2);
});

gate('should rest a place twice as long as it was held before the next stranger gets it', async () => {
  const g = new Gate(1);
  const first = await g.enter(1000);
  await sleep(100);
  first!();
  const started = performance.now();
  const next = await g.enter(1000);
  const waited = performance.now() - started;
  assert.ok(next);
  assert.ok(waited >= 150, `waited ${Math.round(waited)} ms for the rest`);
  next!();
});

gate('should let a known caller take a resting place at once, and serve the known before strangers', async () => {
  const g = new Gate(1);
  const first = await g.enter(1000);
  await sleep(100);
  first!();
  const started = performance.now();
  const known = await g.enter(1000, undefined, () => true);
  assert.ok(performance.now() - started < 50, 'no rest for a known caller');
  const order: string[] = [];
  const stranger = g.enter(2000).then((r) => (order.push('stranger'), r));
  const friend = g.enter(2000, undefined, () => true).then((r) => (order.push('friend'), r));
  known!();
  (await friend)!();
  (await stranger)!();
  assert.equal(order, ['friend', 'stranger']);
});

gate("should keep a place for known callers beside the strangers'", async () => {
  const g = new Gate(1, { rest: false });
  const stranger = await g.enter(1000, undefined, () => false, 'stranger');
  const crowd = g.enter(300, undefined, () => false, 'crowd');
  const started = performance.now();
  const known = await g.enter(1000, undefined, () => true, 'friend');
  assert.ok(known && performance.now() - started < 50, 'the known caller did not wait for the stranger');
  assert.is(await crowd, undefined, "the crowd waits for the strangers' place");
  stranger!();
  known!();
});

gate('should serve, of the known callers waiting, the one whose last turn was longest ago first', async () => {
  const g = new Gate(1, { rest: false });
  const greedy = await g.enter(1000, undefined, () => true, 'greedy');
  const order: string[] = [];
  const more = g.enter(2000, undefined, () => true, 'greedy').then((r) => (order.push('greedy again'), r));
  const modest = g.enter(2000, undefined, () => true, 'modest').then((r) => (order.push('modest'), r));
  greedy!();
  (await modest)?.();
  (await more)?.();
  assert.equal(order, ['modest', 'greedy again']);
});

gate('should serve a waiting stranger first once it has become known', async () => {
  const g = new Gate(1, { rest: false });
  const holder = await g.enter(1000);
  let met = false;
  const order: string[] = [];
  const others = ['s1', 's2'].map((name) => g.enter(2000).then((r) => (order.push(name), r)));
  const friend = g.enter(2000, undefined, () => met).then((r) => (order.push('friend'), r));
  met = true;
  holder!();
  (await friend)?.();
  for (const o of others) (await o)?.();
  assert.equal(order[0], 'friend');
});

gate('should serve a long line in the order it came, each waiting its time plus the turns of those ahead', async () => {
  const g = new Gate(1, { rest: false });
  const holder = await g.enter(1000);
  const order: string[] = [];
  // Each waits 100 ms of its own; the turns ahead (a boot each, 150 ms here) come on top.
  const waiting = ['w1', 'w2', 'w3', 'w4'].map((name) =>
    g.enter(100).then((r) => {
      order.push(r ? name : `${name} refused`);
      setTimeout(() => r?.(), 150);
      return r;
    }),
  );
  await sleep(150);
  holder!();
  await Promise.all(waiting);
  assert.equal(order, ['w1', 'w2', 'w3', 'w4'], 'served first come first served, none refused though the last waited about 600 ms');
});

gate('should refuse a caller whose turn does not come within its time plus the turns ahead', async () => {
  const g = new Gate(1, { rest: false });
  const holder = await g.enter(1000);
  const started = performance.now();
  // No place is ever given back: the turn ahead is taken to last a boot (half a second before one was seen).
  assert.is(await g.enter(100), undefined);
  const waited = performance.now() - started;
  assert.ok(waited >= 550 && waited < 1500, `refused after ${Math.round(waited)} ms`);
  holder!();
});

gate('should not take a place given back unused (no boot made) for a fast boot', async () => {
  const g = new Gate(1, { rest: false });
  // Places given back at once: callers whose turn came and who found they had nothing to open.
  for (let i = 0; i < 8; i++) (await g.enter(1000))!();
  const holder = await g.enter(1000);
  const started = performance.now();
  // A caller with no time of its own left waits the turn ahead: a boot (half a second before one was seen), not ~0 ms.
  const next = g.enter(0);
  await sleep(300);
  holder!();
  const got = await next;
  assert.ok(got, `refused after ${Math.round(performance.now() - started)} ms: the boot estimate was pulled down by unused places`);
  got!();
});

/** A gate of one place whose boots lately took 100 ms: its estimate of a turn comes down to about 120 ms. */
async function gateOfFastBoots(): Promise<Gate> {
  const g = new Gate(1, { rest: false });
  for (let i = 0; i < 10; i++) {
    const place = await g.enter(1000);
    await sleep(100);
    place!();
  }
  return g;
}

gate('should keep serving a line whose boots run slower than lately, re-arming each wait as the line moves', async () => {
  const g = await gateOfFastBoots();
  // Now each boot takes 180 ms (a loaded machine): half again what the estimate says, yet the line moves.
  const holder = await g.enter(1000);
  const order: string[] = [];
  const waiting = ['w1', 'w2', 'w3', 'w4', 'w5'].map((name) =>
    g.enter(0).then((r) => {
      order.push(r ? name : `${name} refused`);
      setTimeout(() => r?.(), 180);
      return r;
    }),
  );
  setTimeout(() => holder!(), 180);
  await Promise.all(waiting);
  assert.equal(order, ['w1', 'w2', 'w3', 'w4', 'w5'], 'each served in turn while the line kept moving');
});

gate('should still refuse a caller once the line stalls, however long it was re-armed', async () => {
  const g = await gateOfFastBoots();
  const holder = await g.enter(1000);
  const first = g.enter(0);
  const second = g.enter(0);
  setTimeout(() => holder!(), 100);
  const got = await first;
  assert.ok(got, 'the line moved once');
  // The place is never given back again: the one behind is refused within a few turns' time.
  const started = performance.now();
  assert.is(await second, undefined);
  assert.ok(performance.now() - started < 2000, 'refused once the line stalled');
  got!();
});

gate('should rest places only while callers already served are at work', async () => {
  let working = false;
  const g = new Gate(1, { working: () => working });
  const first = await g.enter(1000);
  await sleep(100);
  first!();
  let started = performance.now();
  const idle = await g.enter(1000);
  assert.ok(idle && performance.now() - started < 50, 'nobody at work: no rest');
  await sleep(100);
  working = true;
  idle!();
  started = performance.now();
  const busy = await g.enter(1000);
  assert.ok(busy && performance.now() - started >= 150, `somebody at work: the place rested ${Math.round(performance.now() - started)} ms`);
  busy!();
});

gate.run();

const acquaintances = suite('Acquaintances');

acquaintances('should know a caller met lately, and forget the one met longest ago beyond its bound', () => {
  const a = new Acquaintances({ max: 2, ttlMs: 60_000 });
  a.met('alice');
  a.met('bob');
  assert.ok(a.knows('alice'));
  a.met('carol');
  assert.not.ok(a.knows('alice'), 'forgotten: the bound is two');
  assert.ok(a.knows('bob') && a.knows('carol'));
  assert.not.ok(new Acquaintances({ ttlMs: 0 }).knows('bob'));
});

acquaintances.run();
