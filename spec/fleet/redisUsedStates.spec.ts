import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RedisUsedStates } from '../../lib/fleet/redisUsedStates.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';

const used = suite('RedisUsedStates (real Redis)');
let fleet: SpecFleet;
used.before.each(() => {
  fleet = specFleet();
});
used.after.each(async () => {
  await fleet.end();
});

used('should let exactly one of several replicas take a state, even at the same moment', async () => {
  const clients = await Promise.all([1, 2, 3].map(() => fleet.client()));
  const stores = clients.map((c) => new RedisUsedStates(c, fleet.keys));
  const expiresAt = Date.now() + 60_000;
  for (let round = 0; round < 20; round++) {
    const taken = await Promise.all(stores.flatMap((s) => [s.claim(`state-${round}`, expiresAt), s.claim(`state-${round}`, expiresAt)]));
    assert.is(taken.filter(Boolean).length, 1, `state-${round}`);
  }
});

used('should forget a state once it has expired, and no sooner', async () => {
  const c = await fleet.client();
  const store = new RedisUsedStates(c, fleet.keys);
  const expiresAt = Date.now() + 200;
  assert.ok(await store.claim('s', expiresAt));
  const ttl = await c.pTTL(fleet.keys.usedState('s'));
  assert.ok(ttl > 0 && ttl <= 200, `lives until the state expires (${ttl} ms)`);
  assert.not.ok(await store.claim('s', expiresAt));
});

used.run();
