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
  /** Releases what the backend holds beyond its sessions (a warm spare process). */
  close?(): Promise<void>;
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

/** Tuning of {@link stdioBackend}. */
export interface StdioBackendOptions {
  /**
   * Processes kept started ahead of need (default 0), from the first session on: a new session
   * (a new user, or a new capability set) then initializes a process that has already booted
   * instead of waiting for one to start. Each spare is one idle process.
   */
  readonly spares?: number;
}

/** A child-process backend: one process per session, started on demand (or kept warm: `spares`). */
export function stdioBackend(options: StdioChildOptions, tuning: StdioBackendOptions = {}): Backend {
  const wanted = tuning.spares ?? 0;
  const spares: StdioChildTransport[] = [];
  let closed = false;
  const refill = () => {
    while (!closed && spares.length < wanted) {
      const spare = new StdioChildTransport(options);
      spare.onerror = () => {};
      spares.push(spare);
      spare.prestart().catch(() => {
        const at = spares.indexOf(spare);
        if (at !== -1) spares.splice(at, 1);
      });
    }
  };
  return {
    kind: 'stdio',
    describe: [options.command, ...(options.args ?? [])].join(' '),
    async connect() {
      let transport: StdioChildTransport | undefined;
      while (!transport && spares.length > 0) {
        const spare = spares.shift()!;
        // One that exited while it waited (or failed to start) is of no use.
        if (spare.running) transport = spare;
      }
      refill();
      return transport ?? new StdioChildTransport(options);
    },
    async close() {
      closed = true;
      await Promise.all(spares.splice(0).map((spare) => spare.close().catch(() => {})));
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
