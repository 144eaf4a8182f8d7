/**
 * The fleet's Redis: one client per replica (node-redis), connecting and closing it (the names of
 * the keys the fleet keeps there are `fleetKeys.ts`'s). Redis is the fleet's directory only:
 * nothing here is on the path of a plain call. Loaded only when a fleet is asked for.
 */
import { createClient, type RedisClientType } from 'redis';

/** The client the fleet modules share. */
export type FleetRedis = RedisClientType;

/** Where the fleet's Redis is and what the fleet is called there. */
export interface FleetRedisOptions {
  /** `redis://host:port` (or `rediss://` for TLS), as node-redis takes it. */
  readonly url: string;
  /** The fleet's name: its keys are `mcp-dual-era:<name>:…` (default `default`). */
  readonly name?: string;
  /** Told of a connection error (node-redis reconnects by itself meanwhile). */
  readonly onError?: (error: Error) => void;
}

/** Connects to the fleet's Redis; rejects when it cannot be reached now. */
export async function connectFleetRedis(options: FleetRedisOptions): Promise<FleetRedis> {
  let connected = false;
  const client = createClient({
    url: options.url,
    socket: {
      // A Redis that cannot be reached at the start is an error at once; one lost later is
      // reconnected to with a capped backoff.
      reconnectStrategy: (retries: number, cause: Error) => (connected ? Math.min(50 * 2 ** retries, 2000) : cause),
      connectTimeout: 5000,
    },
  }) as FleetRedis;
  client.on('error', (e: Error) => options.onError?.(e));
  await client.connect();
  connected = true;
  return client;
}

/** Closes a client, whatever state it is in. */
export async function closeFleetRedis(client: FleetRedis): Promise<void> {
  if (!client.isOpen) return;
  await client.close().catch(() => client.destroy());
}
