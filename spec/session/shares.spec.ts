import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LimitRefusal } from '../../lib/util/limits.ts';
import { Shares, type Holding, type HoldingKind } from '../../lib/session/shares.ts';

/** Admits a holding and records its release in `released` (by name); the holding ends when released. */
function holder(shares: Shares, released: string[]) {
  return (name: string, principal: string, kind: HoldingKind = 'parked', releasable = () => true): Holding => {
    const admitted = shares.admit(kind, principal, () => released.push(name), releasable);
    assert.ok('end' in admitted, `${name} admitted`);
    return admitted as Holding;
  };
}

const shares = suite('Shares');

shares("should release a caller's own oldest parked call when it parks one over its quota", () => {
  const released: string[] = [];
  const s = new Shares({ budget: 100, parkedPerPrincipal: 3 });
  const hold = holder(s, released);
  hold('a1', 'alice');
  hold('a2', 'alice');
  hold('b1', 'bob');
  hold('a3', 'alice');
  assert.equal(released, []);
  hold('a4', 'alice');
  assert.equal(released, ['a1'], "alice's oldest gives way, bob's is untouched");
  assert.is(s.held('alice', 'parked'), 3);
  assert.is(s.held('bob'), 1);
});

shares('should give a newcomer room by releasing the oldest holding of the caller that holds the most', () => {
  const released: string[] = [];
  const s = new Shares({ budget: 4, parkedPerPrincipal: 16 });
  const hold = holder(s, released);
  hold('m1', 'mallory');
  hold('b1', 'bob');
  hold('m2', 'mallory');
  hold('m3', 'mallory');
  hold('c1', 'carol');
  assert.equal(released, ['m1'], 'mallory holds the most');
  assert.is(s.size, 4);
});

shares('should make the newcomer give way itself when it already holds as many as anyone', () => {
  const released: string[] = [];
  const s = new Shares({ budget: 3 });
  const hold = holder(s, released);
  hold('a1', 'alice');
  hold('b1', 'bob');
  hold('c1', 'carol');
  hold('a2', 'alice');
  assert.equal(released, ['a1'], 'alice is no more entitled than bob or carol');
  hold('d1', 'dave');
  assert.equal(released, ['a1', 'b1'], 'a newcomer takes the oldest of those tied for the most');
});

shares('should release a parked call before a listen, and skip what cannot be released now', () => {
  const released: string[] = [];
  const s = new Shares({ budget: 3 });
  const hold = holder(s, released);
  hold('listen', 'mallory', 'listen');
  hold('busy', 'mallory', 'parked', () => false);
  hold('parked', 'mallory', 'parked');
  hold('new', 'alice');
  assert.equal(released, ['parked'], 'the parked call goes first, not the busy one');
  hold('new2', 'bob');
  assert.equal(released, ['parked', 'listen'], 'then the listen');
  hold('new3', 'carol');
  assert.equal(released, ['parked', 'listen', 'new'], "mallory's busy call stays; the next in line gives way");
});

shares('should keep the listen open longest when listens give way, and let the newest go', () => {
  const released: string[] = [];
  const s = new Shares({ budget: 3 });
  const hold = holder(s, released);
  hold('long-lived', 'alice', 'listen');
  hold('s1', 'sybil-1', 'listen');
  hold('s2', 'sybil-2', 'listen');
  hold('s3', 'sybil-3', 'listen');
  hold('s4', 'sybil-4', 'listen');
  assert.equal(released, ['s2', 's3'], "a flood of newcomers' listens churns among themselves");
  assert.is(s.held('alice'), 1, 'the listen open longest stays');
});

shares('should refuse when nothing held can be released', () => {
  const s = new Shares({ budget: 2 });
  const hold = holder(s, []);
  hold('a', 'alice', 'parked', () => false);
  hold('b', 'bob', 'parked', () => false);
  const refused = s.admit('listen', 'carol', () => {});
  assert.not.ok('end' in refused);
  assert.is((refused as LimitRefusal).limit, 'sessions');
  assert.is((refused as LimitRefusal).scope, 'server');
  assert.is(s.size, 2);
});

shares('should count a holding out once when it ends, however often', () => {
  const s = new Shares({ budget: 2 });
  const h = holder(s, []);
  const a = h('a', 'alice');
  h('b', 'bob');
  a.end();
  a.end();
  assert.is(s.size, 1);
  assert.is(s.held('alice'), 0);
});

shares.run();
