/**
 * Rotating the key a fleet agreed on (`fleet.rotateKey()`, real Redis): the replica that rotates
 * seals with the new key at once, the others pick it up at their next refresh, and states sealed
 * before the rotation keep opening everywhere meanwhile. A fleet given its key refuses.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { joinFleet, type Fleet } from '../../lib/fleet/fleet.ts';
import { Keyring } from '../../lib/state/keyring.ts';
import { REDIS_URL, specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';

const AAD = 'spec';
const seal = (f: Fleet, text: string) => f.keyring.seal(new TextEncoder().encode(text), AAD);
const opens = (f: Fleet, sealed: string) => f.keyring.open(sealed, AAD).ok;

const rotate = suite('rotating the fleet’s agreed key (real Redis)');
let spec: SpecFleet;
let joined: Fleet[] = [];
rotate.before.each(() => {
  spec = specFleet();
  joined = [];
});
rotate.after.each(async () => {
  await Promise.all(joined.map((f) => f.leave()));
  await spec.end();
});

rotate('should seal with the new key on every replica, the old states still opening', async () => {
  const a = await joinFleet({ redis: REDIS_URL, name: spec.name, keyRefreshMs: 100 });
  const b = await joinFleet({ redis: REDIS_URL, name: spec.name, keyRefreshMs: 100 });
  joined.push(a, b);
  assert.equal([a.keySource, b.keySource].sort(), ['agreed', 'created']);
  const before = seal(b, 'before');
  await a.rotateKey();
  assert.is(a.keyring.ids.length, 2);
  const afterA = seal(a, 'after');
  // B opens A's new states once it has refreshed, and A still opens B's old ones.
  for (let i = 0; i < 50 && !opens(b, afterA); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(opens(b, afterA), 'B picked up the new key');
  assert.ok(opens(a, before), 'a state sealed before the rotation still opens');
  const afterB = seal(b, 'after on B');
  assert.ok(opens(a, afterB));
});

rotate('should refuse to rotate a key given to every replica', async () => {
  const given = await joinFleet({ redis: REDIS_URL, name: spec.name, keyring: new Keyring([Keyring.generate()]) });
  joined.push(given);
  assert.is(given.keySource, 'given');
  await given.rotateKey().then(
    () => assert.unreachable('rotated a given key'),
    (e: Error) => assert.match(e.message, 'given to every replica'),
  );
});

rotate.run();
