/**
 * Serves a Web `fetch` handler on Node's HTTP server (through @hono/node-server's request
 * listener), bound to loopback unless told otherwise. Client disconnects abort `request.signal`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';

export interface NodeHttpOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 3000; 0 picks a free port. */
  readonly port?: number;
}

export interface RunningHttpServer {
  readonly server: Server;
  /** `http://host:port` */
  readonly origin: string;
  close(): Promise<void>;
}

/** The Node request listener for a fetch handler. */
export function toNodeListener(fetch: (request: Request) => Promise<Response>): ReturnType<typeof getRequestListener> {
  return getRequestListener(fetch);
}

/** Listens with a fetch handler; resolves once bound. */
export async function serveNodeHttp(fetch: (request: Request) => Promise<Response>, options: NodeHttpOptions = {}): Promise<RunningHttpServer> {
  const server = createServer(toNodeListener(fetch));
  server.keepAliveTimeout = 60_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    origin: `http://${shown}:${address.port}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
