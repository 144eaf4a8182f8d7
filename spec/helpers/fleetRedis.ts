/**
 * A fleet of its own on the machine's Redis (127.0.0.1:6379, or MCP_DUAL_ERA_REDIS) for one spec:
 * a fresh fleet name, clients that are closed and keys that are deleted when it ends.
 */
import { randomUUID } from 'node:crypto';
import { FleetKeys } from '../../lib/fleet/fleetKeys.ts';
import { closeFleetRedis, connectFleetRedis, type FleetRedis } from '../../lib/fleet/fleetRedis.ts';

/** Where the specs' Redis is. */
export const REDIS_URL = process.env['MCP_DUAL_ERA_REDIS'] ?? 'redis://127.0.0.1:6379';

/** A fleet name no other run uses, its keys, and clients on it. */
export interface SpecFleet {
  readonly name: string;
  /** The Redis it lives on. */
  readonly url: string;
  readonly keys: FleetKeys;
  /** A new client (one per simulated replica). */
  client(): Promise<FleetRedis>;
  /** Closes every client and deletes every key of the fleet. */
  end(): Promise<void>;
}

/** Starts a fleet of its own (on the machine's Redis unless `url` names another). */
export function specFleet(url: string = REDIS_URL): SpecFleet {
  const name = `spec-${randomUUID().slice(0, 8)}`;
  const keys = new FleetKeys(name);
  const clients: FleetRedis[] = [];
  return {
    name,
    url,
    keys,
    async client() {
      const c = await connectFleetRedis({ url, name });
      clients.push(c);
      return c;
    },
    async end() {
      const c = await connectFleetRedis({ url, name }).catch(() => undefined);
      if (!c) return void (await Promise.all(clients.map(closeFleetRedis)));
      for await (const batch of c.scanIterator({ MATCH: `${keys.prefix}*`, COUNT: 100 })) if (batch.length > 0) await c.del(batch);
      await closeFleetRedis(c);
      await Promise.all(clients.map(closeFleetRedis));
    },
  };
}
