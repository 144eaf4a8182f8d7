/**
 * Sealing `requestState`: AES-256-GCM under a rotating keyring. The newest key seals; every key
 * still in the ring opens, so a rotation never breaks a round in flight; a retired key opens
 * nothing. The sealed text names its key and is URL-safe. What goes inside is the caller's business.
 * A text may carry a label in the clear after its sealed part (a fleet's replica that owns what the
 * text continues), bound to it as the AAD is: it can be read without the key, and a text whose
 * label was changed opens nowhere.
 *
 * A text that only names what the server holds itself (and keeps nothing the caller may not read)
 * is signed instead: its payload in the clear, with an HMAC-SHA256 under a key derived from the
 * same key, in the same shape of text. Signing costs a tenth of sealing (the cipher's setup is
 * most of a seal), and a signed text never opens as a sealed one, nor the other way round.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  randomBytes,
  randomFillSync,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { AdapterError } from '../core/errors.ts';
import { fail, ok, type Outcome } from '../core/outcome.ts';

/** One key: 32 bytes and a short id written into every state it seals. */
export interface StateKey {
  readonly id: string;
  readonly key: Uint8Array;
}

const PREFIX = 'mde1';
const ID = /^[A-Za-z0-9_-]{1,32}$/;
/** A label a sealed text may carry in the clear (a replica id). */
const LABEL = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether `text` can be a sealed text's label. */
export const isLabel = (text: string): boolean => LABEL.test(text);

/** What a text's AAD binds: the format, its key, the caller's `aad` and (after a newline, which neither holds) its label. */
const boundAad = (keyId: string, aad: string, label: string | undefined): Buffer =>
  Buffer.from(label === undefined ? `${PREFIX}.${keyId}.${aad}` : `${PREFIX}.${keyId}.${aad}\n${label}`);

/** Random bytes for the nonces, drawn a block at a time (one draw per nonce costs more than the seal's cipher setup). */
const NONCES = Buffer.alloc(12 * 256);
let nonceAt = NONCES.length;

/** A fresh random 96-bit nonce (its own copy). */
function nonce(): Buffer {
  if (nonceAt + 12 > NONCES.length) {
    randomFillSync(NONCES);
    nonceAt = 0;
  }
  const iv = Buffer.from(NONCES.subarray(nonceAt, nonceAt + 12));
  nonceAt += 12;
  return iv;
}

/** How many bytes of the HMAC a signed text keeps (128 bits, as the seal's tag). */
const MAC_BYTES = 16;

/** The signing key of each state key, derived once (HKDF-SHA256): never the sealing key itself. */
const signingKeys = new WeakMap<StateKey, KeyObject>();
function signingKey(key: StateKey): KeyObject {
  let derived = signingKeys.get(key);
  if (!derived) {
    derived = createSecretKey(Buffer.from(hkdfSync('sha256', key.key, new Uint8Array(0), `${PREFIX} signed state`, 32)));
    signingKeys.set(key, derived);
  }
  return derived;
}

/** The MAC of a signed text: over what its AAD binds (format, key, `aad`, label) and the payload. */
function mac(key: StateKey, aad: string, label: string | undefined, payload: Buffer): Buffer {
  return createHmac('sha256', signingKey(key))
    .update(boundAad(key.id, aad, label))
    .update(payload)
    .digest()
    .subarray(0, MAC_BYTES);
}

/** The parts of a text in this keyring's format (prefix, key id, body[, label]), or undefined. */
function partsOf(text: string): string[] | undefined {
  const parts = text.split('.');
  return (parts.length === 3 || parts.length === 4) &&
    parts[0] === PREFIX &&
    /^[A-Za-z0-9_-]+$/.test(parts[2]!) &&
    (parts.length === 3 || LABEL.test(parts[3]!))
    ? parts
    : undefined;
}

/** How many of the texts it sealed last a keyring remembers. */
const SEALED_REMEMBERED = 256;

/** What a signed text holds: its payload, and its label when it has one. */
export interface Signed {
  readonly payload: string;
  readonly label: string | undefined;
}

/** Why a sealed state did not open. */
export type OpenFailure = 'malformed' | 'unknown-key' | 'tampered';

/** A keyring for sealing and opening state. */
export class Keyring {
  #keys: StateKey[] = [];
  /**
   * The texts sealed last, oldest first, with what they sealed: most sealed states come back
   * within moments, and one of these opens without being deciphered again (deciphering costs
   * about what sealing does). Only the exact text, with the same `aad`, while the very key that
   * sealed it is in the ring: what opens this way is what deciphering would open.
   */
  readonly #sealed = new Map<string, { readonly key: StateKey; readonly aad: string; readonly plaintext: Uint8Array }>();
  /** The texts signed last, oldest first, with what they sign: the same shortcut for `verify`. */
  readonly #signed = new Map<string, { readonly key: StateKey; readonly aad: string; readonly verified: Signed }>();
  readonly #maxKeys: number;

  /** `keys`: newest last. `maxKeys`: how many keys stay able to open (older ones retire). */
  constructor(keys: readonly StateKey[] = [], options: { maxKeys?: number } = {}) {
    this.#maxKeys = options.maxKeys ?? 3;
    for (const k of keys) this.add(k);
    if (this.#keys.length === 0) this.add(Keyring.generate());
  }

  /** A fresh random key. */
  static generate(id = randomBytes(6).toString('base64url')): StateKey {
    return { id, key: randomBytes(32) };
  }

  /**
   * A key from configuration: 32 bytes as base64/base64url or 64 hex characters. A missing key
   * (`undefined`, as from an unset environment variable, or blank text) is a `config` error, like
   * one of the wrong length.
   */
  static parse(id: string, text: string | undefined): StateKey {
    const trimmed = text?.trim() ?? '';
    if (trimmed === '')
      throw new AdapterError(
        'config',
        `the requestState key ${JSON.stringify(id)} is missing (no text given: is its environment variable set?)`,
      );
    const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
    if (bytes.length !== 32) throw new AdapterError('config', `a requestState key must be 32 bytes (got ${bytes.length})`);
    return { id, key: bytes };
  }

  /** Makes `key` the sealing key; the oldest keys beyond `maxKeys` retire. */
  add(key: StateKey): void {
    if (!ID.test(key.id)) throw new AdapterError('config', `key id ${JSON.stringify(key.id)} must be 1–32 characters of [A-Za-z0-9_-]`);
    if (key.key.length !== 32) throw new AdapterError('config', 'a requestState key must be 32 bytes');
    this.#keys = [...this.#keys.filter((k) => k.id !== key.id), key].slice(-this.#maxKeys);
  }

  /** Rotates to a new random key. */
  rotate(): StateKey {
    const key = Keyring.generate();
    this.add(key);
    return key;
  }

  /** The keys that can still open, newest last (a fleet shares them through its Redis). */
  get keys(): readonly StateKey[] {
    return [...this.#keys];
  }

  /** Ids of the keys that can still open, newest last. */
  get ids(): readonly string[] {
    return this.#keys.map((k) => k.id);
  }

  /**
   * Seals bytes under the newest key, bound to `aad` (authenticated, not encrypted); `label`, when
   * given (1–64 of `[A-Za-z0-9_-]`), is written in the clear at the end of the text and bound too.
   */
  seal(plaintext: Uint8Array, aad: string, label?: string): string {
    if (label !== undefined && !LABEL.test(label))
      throw new TypeError(`a sealed text's label is 1 to 64 letters, digits, '_' or '-', not ${JSON.stringify(label)}`);
    const current = this.#keys[this.#keys.length - 1]!;
    const iv = nonce();
    const cipher = createCipheriv('aes-256-gcm', current.key, iv);
    cipher.setAAD(boundAad(current.id, aad, label));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const tag = cipher.getAuthTag();
    const sealed = `${PREFIX}.${current.id}.${Buffer.concat([iv, body, tag]).toString('base64url')}${label === undefined ? '' : `.${label}`}`;
    if (this.#sealed.size >= SEALED_REMEMBERED) this.#sealed.delete(this.#sealed.keys().next().value!);
    this.#sealed.set(sealed, { key: current, aad, plaintext });
    return sealed;
  }

  /**
   * The label a sealed text carries, read without opening it: `undefined` for a text without one,
   * or not in this keyring's format, or under a key this ring does not hold. Whether the label is
   * the one sealed is known only when the text is opened.
   */
  labelOf(sealed: string): string | undefined {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== PREFIX || !LABEL.test(parts[3]!)) return undefined;
    return this.#keys.some((k) => k.id === parts[1]) ? parts[3] : undefined;
  }

  /**
   * Opens a sealed state; a wrong key, a flipped byte or another `aad` fails. A text this keyring
   * sealed lately gives back the very bytes it was given to seal (treat them as read-only).
   */
  open(sealed: string, aad: string): Outcome<Uint8Array, OpenFailure> {
    const known = this.#sealed.get(sealed);
    if (known && known.aad === aad && this.#keys.includes(known.key)) return ok(known.plaintext);
    const read = this.#read(sealed, 12 + 16);
    if (!read.ok) return read;
    const { key, raw, label } = read.value;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, raw.subarray(0, 12));
      decipher.setAAD(boundAad(key.id, aad, label));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      return ok(Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]));
    } catch {
      return fail('tampered');
    }
  }

  /** The key a text in this ring's format names, its body decoded (of at least `min` bytes) and its label; or why not. */
  #read(text: string, min: number): Outcome<{ key: StateKey; raw: Buffer; label: string | undefined }, OpenFailure> {
    const parts = partsOf(text);
    if (!parts) return fail('malformed');
    const key = this.#keys.find((k) => k.id === parts[1]);
    if (!key) return fail('unknown-key');
    const raw = Buffer.from(parts[2]!, 'base64url');
    // Only the exact text we wrote: base64url tails with spare bits set would decode to the same bytes.
    if (raw.length < min || raw.toString('base64url') !== parts[2]) return fail('malformed');
    return ok({ key, raw, label: parts[3] });
  }

  /**
   * Signs `payload` under the newest key, bound to `aad` and `label` as `seal` binds them: a text
   * of the same shape, the payload readable by whoever holds the text. For what names a thing the
   * server keeps, never for what the caller may not read.
   */
  sign(payload: string, aad: string, label?: string): string {
    if (label !== undefined && !LABEL.test(label))
      throw new TypeError(`a signed text's label is 1 to 64 letters, digits, '_' or '-', not ${JSON.stringify(label)}`);
    const current = this.#keys[this.#keys.length - 1]!;
    const bytes = Buffer.from(payload);
    const body = Buffer.concat([bytes, mac(current, aad, label, bytes)]).toString('base64url');
    // Written out as one flat string: the text is held for as long as its call is parked (by the
    // caller, and by whatever it is answered through), and the pieces it is joined from would be
    // held with it.
    const signed = Buffer.from(`${PREFIX}.${current.id}.${body}${label === undefined ? '' : `.${label}`}`, 'latin1').toString('latin1');
    if (this.#signed.size >= SEALED_REMEMBERED) this.#signed.delete(this.#signed.keys().next().value!);
    this.#signed.set(signed, { key: current, aad, verified: { payload, label } });
    return signed;
  }

  /**
   * The payload (and label) of a text this ring signed under `aad` with a key it still holds; a
   * flipped byte, another key or `aad` fails. A text signed lately is known without its MAC being
   * computed again: only the exact text, with the same `aad`, while its key is in the ring.
   */
  verify(signed: string, aad: string): Outcome<Signed, OpenFailure> {
    const known = this.#signed.get(signed);
    if (known && known.aad === aad && this.#keys.includes(known.key)) return ok(known.verified);
    const read = this.#read(signed, MAC_BYTES + 1);
    if (!read.ok) return read;
    const { key, raw, label } = read.value;
    const payload = raw.subarray(0, raw.length - MAC_BYTES);
    if (!timingSafeEqual(raw.subarray(raw.length - MAC_BYTES), mac(key, aad, label, payload))) return fail('tampered');
    return ok({ payload: payload.toString('utf8'), label });
  }
}
