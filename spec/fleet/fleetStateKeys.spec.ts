import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FleetStateKeys } from '../../lib/fleet/fleetStateKeys.ts';
import { Keyring } from '../../lib/state/keyring.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';

const keys = suite('FleetStateKeys (real Redis)');
let fleet: SpecFleet;
keys.before.each(() => {
  fleet = specFleet();
});
keys.after.each(async () => {
  await fleet.end();
});

const AAD = 'spec';

keys('should agree on one key when several replicas start at once', async () => {
  const clients = await Promise.all([1, 2, 3, 4, 5].map(() => fleet.client()));
  const agreed = await Promise.all(clients.map((c) => new FleetStateKeys(c, fleet.keys).agree()));
  assert.is(agreed.filter((a) => a.created).length, 1, 'one replica wrote the first key');
  const ids = new Set(agreed.map((a) => a.keys.map((k) => k.id).join(',')));
  assert.is(ids.size, 1, 'all read the same list');
  assert.is(agreed[0]!.keys.length, 1);
  // What one seals, another opens.
  const sealer = new Keyring(agreed[0]!.keys);
  const opener = new Keyring(agreed[4]!.keys);
  const sealed = sealer.seal(new TextEncoder().encode('state'), AAD);
  const opened = opener.open(sealed, AAD);
  assert.ok(opened.ok && new TextDecoder().decode(opened.value) === 'state');
});

keys('should carry a rotation to every replica, which still opens what the old key sealed', async () => {
  const [a, b] = await Promise.all([fleet.client(), fleet.client()]);
  const onA = new FleetStateKeys(a, fleet.keys);
  const onB = new FleetStateKeys(b, fleet.keys);
  const ringA = new Keyring((await onA.agree()).keys);
  const ringB = new Keyring((await onB.agree()).keys);
  const old = ringB.seal(new TextEncoder().encode('old'), AAD);
  const fresh = await onA.rotate();
  await onA.refresh(ringA);
  await onB.refresh(ringB);
  assert.is(ringA.ids.at(-1), fresh.id, 'A seals with the new key');
  assert.is(ringB.ids.at(-1), fresh.id, 'B seals with the new key');
  assert.ok(ringA.open(old, AAD).ok, 'a state sealed before the rotation still opens');
  const sealedNew = ringB.seal(new TextEncoder().encode('new'), AAD);
  assert.ok(ringA.open(sealedNew, AAD).ok);
});

keys('should keep three keys: a fourth rotation retires the first', async () => {
  const a = await fleet.client();
  const onA = new FleetStateKeys(a, fleet.keys);
  const first = (await onA.agree()).keys[0]!;
  for (let i = 0; i < 3; i++) await onA.rotate();
  const now = await onA.read();
  assert.is(now.length, 3);
  assert.not.ok(now.some((k) => k.id === first.id));
});

keys.run();
