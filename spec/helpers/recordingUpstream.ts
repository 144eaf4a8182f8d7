/**
 * In-process legacy servers that record what reaches them: every message their client side sent,
 * per server and in all, and the servers themselves, so a spec can see a cancellation arrive
 * upstream or close a server as if it had crashed. Not a server: it wraps the factory it is given.
 */
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest } from '../../lib/core/jsonrpc.ts';
import type { ConnectableServer } from '../../lib/session/backend.ts';
import type { Transport } from '../../lib/transport/transport.ts';

/** Anything with the SDK's `connect` and `close`: a v1 `Server` or `McpServer`. */
export interface ClosableServer {
  connect(transport: never): Promise<void>;
  close(): Promise<void>;
}

/** One server made by a {@link Recorder}, with what it received. */
export interface RecordedServer<S extends ClosableServer = ClosableServer> {
  readonly server: S;
  readonly received: JsonRpcMessage[];
}

/** Servers made on demand, each recording what it receives. */
export interface Recorder<S extends ClosableServer = ClosableServer> {
  /** The factory to hand to `inProcessBackend` or to a wrap's `upstream`. */
  readonly upstream: () => Promise<ConnectableServer>;
  /** Every server made, in the order they were made. */
  readonly servers: Array<RecordedServer<S>>;
  /** Every message any server received, in order. */
  readonly received: JsonRpcMessage[];
  /** The requests and notifications received (by any server) with this method. */
  withMethod(method: string): Array<JsonRpcRequest | JsonRpcNotification>;
}

/** Records what every server `make` returns receives once connected. */
export function recordingUpstream<S extends ClosableServer>(make: () => S): Recorder<S> {
  const servers: Array<RecordedServer<S>> = [];
  const received: JsonRpcMessage[] = [];
  const upstream = async (): Promise<ConnectableServer> => {
    const server = make();
    const own: JsonRpcMessage[] = [];
    servers.push({ server, received: own });
    return {
      async connect(transport: never) {
        await server.connect(transport);
        // The SDK installed its handler on connect: what arrives now passes through here first.
        const pipe = transport as Transport;
        const handler = pipe.onmessage;
        pipe.onmessage = (message, extra) => {
          own.push(message);
          received.push(message);
          handler?.(message, extra);
        };
      },
    };
  };
  const withMethod = (method: string) =>
    received.filter((m): m is JsonRpcRequest | JsonRpcNotification => 'method' in m && m.method === method);
  return { upstream, servers, received, withMethod };
}
