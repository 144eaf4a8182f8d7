/**
 * The secret a fleet's replicas sign with: hops between them, their directory records, and the
 * scopes of the changes they tell each other. The first replica to start writes a random one in
 * Redis (SET NX: one wins) and every replica reads it. A replica keeps the last few it has seen:
 * it signs with the one Redis holds now and accepts any it knows. On every heartbeat it writes its
 * own again where Redis has none (a Redis restarted without persistence lost it) and takes on the
 * one Redis holds: replicas started before and after such a restart agree again within a
 * heartbeat, and what either signed meanwhile still verifies.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FleetKeys } from './fleetKeys.ts';
import type { FleetRedis } from './fleetRedis.ts';

/** Secrets kept able to verify, the current one included. */
const KEPT = 3;

/** The least time between two reads of Redis made because a signature did not verify. */
const RELOOK_MS = 100;

function decode(text: string | null): Buffer | undefined {
  const secret = text === null ? undefined : Buffer.from(text, 'base64');
  return secret?.length === 32 ? secret : undefined;
}

/** The secrets of one replica of a fleet. */
export class HopSecrets {
  readonly #redis: FleetRedis;
  readonly #key: string;
  /** Newest first: the first signs. */
  #ring: Buffer[];
  #lookedAt = 0;

  private constructor(redis: FleetRedis, key: string, first: Buffer) {
    this.#redis = redis;
    this.#key = key;
    this.#ring = [first];
  }

  /** The fleet's secret as Redis holds it, written first by this call where there is none. */
  static async agree(redis: FleetRedis, keys: FleetKeys): Promise<HopSecrets> {
    await redis.set(keys.hopSecret, randomBytes(32).toString('base64'), { NX: true });
    const secret = decode(await redis.get(keys.hopSecret));
    if (!secret) throw new Error("the fleet's hop secret in Redis is not 32 bytes");
    return new HopSecrets(redis, keys.hopSecret, secret);
  }

  /** The secret this replica signs with. */
  get current(): Buffer {
    return this.#ring[0]!;
  }

  /** The secrets a signature may have been made with, newest first. */
  get known(): readonly Buffer[] {
    return this.#ring;
  }

  /**
   * Writes the current secret again where Redis has none, and takes on the one Redis holds when
   * it is another (a replica that started while Redis had lost it wrote its own). True when the
   * current secret changed.
   */
  async refresh(): Promise<boolean> {
    this.#lookedAt = Date.now();
    await this.#redis.set(this.#key, this.current.toString('base64'), { NX: true });
    const held = decode(await this.#redis.get(this.#key));
    if (!held || held.equals(this.current)) return false;
    this.#ring = [held, ...this.#ring.filter((s) => !s.equals(held))].slice(0, KEPT);
    return true;
  }

  /**
   * Whether `signature` is `message` signed with a secret this replica knows; when none fits, the
   * secret Redis holds is read once (at most every 100 ms) and tried too.
   */
  async verify(message: string, signature: string): Promise<boolean> {
    if (this.#matches(message, signature)) return true;
    if (Date.now() - this.#lookedAt < RELOOK_MS) return false;
    const changed = await this.refresh().catch(() => false);
    return changed && this.#matches(message, signature);
  }

  /** `message` signed with the current secret (base64url). */
  sign(message: string): string {
    return signWith(this.current, message);
  }

  #matches(message: string, signature: string): boolean {
    const given = Buffer.from(signature);
    return this.#ring.some((secret) => {
      const expected = Buffer.from(signWith(secret, message));
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  }
}

/** `message` signed with `secret` (HMAC-SHA256, base64url). */
export function signWith(secret: Buffer, message: string): string {
  return createHmac('sha256', secret).update(message).digest('base64url');
}
