/**
 * The requestState keys a fleet agrees on through Redis, when none is given to every replica: the
 * first replica to start writes a random key (SET NX semantics: one wins), every replica reads the
 * list and seals with its newest. Rotation appends a key (the oldest beyond the keyring's bound
 * retire); replicas refresh from the list and so open states any of them sealed. The trade-off,
 * said in the README: whoever can read the fleet's Redis can forge states, so Redis must be as
 * private as the key would be.
 */
import { Keyring, type StateKey } from '../state/keyring.ts';
import type { FleetKeys } from './fleetKeys.ts';
import type { FleetRedis } from './fleetRedis.ts';

/** Keys kept in the list, newest last: as many as a keyring keeps able to open. */
const KEPT = 3;

function encode(key: StateKey): string {
  return JSON.stringify({ id: key.id, key: Buffer.from(key.key).toString('base64') });
}

function decode(text: string): StateKey | undefined {
  try {
    const { id, key } = JSON.parse(text) as { id?: unknown; key?: unknown };
    if (typeof id !== 'string' || typeof key !== 'string') return undefined;
    return Keyring.parse(id, key);
  } catch {
    return undefined;
  }
}

/** The keys of one fleet. */
export class FleetStateKeys {
  readonly #redis: FleetRedis;
  readonly #list: string;

  constructor(redis: FleetRedis, keys: FleetKeys) {
    this.#redis = redis;
    this.#list = keys.stateKey;
  }

  /** The fleet's keys, newest last: the list as it is, or a first key this call wrote (`created`). */
  async agree(): Promise<{ keys: StateKey[]; created: boolean }> {
    const first = Keyring.generate();
    // One replica's first key wins: the list is created only where none exists.
    const created =
      (await this.#redis.eval(`if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], ARGV[1]) return 1 end return 0`, {
        keys: [this.#list],
        arguments: [encode(first)],
      })) === 1;
    return { keys: await this.read(), created };
  }

  /** The fleet's keys now, newest last. */
  async read(): Promise<StateKey[]> {
    const texts = await this.#redis.lRange(this.#list, -KEPT, -1);
    return texts.map(decode).filter((k): k is StateKey => k !== undefined);
  }

  /** Adds a fresh key for the whole fleet to seal with; the oldest beyond three retire. */
  async rotate(): Promise<StateKey> {
    const key = Keyring.generate();
    await this.#redis.multi().rPush(this.#list, encode(key)).lTrim(this.#list, -KEPT, -1).exec();
    return key;
  }

  /**
   * Brings `keyring` up to the fleet's list (new keys added in order, the newest sealing), and
   * writes back, as the list's oldest, the keys of `keyring` the list lacks: a Redis restarted
   * without persistence lost the list, and a replica started since then agreed on a key of its
   * own; states sealed before stay open on every replica, whichever started when.
   */
  async refresh(keyring: Keyring): Promise<void> {
    let keys = await this.read();
    const listed = new Set(keys.map((k) => k.id));
    const lacking = keyring.keys.filter((k) => !listed.has(k.id));
    if (lacking.length > 0) {
      // Oldest first, each pushed before those already listed: the list's newest keeps sealing.
      await this.#redis.eval(
        `for i = #ARGV, 1, -1 do local id = cjson.decode(ARGV[i]).id local present = false for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do if cjson.decode(v).id == id then present = true end end if not present then redis.call('LPUSH', KEYS[1], ARGV[i]) end end redis.call('LTRIM', KEYS[1], -${KEPT}, -1) return 1`,
        { keys: [this.#list], arguments: lacking.map(encode) },
      );
      keys = await this.read();
    }
    const known = new Set(keyring.ids);
    for (const key of keys) if (!known.has(key.id)) keyring.add(key);
  }
}
