import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdapterError } from '../../lib/core/errors.ts';
import { Keyring, type OpenFailure } from '../../lib/state/keyring.ts';

const AAD = 'requestState';
const PLAINTEXT = new TextEncoder().encode(JSON.stringify({ c: 'call-1', p: 'alice', m: 'tools/call', r: 1 }));

/** The three parts of a sealed state, and its binary part decoded. */
function split(sealed: string): { prefix: string; id: string; raw: Buffer } {
  const [prefix, id, body] = sealed.split('.') as [string, string, string];
  return { prefix, id, raw: Buffer.from(body, 'base64url') };
}

function join(prefix: string, id: string, raw: Uint8Array): string {
  return `${prefix}.${id}.${Buffer.from(raw).toString('base64url')}`;
}

function flipBit(raw: Buffer, bit: number): Buffer {
  const copy = Buffer.from(raw);
  copy[bit >> 3]! ^= 1 << (bit & 7);
  return copy;
}

function failure(ring: Keyring, sealed: string, aad = AAD): OpenFailure | 'opened' {
  const opened = ring.open(sealed, aad);
  return opened.ok ? 'opened' : opened.error;
}

const configError = (e: unknown) => e instanceof AdapterError && e.code === 'config';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

const k = suite('Keyring');

k('should open what it sealed, under the same aad', () => {
  const ring = new Keyring();
  const sealed = ring.seal(PLAINTEXT, AAD);
  const opened = ring.open(sealed, AAD);
  assert.ok(opened.ok);
  if (opened.ok) assert.is(text(opened.value), text(PLAINTEXT));
});

k('should write a URL-safe state that names its key and hides the plaintext', () => {
  const ring = new Keyring([{ id: 'k1', key: randomBytes(32) }]);
  const sealed = ring.seal(PLAINTEXT, AAD);
  assert.match(sealed, /^mde1\.k1\.[A-Za-z0-9_-]+$/);
  assert.not.ok(sealed.includes('alice'));
  assert.not.ok(split(sealed).raw.includes(Buffer.from('alice')));
  assert.is(split(sealed).raw.length, 12 + PLAINTEXT.length + 16);
});

k('should seal the same plaintext to a different state every time (random IV)', () => {
  const ring = new Keyring();
  const states = new Set(Array.from({ length: 50 }, () => ring.seal(PLAINTEXT, AAD)));
  assert.is(states.size, 50);
  const ivs = new Set([...states].map((s) => split(s).raw.subarray(0, 12).toString('hex')));
  assert.is(ivs.size, 50);
  for (const s of states) assert.ok(ring.open(s, AAD).ok);
});

k('should refuse a state with any single bit flipped in the IV, the body or the tag', () => {
  const ring = new Keyring();
  const sealed = ring.seal(PLAINTEXT, AAD);
  const { prefix, id, raw } = split(sealed);
  const regions = { iv: [0, 12], body: [12, raw.length - 16], tag: [raw.length - 16, raw.length] } as const;
  for (const [region, [from, to]] of Object.entries(regions)) {
    for (let bit = from * 8; bit < to * 8; bit++) {
      assert.is(failure(ring, join(prefix, id, flipBit(raw, bit))), 'tampered', `${region} bit ${bit} flipped`);
    }
  }
  assert.is(failure(ring, sealed), 'opened');
});

k('should refuse a state whose key id was altered', () => {
  const ring = new Keyring([
    { id: 'keyA', key: randomBytes(32) },
    { id: 'keyB', key: randomBytes(32) },
  ]);
  const sealed = ring.seal(PLAINTEXT, AAD);
  const { prefix, id, raw } = split(sealed);
  assert.is(id, 'keyB');
  // Each bit of the id flipped: another id (unknown, or not even a valid one).
  const idBytes = Buffer.from(id);
  for (let bit = 0; bit < idBytes.length * 8; bit++) {
    const altered = flipBit(idBytes, bit).toString('latin1');
    assert.is.not(failure(ring, `${prefix}.${altered}.${parts(sealed)[2]}`), 'opened', `id bit ${bit} flipped`);
  }
  // Renamed to the other key that is in the ring: its key does not open it.
  assert.is(failure(ring, join(prefix, 'keyA', raw)), 'tampered');
  // A flipped prefix is not ours at all.
  assert.is(failure(ring, `mde2.${id}.${parts(sealed)[2]}`), 'malformed');
});

function parts(sealed: string): [string, string, string] {
  return sealed.split('.') as [string, string, string];
}

k('should refuse a state whose text differs from what it sealed in any character', () => {
  const ring = new Keyring([{ id: 'k1', key: randomBytes(32) }]);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  // Enough plaintext lengths to cover every base64url tail (0, 1 and 2 spare bytes).
  for (const extra of [0, 1, 2]) {
    const sealed = ring.seal(new Uint8Array(PLAINTEXT.length + extra).fill(65), AAD);
    const body = parts(sealed)[2];
    for (let i = 0; i < body.length; i++) {
      for (const c of alphabet) {
        if (c === body[i]) continue;
        const altered = `mde1.k1.${body.slice(0, i)}${c}${body.slice(i + 1)}`;
        assert.is.not(failure(ring, altered), 'opened', `character ${i} of ${body.length} changed to ${c} (plaintext +${extra})`);
      }
    }
  }
});

k('should refuse a truncated state, however short', () => {
  const ring = new Keyring();
  const sealed = ring.seal(PLAINTEXT, AAD);
  const { prefix, id, raw } = split(sealed);
  for (let n = 0; n < raw.length; n++)
    assert.is.not(failure(ring, join(prefix, id, raw.subarray(0, n))), 'opened', `${n} of ${raw.length} bytes`);
  for (let n = 0; n < raw.length; n++)
    assert.is.not(failure(ring, join(prefix, id, raw.subarray(raw.length - n))), 'opened', `last ${n} of ${raw.length} bytes`);
  assert.is(failure(ring, join(prefix, id, raw.subarray(0, 27))), 'malformed');
  assert.is.not(failure(ring, sealed.slice(0, sealed.length - 1)), 'opened');
  assert.is(failure(ring, `${prefix}.${id}`), 'malformed');
  assert.is(failure(ring, `${prefix}.${id}.`), 'malformed');
  assert.is(failure(ring, ''), 'malformed');
});

k('should refuse garbage and states with extra parts', () => {
  const ring = new Keyring();
  const sealed = ring.seal(PLAINTEXT, AAD);
  for (const garbage of [
    'garbage',
    'a.b.c',
    'mde1..',
    `${sealed}.x`,
    `x.${sealed}`,
    sealed.replace(/\.([^.]*)$/, '.$1=='),
    sealed.replace(/\.([^.]*)$/, '.$1 '),
    `${parts(sealed)[0]}.${parts(sealed)[1]}.${parts(sealed)[2]}+/`,
  ]) {
    assert.is.not(failure(ring, garbage), 'opened', garbage);
  }
});

k('should refuse a state opened under another aad', () => {
  const ring = new Keyring();
  const sealed = ring.seal(PLAINTEXT, AAD);
  assert.is(failure(ring, sealed, 'somethingElse'), 'tampered');
  assert.is(failure(ring, sealed, ''), 'tampered');
  assert.is(failure(ring, sealed, `${AAD} `), 'tampered');
  assert.is(failure(ring, sealed), 'opened');
});

k('should refuse a state sealed under a key it does not hold', () => {
  const ours = new Keyring([{ id: 'ours', key: randomBytes(32) }]);
  const theirs = new Keyring([{ id: 'theirs', key: randomBytes(32) }]);
  assert.is(failure(ours, theirs.seal(PLAINTEXT, AAD)), 'unknown-key');
  // Same id, different key material: refused as tampered, never opened.
  const impostor = new Keyring([{ id: 'ours', key: randomBytes(32) }]);
  assert.is(failure(ours, impostor.seal(PLAINTEXT, AAD)), 'tampered');
});

k('should open a state sealed under an older key while that key is in the ring, and refuse it once it retires', () => {
  const ring = new Keyring([], { maxKeys: 3 });
  const first = ring.ids[0]!;
  const old = ring.seal(PLAINTEXT, AAD);
  assert.is(split(old).id, first);
  const second = ring.rotate();
  assert.is(split(ring.seal(PLAINTEXT, AAD)).id, second.id, 'the newest key seals');
  ring.rotate();
  assert.equal(ring.ids.length, 3);
  assert.ok(ring.open(old, AAD).ok, 'still in the ring (3 of 3)');
  ring.rotate();
  assert.not.ok(ring.ids.includes(first));
  assert.is(failure(ring, old), 'unknown-key');
});

k('should keep only the newest maxKeys keys given at construction, the last one sealing', () => {
  const keys = ['a', 'b', 'c', 'd'].map((id) => ({ id, key: randomBytes(32) }));
  const ring = new Keyring(keys, { maxKeys: 2 });
  assert.equal(ring.ids, ['c', 'd']);
  assert.is(split(ring.seal(PLAINTEXT, AAD)).id, 'd');
  const fromA = new Keyring([keys[0]!]).seal(PLAINTEXT, AAD);
  assert.is(failure(ring, fromA), 'unknown-key');
  const fromC = new Keyring([keys[2]!]).seal(PLAINTEXT, AAD);
  assert.is(failure(ring, fromC), 'opened');
});

k('should retire a key after a single rotation when maxKeys is 1', () => {
  const ring = new Keyring([], { maxKeys: 1 });
  const old = ring.seal(PLAINTEXT, AAD);
  ring.rotate();
  assert.is(failure(ring, old), 'unknown-key');
  assert.is(failure(ring, ring.seal(PLAINTEXT, AAD)), 'opened');
});

k('should parse a 32-byte key given as base64, base64url or hex', () => {
  const bytes = randomBytes(32);
  for (const encoded of [
    bytes.toString('base64'),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    `  ${bytes.toString('base64')}\n`,
  ]) {
    const key = Keyring.parse('cfg', encoded);
    assert.is(key.id, 'cfg');
    assert.ok(Buffer.from(key.key).equals(bytes), encoded);
  }
  const ring = new Keyring([Keyring.parse('cfg', bytes.toString('hex'))]);
  const other = new Keyring([Keyring.parse('cfg', bytes.toString('base64'))]);
  assert.ok(other.open(ring.seal(PLAINTEXT, AAD), AAD).ok, 'the same key whichever way it was written');
});

k('should reject a configured key that is not 32 bytes', () => {
  for (const n of [0, 1, 16, 24, 31, 33, 48, 64]) {
    const bytes = randomBytes(n);
    for (const encoded of [bytes.toString('base64'), bytes.toString('hex')]) {
      assert.throws(() => Keyring.parse('cfg', encoded), configError, `${n} bytes as ${encoded}`);
    }
  }
  assert.throws(() => Keyring.parse('cfg', randomBytes(32).toString('hex').slice(1)), configError, '63 hex digits');
});

k('should reject a missing key (an unset variable) with the same config error, saying it is missing', () => {
  for (const missing of [undefined, '', '  \n']) {
    let thrown: unknown;
    try {
      Keyring.parse('k1', missing);
    } catch (e) {
      thrown = e;
    }
    assert.ok(configError(thrown), `${JSON.stringify(missing)}: ${String(thrown)}`);
    assert.match((thrown as Error).message, /missing/, JSON.stringify(missing));
    assert.match((thrown as Error).message, /k1/, JSON.stringify(missing));
  }
});

k('should reject keys of the wrong size and ids that cannot travel in a state', () => {
  assert.throws(() => new Keyring([{ id: 'short', key: randomBytes(16) }]), configError);
  for (const id of ['', 'has.dot', 'has space', 'x'.repeat(33)])
    assert.throws(() => new Keyring([{ id, key: randomBytes(32) }]), configError, JSON.stringify(id));
});

k('should open a text it sealed lately only as deciphering it would: the same aad, the very key that sealed it still in the ring', () => {
  const keyring = new Keyring([Keyring.generate('k1')]);
  const sealed = keyring.seal(PLAINTEXT, AAD);
  const twin = new Keyring([{ id: 'k1', key: new Uint8Array(32) }]);
  assert.equal(keyring.open(sealed, 'other'), { ok: false, error: 'tampered' });
  const opened = keyring.open(sealed, AAD);
  assert.ok(opened.ok);
  if (opened.ok) assert.equal(Buffer.from(opened.value), Buffer.from(PLAINTEXT));
  // The id k1 again, with other bytes: the key that sealed the text has left the ring.
  keyring.add({ id: 'k1', key: randomBytes(32) });
  assert.equal(keyring.open(sealed, AAD), { ok: false, error: 'tampered' });
  assert.equal(twin.open(sealed, AAD), { ok: false, error: 'tampered' });
});

k('should carry a label in the clear, read without opening, and bound to the text', () => {
  const key = { id: 'k1', key: randomBytes(32) };
  const sealer = new Keyring([key]);
  const sealed = sealer.seal(PLAINTEXT, AAD, 'replica_A-1');
  assert.match(sealed, /^mde1\.k1\.[A-Za-z0-9_-]+\.replica_A-1$/);
  // Another replica of the fleet (same keys, nothing remembered) reads the label and opens the text.
  const other = new Keyring([key]);
  assert.is(other.labelOf(sealed), 'replica_A-1');
  assert.is(failure(other, sealed), 'opened');
  // No label, an unknown key, or not this format: no label read.
  assert.is(other.labelOf(sealer.seal(PLAINTEXT, AAD)), undefined);
  assert.is(new Keyring().labelOf(sealed), undefined);
  assert.is(other.labelOf('mde2.k1.AAAA.replica'), undefined);
  assert.throws(
    () => sealer.seal(PLAINTEXT, AAD, 'has.dot'),
    (e: unknown) => e instanceof TypeError,
  );
});

k('attack: a label changed, taken off or put on makes the text open nowhere', () => {
  const key = { id: 'k1', key: randomBytes(32) };
  const sealer = new Keyring([key]);
  const other = new Keyring([key]);
  const sealed = sealer.seal(PLAINTEXT, AAD, 'owner-a');
  const body = sealed.slice(0, sealed.lastIndexOf('.'));
  for (const altered of [`${body}.owner-b`, body, `${sealer.seal(PLAINTEXT, AAD)}.owner-a`]) {
    assert.is(failure(other, altered), 'tampered', altered);
    // The keyring that sealed it remembers only the exact text.
    assert.is(failure(sealer, altered), 'tampered', altered);
  }
  assert.is(failure(other, `${body}.bad label`), 'malformed');
  assert.is(failure(other, `${sealed}.more`), 'malformed');
});

k.run();
