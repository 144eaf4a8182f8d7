/**
 * Sealing `requestState`: AES-256-GCM under a rotating keyring. The newest key seals; every key
 * still in the ring opens, so a rotation never breaks a round in flight; a retired key opens
 * nothing. The sealed text names its key and is URL-safe. What goes inside is the caller's business.
 * A text may carry a label in the clear after its sealed part (a fleet's replica that owns what the
 * text continues), bound to it as the AAD is: it can be read without the key, and a text whose
 * label was changed opens nowhere.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomFillSync } from 'node:crypto';
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
}
