/**
 * The pool of initialized upstream sessions, keyed by principal and declared capability set (a
 * legacy server may register tools according to what its client declared at `initialize`). Bounded
 * in size and idle time; never shares a session between principals; reopens a session whose
 * process died, with backoff.
 */
import pRetry, { AbortError } from 'p-retry';
import { AdapterError } from '../core/errors.ts';
import type { LegacyVersion } from '../core/era.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import type { Implementation, JsonObject } from '../core/primitives.ts';
import type { Backend } from './backend.ts';
import { UpstreamSession, type RpcOutcome } from './upstreamSession.ts';

/** Who is asking and what they declared: the pool key. */
export interface SessionKey {
  readonly principal: string;
  readonly capabilities: JsonObject;
  readonly clientInfo: Implementation;
}

export interface SessionPoolOptions {
  readonly maxSessions?: number;
  readonly idleMs?: number;
  readonly protocolVersion?: LegacyVersion;
  /** Attempts to open a session before giving up (with exponential backoff). */
  readonly openAttempts?: number;
  readonly onUnrelatedPush?: (key: SessionKey, push: JsonRpcRequest) => Promise<RpcOutcome>;
  readonly onNotification?: (key: SessionKey, session: UpstreamSession, method: string, params: JsonObject | undefined) => void;
  readonly onSessionClosed?: (key: SessionKey, reason: string) => void;
}

/** A stable text for a JSON value: object keys sorted, so equal capability sets share a key. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as JsonObject)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

interface Entry {
  readonly key: SessionKey;
  session?: UpstreamSession;
  opening?: Promise<UpstreamSession>;
}

/** Upstream sessions on demand. */
export class SessionPool {
  readonly backend: Backend;
  readonly options: SessionPoolOptions;
  #entries = new Map<string, Entry>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(backend: Backend, options: SessionPoolOptions = {}) {
    this.backend = backend;
    this.options = options;
    const idle = options.idleMs ?? 5 * 60_000;
    this.#sweeper = setInterval(() => this.#sweep(idle), Math.max(1000, Math.min(idle, 60_000)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#entries.size;
  }

  get #max(): number {
    return Math.min(this.options.maxSessions ?? 64, this.backend.maxSessions ?? Number.POSITIVE_INFINITY);
  }

  /** The open session for this key, opening (or reopening) one as needed. */
  async acquire(key: SessionKey): Promise<UpstreamSession> {
    if (this.#closed) throw new AdapterError('closed', 'the session pool is closed');
    const id = `${key.principal}\u0000${canonicalJson(key.capabilities)}`;
    let entry = this.#entries.get(id);
    if (entry?.session && !entry.session.closed) {
      entry.session.touch(Date.now());
      return entry.session;
    }
    if (entry?.opening) return entry.opening;
    if (!entry) {
      this.#makeRoom();
      entry = { key };
      this.#entries.set(id, entry);
    }
    const e = entry;
    e.opening = this.#open(e).finally(() => {
      delete e.opening;
    });
    return e.opening;
  }

  #makeRoom(): void {
    if (this.#entries.size < this.#max) return;
    let victim: [string, Entry] | undefined;
    for (const item of this.#entries) {
      const s = item[1].session;
      if (item[1].opening || (s && !s.closed && (s.inFlight > 0 || s.holds > 0))) continue;
      if (!victim || (s?.lastUsed ?? 0) < (victim[1].session?.lastUsed ?? 0)) victim = item;
    }
    if (!victim) throw new AdapterError('upstream-error', `all ${this.#max} upstream sessions are busy`);
    this.#entries.delete(victim[0]);
    void victim[1].session?.close();
  }

  async #open(entry: Entry): Promise<UpstreamSession> {
    const key = entry.key;
    const open = async (): Promise<UpstreamSession> => {
      if (this.#closed) throw new AbortError('the session pool is closed');
      const transport = await this.backend.connect();
      const session: UpstreamSession = new UpstreamSession(transport, {
        clientInfo: key.clientInfo,
        capabilities: key.capabilities,
        protocolVersion: this.options.protocolVersion ?? '2025-11-25',
        ...(this.options.onUnrelatedPush ? { onUnrelatedPush: (push: JsonRpcRequest) => this.options.onUnrelatedPush!(key, push) } : {}),
        onNotification: (method, params) => this.options.onNotification?.(key, session, method, params),
        onClose: (reason) => this.options.onSessionClosed?.(key, reason),
      });
      try {
        await session.open();
      } catch (e) {
        await session.close();
        throw e;
      }
      session.touch(Date.now());
      return session;
    };
    const session = await pRetry(open, { retries: Math.max(0, (this.options.openAttempts ?? 3) - 1), minTimeout: 100, maxTimeout: 2000, factor: 2 });
    if (this.#closed) {
      await session.close();
      throw new AdapterError('closed', 'the session pool is closed');
    }
    entry.session = session;
    return session;
  }

  #sweep(idleMs: number): void {
    const now = Date.now();
    for (const [id, entry] of this.#entries) {
      const s = entry.session;
      if (!s || entry.opening) continue;
      if (s.closed || (s.inFlight === 0 && s.holds === 0 && now - s.lastUsed > idleMs)) {
        this.#entries.delete(id);
        void s.close();
      }
    }
  }

  /** Every open session, for fan-out (subscriptions) and inspection. */
  sessions(): Array<{ key: SessionKey; session: UpstreamSession }> {
    const out: Array<{ key: SessionKey; session: UpstreamSession }> = [];
    for (const e of this.#entries.values()) if (e.session && !e.session.closed) out.push({ key: e.key, session: e.session });
    return out;
  }

  /** Closes every session (their calls get errors) and stops the sweeper. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map(async (e) => (e.session ?? (await e.opening?.catch(() => undefined)))?.close()));
  }
}
