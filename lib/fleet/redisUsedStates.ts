/**
 * Single use of sealed states across a fleet: a state is taken with one SET NX that lives until
 * the state expires, so whichever replica a replay lands on, only the first use of a state is
 * served, even when two replicas get it at the same moment. The in-process store
 * (`state/usedStates.ts`) does the same for one replica.
 */
import type { UsedStates } from '../state/usedStates.ts';
import type { FleetKeys } from './fleetKeys.ts';
import type { FleetRedis } from './fleetRedis.ts';

/** The used states of a fleet. */
export class RedisUsedStates implements UsedStates {
  readonly #redis: FleetRedis;
  readonly #keys: FleetKeys;
  readonly #now: () => number;

  constructor(redis: FleetRedis, keys: FleetKeys, options: { now?: () => number } = {}) {
    this.#redis = redis;
    this.#keys = keys;
    this.#now = options.now ?? Date.now;
  }

  async claim(id: string, expiresAt: number): Promise<boolean> {
    // An expired state is never served, so it needs no entry; one that expires this millisecond still gets one.
    const ttl = Math.max(1, Math.ceil(expiresAt - this.#now()));
    return (await this.#redis.set(this.#keys.usedState(id), '1', { NX: true, PX: ttl })) === 'OK';
  }
}
