/**
 * A replica joining a fleet: it connects to the fleet's Redis, takes the requestState keys every
 * replica seals with (the key it was given, or the ones the fleet agreed on), shares single use of
 * replay states, and, once it listens, registers in the directory with the address the others
 * reach it at.
 * What a wrap needs from the fleet comes from here; without a fleet nothing of `fleet/` is loaded.
 */
import { randomBytes } from 'node:crypto';
import { Keyring } from '../state/keyring.ts';
import { FleetChanges } from './changes.ts';
import { FleetDirectory, type HeartbeatOptions } from './directory.ts';
import { FleetKeys } from './fleetKeys.ts';
import { closeFleetRedis, connectFleetRedis, type FleetRedis } from './fleetRedis.ts';
import { FleetStateKeys } from './fleetStateKeys.ts';
import { HopSecrets } from './hopSecrets.ts';
import { fleetForwarding, type FleetForwarding, type ForwardCounts, type ForwardingOptions } from './forwarding.ts';
import { RedisUsedStates } from './redisUsedStates.ts';

/** How a replica joins its fleet. */
export interface FleetOptions extends HeartbeatOptions, ForwardingOptions {
  /** The fleet's Redis (`redis://127.0.0.1:6379`). */
  readonly redis: string;
  /** The fleet's name in Redis (default `default`): fleets sharing a Redis keep apart by name. */
  readonly name?: string;
  /** This replica's id (default random): 1 to 64 letters, digits, '_' or '-'. */
  readonly id?: string;
  /**
   * The key every replica was given (from a file or the environment). Without one the fleet
   * agrees on keys through Redis (see `FleetStateKeys`).
   */
  readonly keyring?: Keyring;
  /**
   * How often the agreed keys are read again (default 2 s): to pick up a rotation, and to write
   * back the keys a Redis restarted without persistence lost.
   */
  readonly keyRefreshMs?: number;
}

/** A replica in its fleet. */
export interface Fleet {
  readonly id: string;
  readonly keys: FleetKeys;
  readonly redis: FleetRedis;
  readonly directory: FleetDirectory;
  /** The keyring requestState is signed, sealed, verified and opened with. */
  readonly keyring: Keyring;
  /** Where the key came from: given to every replica, or agreed on through Redis (`created` by this one). */
  readonly keySource: 'given' | 'agreed' | 'created';
  /** The secrets hops, directory records and change scopes are signed with (agreed in Redis). */
  readonly secrets: HopSecrets;
  /** Single use of replay-mode states, fleet-wide. */
  readonly usedStates: RedisUsedStates;
  /** Where requests owned by another replica go (retries of calls parked there, its legacy sessions). */
  readonly forwarding: FleetForwarding;
  /** Changes upstreams reported, told to every replica (for listens). */
  readonly changes: FleetChanges;
  /** What `/healthz` says of the replica: its id, whether its Redis answers now, and its forward counts. */
  info(): { readonly replica: string; readonly redis: 'ok' | 'unreachable' } & ForwardCounts;
  /**
   * Rotates the key the fleet agreed on (no key given): a new one, sealing on this replica at once
   * and on every other within `keyRefreshMs`; the last three keep opening. Refused with a given key
   * (rotate that by giving every replica the new key first and the old one after it).
   */
  rotateKey(): Promise<void>;
  /**
   * Registers in the directory: the others reach this replica at `advertise` (`http://host:port`),
   * and take its hops from then on (a request it forwards before waits for this, up to 5 s).
   */
  register(advertise: string): Promise<void>;
  /** Stops taking new calls: the directory says so (the health endpoint too). */
  drain(): Promise<void>;
  /** Leaves the directory and closes the connection. Idempotent. */
  leave(): Promise<void>;
}

/** Joins a fleet; rejects when its Redis cannot be reached. */
export async function joinFleet(options: FleetOptions): Promise<Fleet> {
  const keys = new FleetKeys(options.name);
  const id = options.id ?? randomBytes(6).toString('base64url');
  if (!/^[\w-]{1,64}$/.test(id)) throw new Error(`a replica id is 1 to 64 letters, digits, '_' or '-', not ${JSON.stringify(id)}`);
  const redis = await connectFleetRedis({ url: options.redis, ...(options.name ? { name: options.name } : {}) });
  try {
    const stateKeys = new FleetStateKeys(redis, keys);
    let keyring = options.keyring;
    let keySource: Fleet['keySource'] = 'given';
    let refresher: ReturnType<typeof setInterval> | undefined;
    if (!keyring) {
      const agreed = await stateKeys.agree();
      keyring = new Keyring(agreed.keys);
      keySource = agreed.created ? 'created' : 'agreed';
      const ring = keyring;
      refresher = setInterval(
        () => void stateKeys.refresh(ring).catch((e) => options.onError?.(e)),
        Math.max(100, options.keyRefreshMs ?? 2000),
      );
      refresher.unref();
    }
    // The first replica's secret wins; every replica signs and checks with it.
    const secrets = await HopSecrets.agree(redis, keys);
    const directory = new FleetDirectory(redis, keys, secrets, options);
    const changes = new FleetChanges(redis, keys, id, secrets, options.onError);
    let markListed = (): void => {};
    const listed = new Promise<void>((r) => (markListed = r));
    const forwarding = fleetForwarding({ id, keyring, secrets, directory, listed }, options);
    let leaving: Promise<void> | undefined;
    return {
      id,
      forwarding,
      changes,
      info: () => ({ replica: id, redis: redis.isReady ? 'ok' : 'unreachable', ...forwarding.counts() }),
      keys,
      redis,
      directory,
      keyring,
      keySource,
      secrets,
      usedStates: new RedisUsedStates(redis, keys),
      async rotateKey() {
        if (keySource === 'given')
          throw new Error('this fleet seals with a key given to every replica: give them the new key first and the old one after it');
        await stateKeys.refresh(keyring);
        keyring.add(await stateKeys.rotate());
      },
      async register(advertise) {
        await directory.join({ id, advertise });
        markListed();
      },
      drain: () => directory.setReady(false),
      leave() {
        leaving ??= (async () => {
          clearInterval(refresher);
          await directory.leave();
          await changes.close();
          await closeFleetRedis(redis);
        })();
        return leaving;
      },
    };
  } catch (e) {
    await closeFleetRedis(redis);
    throw e;
  }
}
