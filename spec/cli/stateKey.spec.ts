/**
 * `serve --state-key-file` / `--state-key-env`: one key, or a list for a rotation across a fleet
 * (one a line, the newest first): the first seals, every one opens, and each key is named by
 * itself, so replicas given the list in either state of a rotation open each other's states.
 */
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readStateKey } from '../../lib/cli/stateKey.ts';

const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('hex');

function keyring(text: string) {
  const read = readStateKey({ 'state-key-env': 'KEY' }, { KEY: text });
  if (!read.ok) throw new Error(read.message);
  assert.ok(read.value.given);
  return read.value.keyring;
}

const keys = suite('the requestState keys serve is given');

keys('should open, during a rotation, what a replica still on the old key sealed, and seal with the new key', () => {
  const before = keyring(OLD);
  const during = keyring(`${NEW}\n# the old key, until no state sealed with it is in use\n${OLD}\n`);
  const after = keyring(NEW);
  const sealedBefore = before.seal(new TextEncoder().encode('round 1'), 'aad');
  const opened = during.open(sealedBefore, 'aad');
  assert.ok(opened.ok && new TextDecoder().decode(opened.value) === 'round 1', 'the old key still opens');
  const sealedDuring = during.seal(new TextEncoder().encode('round 2'), 'aad');
  assert.ok(after.open(sealedDuring, 'aad').ok, 'sealed with the new key');
  assert.not.ok(before.open(sealedDuring, 'aad').ok, 'not with the old one');
  assert.is(during.ids.length, 2);
  assert.ok(during.ids.includes(after.ids[0]!) && during.ids.includes(before.ids[0]!), 'a key has one name wherever it is listed');
});

keys('should refuse a list longer than a keyring keeps, and a key that is not 32 bytes', () => {
  const four = Array.from({ length: 4 }, () => randomBytes(32).toString('base64')).join('\n');
  const long = readStateKey({ 'state-key-env': 'KEY' }, { KEY: four });
  assert.ok(!long.ok && /at most 3/.test(long.message));
  const short = readStateKey({ 'state-key-env': 'KEY' }, { KEY: `${NEW}\nc2hvcnQ=` });
  assert.ok(!short.ok && /32 bytes/.test(short.message));
});

keys.run();
