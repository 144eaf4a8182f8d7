import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FleetDirectory } from '../../lib/fleet/directory.ts';
import { HopSecrets } from '../../lib/fleet/hopSecrets.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const directory = suite('FleetDirectory (real Redis)');
let fleet: SpecFleet;
directory.before.each(() => {
  fleet = specFleet();
});
directory.after.each(async () => {
  await fleet.end();
});

directory('should find every replica that joined, from any other replica', async () => {
  const [a, b, c] = await Promise.all([fleet.client(), fleet.client(), fleet.client()]);
  const dirs = [
    new FleetDirectory(a, fleet.keys, await HopSecrets.agree(a, fleet.keys)),
    new FleetDirectory(b, fleet.keys, await HopSecrets.agree(b, fleet.keys)),
    new FleetDirectory(c, fleet.keys, await HopSecrets.agree(c, fleet.keys)),
  ];
  try {
    await Promise.all(dirs.map((d, i) => d.join({ id: `r${i}`, advertise: `http://127.0.0.1:${4000 + i}` })));
    const seen = await dirs[2]!.replicas();
    assert.equal(seen.map((r) => r.id).sort(), ['r0', 'r1', 'r2']);
    const r0 = await dirs[1]!.lookup('r0');
    assert.is(r0?.advertise, 'http://127.0.0.1:4000');
    assert.is(r0?.ready, true);
    assert.is(await dirs[0]!.lookup('nobody'), undefined);
  } finally {
    await Promise.all(dirs.map((d) => d.leave()));
  }
});

directory('should keep a live replica listed past its TTL, and drop one whose heartbeat stopped', async () => {
  const [a, b] = await Promise.all([fleet.client(), fleet.client()]);
  const alive = new FleetDirectory(a, fleet.keys, await HopSecrets.agree(a, fleet.keys), { heartbeatMs: 50, ttlMs: 150 });
  const crashed = new FleetDirectory(b, fleet.keys, await HopSecrets.agree(b, fleet.keys), { heartbeatMs: 50, ttlMs: 150 });
  await alive.join({ id: 'alive', advertise: 'http://127.0.0.1:1' });
  await crashed.join({ id: 'crashed', advertise: 'http://127.0.0.1:2' });
  // A crash: the heartbeat stops, and nobody removes the record.
  await b.destroy();
  await sleep(400);
  try {
    assert.ok(await alive.lookup('alive'), 'refreshed by its heartbeat');
    assert.is(await alive.lookup('crashed'), undefined, 'gone with its TTL');
  } finally {
    await alive.leave();
    await crashed.leave();
  }
});

directory('should say when a replica drains, and remove it when it leaves', async () => {
  const [a, b] = await Promise.all([fleet.client(), fleet.client()]);
  const one = new FleetDirectory(a, fleet.keys, await HopSecrets.agree(a, fleet.keys));
  const other = new FleetDirectory(b, fleet.keys, await HopSecrets.agree(b, fleet.keys));
  await one.join({ id: 'one', advertise: 'http://127.0.0.1:1' });
  await one.setReady(false);
  assert.is((await other.lookup('one'))?.ready, false);
  await one.leave();
  await one.leave();
  assert.is(await other.lookup('one'), undefined);
  assert.equal(await other.replicas(), []);
});

directory('should ignore a record that is not one of ours', async () => {
  const a = await fleet.client();
  await a.set(fleet.keys.replica('odd'), '{"id":1}');
  await a.set(fleet.keys.replica('junk'), 'not json');
  const dir = new FleetDirectory(a, fleet.keys, await HopSecrets.agree(a, fleet.keys));
  assert.is(await dir.lookup('odd'), undefined);
  assert.is(await dir.lookup('junk'), undefined);
  assert.equal(await dir.replicas(), []);
});

directory.run();
