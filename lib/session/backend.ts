/**
 * Where a legacy server lives, as seen by the session layer: something that opens a fresh pipe to
 * it. In process (a factory of SDK v1 servers, connected through an in-memory pair) or a child
 * process over stdio, or a legacy HTTP URL (Streamable HTTP with sessions, HTTP+SSE fallback).
 */
import { LegacyHttpClientTransport, type LegacyHttpClientOptions } from '../transport/legacyHttpClient.ts';
import { createMemoryPair } from '../transport/memory.ts';
import { StdioChildTransport, type StdioChildOptions } from '../transport/stdioChild.ts';
import type { Transport } from '../transport/transport.ts';
import type { Gate } from './gate.ts';

/** Whose pipe is being opened: what a backend that passes callers' credentials on needs to know. */
export interface ConnectContext {
  /**
   * The caller's `Authorization` header, read before each request of the pipe: fixed for a pool
   * session (the caller it is kept for), the latest request's for a relayed legacy session.
   */
  readonly authorization?: () => string | undefined;
  /**
   * A relayed legacy session: its client refreshes an expired token and goes on in the same
   * session, so a 401 or 403 answers the request only (a pool session is closed by one).
   */
  readonly relayed?: boolean;
}

/** Opens pipes to one legacy server. Each pipe becomes one upstream session. */
export interface Backend {
  readonly kind: 'in-process' | 'stdio' | 'http';
  /** A human-readable account of the upstream, for logs and the CLI. */
  readonly describe: string;
  /** How many sessions may be open at once (a single server instance supports one). */
  readonly maxSessions?: number;
  /** The upstream's URL (HTTP backends). */
  readonly url?: URL;
  /**
   * True when each caller's own `Authorization` header goes upstream (`httpBackend`'s
   * `passAuthorization`): sessions are then opened per caller, with its credentials.
   */
  readonly passesAuthorization?: boolean;
  connect(context?: ConnectContext): Promise<Transport>;
  /** Releases what the backend holds beyond its sessions (a warm spare process). */
  close?(): Promise<void>;
  /**
   * Does its own background starts (warm spares) in turn with a wrap's openings, after them, so
   * that every server process boots within the gate's bound.
   */
  share?(gate: Gate): void;
  /**
   * Claims a process started ahead for the next `connect()`, if one is free: that connect boots
   * nothing, so it needs no turn at the gate. False when none is free.
   */
  claimWarm?(): boolean;
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

/** How long a spare waits for its turn to start, and how long its boot may hold the turn. */
const SPARE_WAIT_MS = 30_000;
const SPARE_BOOT_MS = 5_000;

/** A child-process backend: one process per session, started on demand (or kept warm: `spares`). */
export function stdioBackend(options: StdioChildOptions, tuning: StdioBackendOptions = {}): Backend {
  const wanted = tuning.spares ?? 0;
  const spares: StdioChildTransport[] = [];
  let closed = false;
  let gate: Gate | undefined;
  /** Spares promised to connects about to come (`claimWarm`). */
  let claimed = 0;
  /** Spares waiting for their turn at the gate (once started, `spares` counts them). */
  let starting = 0;
  const startSpare = async (): Promise<void> => {
    // In turn with the openings: given up when no place comes.
    let through: (() => void) | undefined;
    try {
      // With the known callers (under pressure, spares are theirs), in the place they have beside the crowd's.
      through = gate ? await gate.enter(SPARE_WAIT_MS, undefined, () => true, 'spare') : () => {};
    } finally {
      starting--;
    }
    try {
      if (!through || closed) return;
      const spare = new StdioChildTransport(options);
      spare.onerror = () => {};
      spares.push(spare);
      const dropped = () => {
        const at = spares.indexOf(spare);
        if (at !== -1) spares.splice(at, 1);
      };
      await spare.prestart().then(() => (gate ? spare.warm(SPARE_BOOT_MS) : undefined), dropped);
    } finally {
      through?.();
    }
  };
  const refill = () => {
    while (!closed && spares.length + starting < wanted) {
      starting++;
      void startSpare();
    }
  };
  return {
    kind: 'stdio',
    describe: [options.command, ...(options.args ?? [])].join(' '),
    async connect() {
      let transport: StdioChildTransport | undefined;
      if (claimed > 0) claimed--;
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
    share(shared) {
      gate = shared;
    },
    claimWarm() {
      if (spares.filter((spare) => spare.running).length <= claimed) return false;
      claimed++;
      return true;
    },
  };
}

/** Options of {@link httpBackend}. */
export interface HttpBackendOptions extends LegacyHttpClientOptions {
  /**
   * Each caller's upstream sessions carry that caller's own `Authorization` header (default
   * false): for fronting a protected server on its public URL, where tokens are issued for the
   * server the wrap stands in front of. Not with a fixed `Authorization` in `headers`.
   */
  readonly passAuthorization?: boolean;
}

/** A legacy HTTP backend: one upstream HTTP session per pool session. */
export function httpBackend(options: HttpBackendOptions): Backend {
  const { passAuthorization = false, ...transport } = options;
  const fixed = transport.headers;
  if (
    passAuthorization &&
    (typeof fixed === 'function' || Object.keys(fixed ?? {}).some((name) => name.toLowerCase() === 'authorization'))
  ) {
    throw new TypeError(
      "httpBackend: passAuthorization passes each caller's own Authorization header; it cannot be combined with a fixed Authorization header or a headers function",
    );
  }
  const url = new URL(options.url);
  return {
    kind: 'http',
    describe: String(options.url),
    url,
    passesAuthorization: passAuthorization,
    async connect(context) {
      const authorization = passAuthorization ? context?.authorization : undefined;
      if (!authorization) return new LegacyHttpClientTransport(transport);
      return new LegacyHttpClientTransport({
        ...transport,
        ...(context?.relayed ? { onAuthRefusal: 'answer' as const } : {}),
        headers: () => {
          const value = authorization();
          return value === undefined ? { ...fixed } : { ...fixed, authorization: value };
        },
      });
    },
  };
}
