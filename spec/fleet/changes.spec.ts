/**
 * FleetChanges on the machine's Redis: a change reported over and over while the same is on its
 * way is sent once more after it, not once per report (a chatty server cannot fill a replica's
 * memory or the fleet's Redis with copies of "the list changed"); different changes all arrive;
 * the last report of a burst is never lost.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FleetChanges } from '../../lib/fleet/changes.ts';
import { HopSecrets } from '../../lib/fleet/hopSecrets.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';

/** What a replica's changes are made of: its own connection, the fleet's keys, its id and the fleet's secrets. */
async function changesOn(fleet: SpecFleet, id: string): Promise<ConstructorParameters<typeof FleetChanges>> {
  const redis = await fleet.client();
  return [redis, fleet.keys, id, await HopSecrets.agree(redis, fleet.keys)];
}
const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' } as const;

const changes = suite('FleetChanges');
let fleet: SpecFleet;
changes.before.each(() => {
  fleet = specFleet();
});
changes.after.each(async () => {
  await fleet.end();
});

/** Waits until `done` holds, up to `ms`. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await new Promise((r) => setTimeout(r, 10));
  return done();
}

changes('should send a change reported 20,000 times while the same is on its way a few times, the last after the burst', async () => {
  const publisherRedis = await fleet.client();
  let published = 0;
  const publish = publisherRedis.publish.bind(publisherRedis);
  (publisherRedis as { publish: typeof publish }).publish = ((...args: Parameters<typeof publish>) => {
    published++;
    return publish(...args);
  }) as typeof publish;
  const a = new FleetChanges(publisherRedis, fleet.keys, 'a', await HopSecrets.agree(publisherRedis, fleet.keys));
  const b = new FleetChanges(...(await changesOn(fleet, 'b')));
  const heard: string[] = [];
  await b.subscribe((scope, notification) => heard.push(`${scope} ${notification.method}`));
  for (let i = 0; i < 20_000; i++) a.publish('alice', LIST_CHANGED);
  assert.ok(published <= 2, `sent ${published} times while the first was on its way`);
  assert.ok(await until(() => heard.length >= 2, 5000), `heard ${heard.length}`);
  await new Promise((r) => setTimeout(r, 200));
  assert.is(heard.length, 2, 'the first, and one more for all the reports after it');
  assert.ok(heard.every((h) => h === `${a.hash('alice')} notifications/tools/list_changed`));
  await a.close();
  await b.close();
});

changes('should send every different change, each scope its own', async () => {
  const a = new FleetChanges(...(await changesOn(fleet, 'a')));
  const b = new FleetChanges(...(await changesOn(fleet, 'b')));
  const heard: string[] = [];
  await b.subscribe((scope, notification) => heard.push(`${scope} ${notification.method} ${JSON.stringify(notification.params ?? {})}`));
  for (const who of ['alice', 'bob']) {
    a.publish(who, LIST_CHANGED);
    a.publish(who, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///one' } });
    a.publish(who, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///two' } });
  }
  assert.ok(await until(() => heard.length >= 6, 5000), JSON.stringify(heard));
  assert.is(new Set(heard).size, 6, JSON.stringify(heard));
  await a.close();
  await b.close();
});

changes.run();
