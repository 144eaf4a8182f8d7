import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { InProcessParkedCalls } from '../../lib/state/parkedCalls.ts';

const parked = suite('InProcessParkedCalls');

parked('should hold, find and let go of calls by id', () => {
  const store = new InProcessParkedCalls<{ name: string }>();
  const a = { name: 'a' };
  store.put('a', a);
  store.put('b', { name: 'b' });
  assert.is(store.size, 2);
  assert.is(store.get('a'), a);
  assert.is(store.get('c'), undefined);
  store.delete('a');
  store.delete('a');
  store.delete('never');
  assert.is(store.get('a'), undefined);
  assert.equal(
    [...store.values()].map((c) => c.name),
    ['b'],
  );
});

parked('should be full at its bound, and have room again once a call leaves', () => {
  const store = new InProcessParkedCalls<number>({ max: 3 });
  assert.is(store.max, 3);
  for (let i = 0; i < 3; i++) {
    assert.not.ok(store.full);
    store.put(`c${i}`, i);
  }
  assert.ok(store.full);
  store.delete('c0');
  assert.not.ok(store.full);
});

parked('should park a call again under its id without counting it twice', () => {
  const store = new InProcessParkedCalls<number>({ max: 2 });
  store.put('a', 1);
  store.put('a', 2);
  assert.is(store.size, 1);
  assert.is(store.get('a'), 2);
  assert.not.ok(store.full);
});

parked('should take back a call already answering rounds even when full', () => {
  const store = new InProcessParkedCalls<number>({ max: 1 });
  store.put('newcomer', 1);
  assert.ok(store.full);
  store.put('between-rounds', 2);
  assert.is(store.get('between-rounds'), 2, 'a call between rounds never loses its place');
});

parked('should refuse every new call with a bound of zero, and default to 10,000', () => {
  assert.ok(new InProcessParkedCalls({ max: 0 }).full);
  assert.is(new InProcessParkedCalls().max, 10_000);
});

parked.run();
