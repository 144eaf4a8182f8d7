import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InProcessUsedStates } from '../../lib/state/usedStates.ts';

const used = suite('InProcessUsedStates');

used('should take a state once and refuse it after', () => {
  const store = new InProcessUsedStates();
  assert.ok(store.claim('a', 1_000));
  assert.not.ok(store.claim('a', 1_000));
  assert.ok(store.claim('b', 1_000));
  assert.is(store.size, 2);
});

used('should stay within its bound, forgetting expired states first', () => {
  let now = 0;
  const store = new InProcessUsedStates({ max: 10, now: () => now });
  for (let i = 0; i < 10; i++) assert.ok(store.claim(`old-${i}`, 100));
  now = 200;
  for (let i = 0; i < 10; i++) assert.ok(store.claim(`new-${i}`, 1_000), 'room made by forgetting the expired');
  assert.ok(store.size <= 10);
});

used('should never let a forgotten state be used twice: the floor refuses what is as old', () => {
  const store = new InProcessUsedStates({ max: 10, now: () => 0 });
  for (let i = 0; i < 10; i++) assert.ok(store.claim(`s-${i}`, 100 + i));
  // Full of live states: the one nearest its expiry is forgotten, and the floor rises to it.
  assert.ok(store.claim('later', 500));
  assert.ok(store.size <= 10);
  assert.not.ok(store.claim('s-0', 100), 'forgotten, yet refused: it expires at or before the floor');
  assert.not.ok(store.claim('fresh-but-old', 100), 'any state expiring that early is refused');
  assert.ok(store.claim('fresh', 600));
  for (let i = 0; i < 1000; i++) store.claim(`bulk-${i}`, 1_000 + i);
  assert.ok(store.size <= 10, 'the bound holds under a flood');
});

used.run();
