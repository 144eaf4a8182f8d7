import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { IdTable, KeyedTable } from '../../lib/util/idTable.ts';

const table = suite('IdTable');

table('should find, replace and remove entries by id', () => {
  const t = new IdTable<string>();
  t.set(1, 'one');
  t.set(2, 'two');
  t.set(1, 'uno');
  assert.is(t.size, 2);
  assert.is(t.get(1), 'uno');
  assert.is(t.get(2), 'two');
  assert.is(t.get(3), undefined);
  assert.ok(t.delete(1));
  assert.not.ok(t.delete(1));
  assert.is(t.get(1), undefined);
  assert.is(t.get(2), 'two');
  assert.is(t.size, 1);
});

table('should refuse ids that are not non-negative integers, and find nothing under them', () => {
  const t = new IdTable<string>();
  for (const bad of [-1, 1.5, Number.NaN, 2 ** 60]) assert.throws(() => t.set(bad, 'x'), /non-negative integers/);
  t.set(0, 'zero');
  assert.is(t.get(-1), undefined);
  assert.not.ok(t.delete(-1));
  assert.not.ok(t.delete(Number.NaN));
  assert.is(t.size, 1);
  assert.is(t.get(0), 'zero');
});

table('should keep every entry reachable past collisions and removals (against a Map, with ids that stay long)', () => {
  // Ids handed out in order, most leaving soon and in any order, some staying for thousands of
  // later ids (they share slots with the ids after them once the table wraps round).
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const t = new IdTable<number>();
  const reference = new Map<number, number>();
  let next = 0;
  for (let step = 0; step < 50_000; step++) {
    if (reference.size === 0 || random() < 0.52) {
      const id = next++;
      t.set(id, id * 10);
      reference.set(id, id * 10);
    } else {
      const ids = [...reference.keys()];
      // Mostly the oldest few (calls answered in order), now and then any.
      const id = random() < 0.8 ? ids[Math.floor(random() * Math.min(3, ids.length))]! : ids[Math.floor(random() * ids.length)]!;
      assert.ok(t.delete(id), `delete ${id}`);
      reference.delete(id);
    }
    if (step % 997 === 0) {
      assert.is(t.size, reference.size);
      for (const [id, value] of reference) assert.is(t.get(id), value, `get ${id} at step ${step}`);
      for (let probe = Math.max(0, next - 64); probe < next + 4; probe++)
        if (!reference.has(probe)) assert.is(t.get(probe), undefined, `no ${probe}`);
    }
  }
  assert.equal(
    t.values(),
    [...reference.keys()].sort((a, b) => a - b).map((id) => id * 10),
  );
});

table('should grow for many entries and shrink back as they leave, keeping the rest', () => {
  const t = new IdTable<number>();
  for (let id = 0; id < 10_000; id++) t.set(id, id);
  assert.is(t.size, 10_000);
  for (let id = 0; id < 10_000; id++) if (id % 1000 !== 0) t.delete(id);
  assert.is(t.size, 10);
  assert.equal(t.values(), [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000]);
  for (let id = 0; id < 10_000; id += 1000) assert.is(t.get(id), id);
  assert.is(t.get(1), undefined);
});

table('should list entries oldest id first, as a copy the caller may change the table under', () => {
  const t = new IdTable<string>();
  for (const id of [40, 3, 17, 16, 32]) t.set(id, `v${id}`);
  const listed = t.values();
  assert.equal(listed, ['v3', 'v16', 'v17', 'v32', 'v40']);
  for (const v of listed) t.delete(Number(v.slice(1)));
  assert.is(t.size, 0);
  assert.equal(t.values(), []);
});

table.run();

const keyed = suite('KeyedTable');

keyed('should behave as a Map of request ids, numbers and strings apart, listed in the order first set', () => {
  const t = new KeyedTable<string | number, string>();
  t.set(1, 'number one').set('1', 'string one').set('b', 'bee').set(1, 'number one again');
  assert.is(t.size, 3);
  assert.ok(t.has(1) && t.has('1') && !t.has(2));
  assert.is(t.get(1), 'number one again');
  assert.is(t.get('1'), 'string one');
  assert.equal(t.keys(), [1, '1', 'b']);
  assert.equal(t.values(), ['number one again', 'string one', 'bee']);
  assert.equal(t.entries(), [
    [1, 'number one again'],
    ['1', 'string one'],
    ['b', 'bee'],
  ]);
  assert.ok(t.delete('1'));
  assert.not.ok(t.delete('1'));
  assert.is(t.get('1'), undefined);
  t.set('1', 'back');
  assert.equal(t.keys(), [1, 'b', '1'], 'a key set again after its delete goes last, as in a Map');
  for (const key of t.keys()) t.delete(key);
  assert.is(t.size, 0);
  t.set('x', 'after').clear();
  assert.is(t.size, 0);
  assert.equal(t.values(), []);
});

keyed('should agree with a Map over a long run of keys that come and go', () => {
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const t = new KeyedTable<string | number, number>();
  const reference = new Map<string | number, number>();
  for (let step = 0; step < 20_000; step++) {
    const key = random() < 0.5 ? Math.floor(random() * 300) : `k${Math.floor(random() * 300)}`;
    if (random() < 0.55) {
      t.set(key, step);
      reference.set(key, step);
    } else assert.is(t.delete(key), reference.delete(key));
  }
  assert.equal(t.entries(), [...reference.entries()]);
});

keyed.run();
