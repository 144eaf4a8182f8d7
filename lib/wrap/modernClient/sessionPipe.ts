/**
 * The pipes `wrapModernClient` hands to the upstream sessions of a legacy server: the first adopts
 * the process the probe already started, later ones start their own. Each pipe notes a refused
 * `initialize`, an expired HTTP session, and raises the server's log level when a request asks for
 * more. It moves messages; it decides nothing about them.
 */
import type { RequestId, JsonRpcMessage } from '../../core/jsonrpc.ts';
import { isRecord, LOGGING_LEVELS, type LoggingLevel } from '../../core/primitives.ts';
import type { Backend } from '../../session/backend.ts';
import { LegacyHttpClientTransport } from '../../transport/legacyHttpClient.ts';
import type { StdioChildTransport } from '../../transport/stdioChild.ts';
import type { Transport } from '../../transport/transport.ts';
import { KeyedTable } from '../../util/idTable.ts';

let setLevelIds = 0;

/**
 * A pipe handed to an upstream session: the probed process (already started) or a fresh one. It
 * notes an `initialize` the server refused (a cached "legacy" verdict was wrong), and before a
 * request it raises the server's log level with `logging/setLevel` when a modern request has asked
 * for more than the server was set to (the wrap filters each request's logs by its own level).
 */
export class SessionPipe implements Transport {
  readonly #inner: Transport;
  readonly #started: boolean;
  readonly #onRefused: (reason: string) => void;
  readonly #wanted: () => LoggingLevel | undefined;
  readonly #onExpired: () => void;
  #initializeId: RequestId | undefined;
  #logging = false;
  #level: LoggingLevel | undefined;
  #raising: Promise<void> | undefined;
  /** Not a `Map`: see `KeyedTable`. */
  readonly #ownAnswers = new KeyedTable<RequestId, () => void>();
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;

  constructor(inner: Transport, started: boolean, hooks: PipeHooks) {
    this.#inner = inner;
    this.#started = started;
    this.#onRefused = hooks.onRefused;
    this.#wanted = hooks.wanted;
    this.#onExpired = hooks.onExpired;
    inner.onmessage = (message, extra) => {
      if ('id' in message && !('method' in message)) {
        const own = message.id === null || message.id === undefined ? undefined : this.#ownAnswers.get(message.id);
        if (own) return own();
        if (this.#initializeId !== undefined && message.id === this.#initializeId) {
          if ('error' in message && message.error) this.#onRefused(`initialize answered ${message.error.code} ${message.error.message}`);
          else if ('result' in message)
            this.#logging = isRecord(message.result['capabilities']) && isRecord(message.result['capabilities']['logging']);
        }
      }
      this.onmessage?.(message, extra);
    };
    inner.onerror = (error) => {
      // Told before the pipe answers what is in flight and closes.
      if (inner instanceof LegacyHttpClientTransport && inner.sessionExpired) this.#onExpired();
      this.onerror?.(error);
    };
    inner.onclose = () => {
      for (const done of this.#ownAnswers.values()) done();
      this.onclose?.();
    };
  }

  async start(): Promise<void> {
    if (!this.#started) await this.#inner.start();
  }

  async send(message: JsonRpcMessage, options?: unknown): Promise<void> {
    if ('method' in message && 'id' in message) {
      if (message.method === 'initialize') this.#initializeId = message.id;
      else if (this.#logging) await this.#raiseLevel();
    }
    return this.#inner.send(message, options);
  }

  #raiseLevel(): Promise<void> {
    const wanted = this.#wanted();
    if (wanted === undefined || (this.#level !== undefined && LOGGING_LEVELS.indexOf(wanted) >= LOGGING_LEVELS.indexOf(this.#level)))
      return this.#raising ?? Promise.resolve();
    this.#level = wanted;
    const id = `mcp-dual-era-set-level-${++setLevelIds}`;
    const raised = new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), 5000);
      const done = () => {
        clearTimeout(timer);
        this.#ownAnswers.delete(id);
        resolve();
      };
      this.#ownAnswers.set(id, done);
      this.#inner.send({ jsonrpc: '2.0', id, method: 'logging/setLevel', params: { level: wanted } }).catch(done);
    });
    this.#raising = raised;
    return raised;
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** What the server said when it failed (its exit code and last stderr lines…), as the pipe under it knows. */
  get failure(): Transport['failure'] {
    return this.#inner.failure;
  }
}

/** What the legacy path learns from, and tells, every upstream pipe. */
export interface PipeHooks {
  /** The server refused `initialize`. */
  readonly onRefused: (reason: string) => void;
  /** The most verbose log level a request has asked for. */
  readonly wanted: () => LoggingLevel | undefined;
  /** The server answered 404 to the session's id (legacy HTTP): the session is gone. */
  readonly onExpired: () => void;
}

/** Closed over by the legacy path: the first connect adopts the probed process, later ones start their own. */
export function adoptingBackend(fresh: Backend, adopted: StdioChildTransport | undefined, alive: () => boolean, hooks: PipeHooks): Backend {
  let first = adopted;
  return {
    kind: fresh.kind,
    describe: fresh.describe,
    ...(fresh.maxSessions !== undefined ? { maxSessions: fresh.maxSessions } : {}),
    async connect() {
      const own = first;
      first = undefined;
      if (own && alive()) return new SessionPipe(own, true, hooks);
      if (own) await own.close().catch(() => {});
      return new SessionPipe(await fresh.connect(), false, hooks);
    },
    // The probed process, if no session took it, ends with the wrap (and what the fresh backend holds).
    async close() {
      const own = first;
      first = undefined;
      await Promise.all([own?.close().catch(() => {}), fresh.close?.()]);
    },
  };
}
