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

/**
 * How long the fleet's Redis may leave a command unanswered, and the connection's handshake: a Redis
 * that accepts connections but never answers (a stopped process, a broken network path) is an
 * error after this, never a wait without end.
 */
export const REDIS_COMMAND_MS = 5000;

/** Connects to the fleet's Redis; rejects when it cannot be reached now, or does not answer within `REDIS_COMMAND_MS`. */
export async function connectFleetRedis(options: FleetRedisOptions): Promise<FleetRedis> {
  let connected = false;
  const client = createClient({
    url: options.url,
    // While the connection is down, a command fails at once instead of waiting for it to come back:
    // what asks Redis (a forward looking up its owner) says so to its caller.
    disableOfflineQueue: true,
    socket: {
      // A Redis that cannot be reached at the start is an error at once; one lost later is
      // reconnected to with a capped backoff.
      reconnectStrategy: (retries: number, cause: Error) => (connected ? Math.min(50 * 2 ** retries, 2000) : cause),
      connectTimeout: REDIS_COMMAND_MS,
      // node-redis bounds a command only until it is written; what is written and never answered
      // is bounded by the connection's silence: past this without a byte from Redis, the
      // connection is dropped, every command waiting on it refused, and a new one made. A replica's
      // heartbeat (every second) keeps a healthy connection from falling silent.
      socketTimeout: REDIS_COMMAND_MS,
    },
  }) as FleetRedis;
  client.on('error', (e: Error) => options.onError?.(e));
  await boundedConnect(client, "the fleet's Redis");
  connected = true;
  return client;
}

/** A client like `client` for a subscription: silent for as long as nothing is published, so never dropped for its silence. */
export function subscriberOf(client: FleetRedis): FleetRedis {
  return client.duplicate({ socket: { ...client.options?.socket, socketTimeout: 0 } }) as FleetRedis;
}

/**
 * Connects `client` (`what` names it in the error), or rejects once `REDIS_COMMAND_MS` passed without the handshake answered (the
 * socket's connect timeout covers only the TCP connection; the handshake's commands have none).
 */
export async function boundedConnect(client: FleetRedis, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} accepted the connection but did not answer within ${REDIS_COMMAND_MS} ms`)),
      REDIS_COMMAND_MS,
    );
  });
  try {
    await Promise.race([client.connect(), silent]);
  } catch (e) {
    client.destroy();
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** Closes a client, whatever state it is in. */
export async function closeFleetRedis(client: FleetRedis): Promise<void> {
  if (!client.isOpen) return;
  await client.close().catch(() => client.destroy());
}
