/**
 * Where a legacy server lives, as seen by the session layer: something that opens a fresh pipe to
 * it. In process (a factory of SDK v1 servers, connected through an in-memory pair) or a child
 * process over stdio, or a legacy HTTP URL (Streamable HTTP with sessions, HTTP+SSE fallback).
 */
import { LegacyHttpClientTransport, type LegacyHttpClientOptions } from '../transport/legacyHttpClient.ts';
import { createMemoryPair } from '../transport/memory.ts';
import { StdioChildTransport, type StdioChildOptions } from '../transport/stdioChild.ts';
import type { Transport } from '../transport/transport.ts';

/** Opens pipes to one legacy server. Each pipe becomes one upstream session. */
export interface Backend {
  readonly kind: 'in-process' | 'stdio' | 'http';
  /** A human-readable account of the upstream, for logs and the CLI. */
  readonly describe: string;
  /** How many sessions may be open at once (a single server instance supports one). */
  readonly maxSessions?: number;
  connect(): Promise<Transport>;
}

/** Anything with the SDK's `connect(transport)`: a v1 `Server` or `McpServer` (or a v2 one). */
export interface ConnectableServer {
  connect(transport: never): Promise<void>;
}

/**
 * An in-process backend. Give a factory to allow a session per principal and capability set (each
 * gets its own server instance, as the SDK requires); a single instance allows one session.
 */
export function inProcessBackend(server: ConnectableServer | (() => ConnectableServer | Promise<ConnectableServer>)): Backend {
  const factory = typeof server === 'function' ? server : undefined;
  let used = false;
  return {
    kind: 'in-process',
    describe: 'an in-process server',
    ...(factory ? {} : { maxSessions: 1 }),
    async connect() {
      const instance = factory ? await factory() : (server as ConnectableServer);
      if (!factory) {
        if (used) await (instance as { close?: () => Promise<void> }).close?.();
        used = true;
      }
      const [client, serverSide] = createMemoryPair();
      await instance.connect(serverSide as never);
      return client;
    },
  };
}

/** A child-process backend: one process per session, started on demand. */
export function stdioBackend(options: StdioChildOptions): Backend {
  return {
    kind: 'stdio',
    describe: [options.command, ...(options.args ?? [])].join(' '),
    async connect() {
      return new StdioChildTransport(options);
    },
  };
}

/** A legacy HTTP backend: one upstream HTTP session per pool session. */
export function httpBackend(options: LegacyHttpClientOptions): Backend {
  return {
    kind: 'http',
    describe: String(options.url),
    async connect() {
      return new LegacyHttpClientTransport(options);
    },
  };
}
