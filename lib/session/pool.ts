/**
 * The pool of initialized upstream sessions, keyed by principal and declared capability set (a
 * legacy server may register tools according to what its client declared at `initialize`). Bounded
 * in size and idle time; never shares a session between principals; reopens a session whose
 * process died, with backoff.
 */
import { GiveUp, retry } from '../retry.ts';
import { AdapterError } from '../core/errors.ts';
import type { LegacyVersion } from '../core/era.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import type { Implementation, JsonObject } from '../core/primitives.ts';
import type { Backend } from './backend.ts';
import type { CancelSignal } from '../signals.ts';
import { PushCopies } from './pushCopies.ts';
import { UpstreamSession, type RpcOutcome } from './upstreamSession.ts';

/** How long a caller that would rather not open a session waits for one to be free before it opens one. */
const OPEN_PATIENCE_MS = 100;

/** Who is asking and what they declared: the pool key. */
export interface SessionKey {
  readonly principal: string;
  /** Shared between keys: never modified. */
  readonly capabilities: JsonObject;
  /** `canonicalJson(capabilities)`, when the caller has it already. */
  readonly capabilitiesText?: string;
  readonly clientInfo: Implementation;
}

export interface SessionPoolOptions {
  readonly maxSessions?: number;
  /** Sessions one key may have, so calls that push need not share one (default 16). */
  readonly maxPerKey?: number;
  readonly idleMs?: number;
  readonly protocolVersion?: LegacyVersion;
  /** Attempts to open a session before giving up (with exponential backoff). */
  readonly openAttempts?: number;
  readonly onUnrelatedPush?: (key: SessionKey, push: JsonRpcRequest) => Promise<RpcOutcome>;
  readonly onNotification?: (key: SessionKey, session: UpstreamSession, method: string, params: JsonObject | undefined) => void;
  readonly onSessionClosed?: (key: SessionKey, reason: string) => void;
  /** A session was opened: the server answered its `initialize`. */
  readonly onSessionOpened?: (key: SessionKey, session: UpstreamSession) => void;
  /** A session could not be opened, after its retries: `error` is what the last attempt met. */
  readonly onOpenFailed?: (key: SessionKey, error: unknown) => void;
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

/** The text the pool files a key's sessions under. */
function keyText(key: SessionKey): string {
  return `${key.principal}\u0000${key.capabilitiesText ?? canonicalJson(key.capabilities)}`;
}

interface Entry {
  readonly key: SessionKey;
  sessions: UpstreamSession[];
  opening: number;
  /** Callers waiting for a session with no call that may push in flight. */
  waiting: Array<() => void>;
}

/** How a caller wants its session. */
export interface AcquireOptions {
  /**
   * The call is known to push requests: prefer a session where no other call that may push is in
   * flight (opening another, up to `maxPerKey`), so its pushes are never ambiguous.
   */
  readonly exclusive?: boolean;
  /**
   * With `exclusive`, when every open session of the key has a call that may push in flight:
   * open another (true, the default, up to `maxPerKey`) or wait for one to be free (false: for
   * calls not yet known to push, so that a burst of first calls does not open a session each).
   * At the bound, or without room in the pool, the caller waits either way: a session shared by
   * two calls that push could not tell their pushes apart.
   */
  readonly open?: boolean;
  /** Asked again after each wait: whether the caller still wants a session alone. */
  readonly stillExclusive?: () => boolean;
  /** Stops waiting (the acquire rejects). */
  readonly signal?: CancelSignal;
  /**
   * Set to true when the session was handed over alone (`exclusive`): it is reserved for the
   * caller's call, made with `reserved`, or the caller calls `session.unreserve()`.
   */
  readonly reservation?: { reserved: boolean };
}

/** Upstream sessions on demand. */
export class SessionPool {
  readonly backend: Backend;
  readonly options: SessionPoolOptions;
  #entries = new Map<string, Entry>();
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  /** Over HTTP, a server may send one push to every session: its copies are settled together. */
  readonly #copies: PushCopies | undefined;

  constructor(backend: Backend, options: SessionPoolOptions = {}) {
    this.backend = backend;
    this.options = options;
    this.#copies = backend.kind === 'http' ? new PushCopies(() => this.size) : undefined;
    const idle = options.idleMs ?? 5 * 60_000;
    this.#sweeper = setInterval(() => this.#sweep(idle), Math.max(1000, Math.min(idle, 60_000)));
    this.#sweeper.unref();
  }

  /** Open sessions. */
  get size(): number {
    let n = 0;
    for (const e of this.#entries.values()) n += e.sessions.length + e.opening;
    return n;
  }

  get #max(): number {
    return Math.min(this.options.maxSessions ?? 64, this.backend.maxSessions ?? Number.POSITIVE_INFINITY);
  }

  /**
   * The entry of a key, and the open session to use now if one will do (`enough`); else whether to
   * open another (`wait` false) or wait for one to be free (`wait` true).
   */
  #choose(key: SessionKey, options: AcquireOptions): { entry: Entry; pick: UpstreamSession | undefined; enough: boolean; wait: boolean } {
    if (this.#closed) throw new AdapterError('closed', 'the session pool is closed');
    const id = keyText(key);
    let entry = this.#entries.get(id);
    if (!entry) {
      entry = { key, sessions: [], opening: 0, waiting: [] };
      this.#entries.set(id, entry);
    }
    if (entry.sessions.some((s) => s.closed)) entry.sessions = entry.sessions.filter((s) => !s.closed);
    const live = entry.sessions;
    let pick: UpstreamSession | undefined;
    for (const s of live) {
      const load = options.exclusive ? s.pushableInFlight : s.inFlight;
      if (!pick || load < (options.exclusive ? pick.pushableInFlight : pick.inFlight)) pick = s;
    }
    const perKey = Math.min(this.options.maxPerKey ?? 16, this.#max);
    if (options.exclusive) {
      if (pick && pick.pushableInFlight === 0) {
        pick.touch(Date.now());
        pick.reserve();
        if (options.reservation) options.reservation.reserved = true;
        return { entry, pick, enough: true, wait: false };
      }
      const mayOpen = (options.open !== false || (live.length === 0 && entry.opening === 0)) && live.length + entry.opening < perKey && this.#hasRoom();
      return { entry, pick, enough: false, wait: !mayOpen };
    }
    const wantsAnother = !pick && entry.opening === 0;
    const enough = pick !== undefined && !(wantsAnother && live.length + entry.opening < perKey && this.#hasRoom());
    if (enough) pick!.touch(Date.now());
    return { entry, pick, enough, wait: false };
  }

  /**
   * Waits until a call that may push ends on one of the entry's sessions (or a session closes, or
   * one opens); with `patienceMs`, at most that long (resolves true when it ran out).
   */
  #freed(entry: Entry, signal: CancelSignal | undefined, patienceMs?: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (signal?.aborted) return reject(new AdapterError('closed', 'the request was cancelled while waiting for an upstream session'));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (ranOut: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(ranOut);
      };
      const wake = () => done(false);
      const onAbort = () => {
        clearTimeout(timer);
        entry.waiting = entry.waiting.filter((w) => w !== wake);
        reject(new AdapterError('closed', 'the request was cancelled while waiting for an upstream session'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      entry.waiting.push(wake);
      if (patienceMs !== undefined) {
        timer = setTimeout(() => {
          entry.waiting = entry.waiting.filter((w) => w !== wake);
          done(true);
        }, patienceMs);
        timer.unref?.();
      }
    });
  }

  #wakeWaiting(entry: Entry | undefined): void {
    if (!entry || entry.waiting.length === 0) return;
    const waiting = entry.waiting;
    entry.waiting = [];
    for (const wake of waiting) wake();
  }

  /**
   * An open session for this key when one will do without opening another, else `undefined`
   * (then `acquire`). Throws when the pool is closed.
   */
  tryAcquire(key: SessionKey, options: AcquireOptions = {}): UpstreamSession | undefined {
    const { pick, enough } = this.#choose(key, options);
    return enough ? pick : undefined;
  }

  /** A session for this key, opening (or reopening) one as needed, or waiting for one to be free. */
  async acquire(key: SessionKey, options: AcquireOptions = {}): Promise<UpstreamSession> {
    // A caller that would rather not open a session (`open: false`: its calls are not known to
    // push) waits briefly for one to be free, then opens one, or at the bound shares one: the
    // sessions may be held by parked calls that take minutes to come back. A caller whose calls
    // push waits as long as it takes rather than share.
    let patient = options.open === false;
    let share = false;
    for (;;) {
      const exclusive = !share && (options.stillExclusive ? options.stillExclusive() : options.exclusive === true);
      const { entry, pick, enough, wait } = this.#choose(key, { ...options, exclusive, open: !patient });
      if (enough) return pick!;
      if (wait) {
        if (!patient) {
          await this.#freed(entry, options.signal);
          continue;
        }
        if (await this.#freed(entry, options.signal, OPEN_PATIENCE_MS)) {
          patient = false;
          const again = this.#choose(key, { ...options, exclusive: true, open: true });
          if (again.enough) return again.pick!;
          if (again.wait) share = true;
        }
        continue;
      }
      if (!pick && entry.opening > 0 && !exclusive) return this.#waitForOpen(entry);
      this.#makeRoom();
      entry.opening++;
      try {
        const session = await this.#open(key);
        entry.sessions.push(session);
        if (exclusive) {
          session.reserve();
          if (options.reservation) options.reservation.reserved = true;
        }
        return session;
      } finally {
        entry.opening--;
        this.#wakeWaiting(entry);
      }
    }
  }

  async #waitForOpen(entry: Entry): Promise<UpstreamSession> {
    for (;;) {
      await new Promise((r) => setTimeout(r, 5));
      const s = entry.sessions.find((x) => !x.closed);
      if (s) return s;
      if (entry.opening === 0) return this.acquire(entry.key);
      if (this.#closed) throw new AdapterError('closed', 'the session pool is closed');
    }
  }

  #hasRoom(): boolean {
    if (this.size < this.#max) return true;
    for (const e of this.#entries.values()) for (const s of e.sessions) if (s.inFlight === 0 && s.holds === 0) return true;
    return false;
  }

  #makeRoom(): void {
    if (this.size < this.#max) return;
    let victim: { entry: Entry; session: UpstreamSession } | undefined;
    for (const entry of this.#entries.values()) {
      for (const s of entry.sessions) {
        if (!s.closed && (s.inFlight > 0 || s.holds > 0)) continue;
        if (!victim || s.lastUsed < victim.session.lastUsed) victim = { entry, session: s };
      }
    }
    if (!victim) throw new AdapterError('upstream-error', `all ${this.#max} upstream sessions are busy`);
    victim.entry.sessions = victim.entry.sessions.filter((s) => s !== victim!.session);
    void victim.session.close();
  }

  async #open(key: SessionKey): Promise<UpstreamSession> {
    const id = keyText(key);
    const open = async (): Promise<UpstreamSession> => {
      if (this.#closed) throw new GiveUp('the session pool is closed');
      const transport = await this.backend.connect();
      const session: UpstreamSession = new UpstreamSession(transport, {
        clientInfo: key.clientInfo,
        capabilities: key.capabilities,
        protocolVersion: this.options.protocolVersion ?? '2025-11-25',
        ...(this.#copies ? { copies: this.#copies } : {}),
        ...(this.options.onUnrelatedPush ? { onUnrelatedPush: (push: JsonRpcRequest) => this.options.onUnrelatedPush!(key, push) } : {}),
        onNotification: (method, params) => this.options.onNotification?.(key, session, method, params),
        onClose: (reason) => {
          this.options.onSessionClosed?.(key, reason);
          this.#wakeWaiting(this.#entries.get(id));
        },
        onPushableEnd: () => this.#wakeWaiting(this.#entries.get(id)),
      });
      try {
        await session.open();
      } catch (e) {
        await session.close();
        // A server that is gone before it answered initialize did not start: starting it again
        // would only fail again (and print its failure again).
        if (e instanceof AdapterError && e.code === 'upstream-exited') throw new GiveUp(e);
        throw e;
      }
      session.touch(Date.now());
      this.options.onSessionOpened?.(key, session);
      return session;
    };
    let session: UpstreamSession;
    try {
      session = await retry(open, { retries: Math.max(0, (this.options.openAttempts ?? 3) - 1) });
    } catch (e) {
      if (!this.#closed) this.options.onOpenFailed?.(key, e);
      throw e;
    }
    if (this.#closed) {
      await session.close();
      throw new AdapterError('closed', 'the session pool is closed');
    }
    return session;
  }

  #sweep(idleMs: number): void {
    const now = Date.now();
    for (const [id, entry] of this.#entries) {
      for (const s of entry.sessions) {
        if (s.closed || (s.inFlight === 0 && s.holds === 0 && now - s.lastUsed > idleMs)) void s.close();
      }
      if (entry.sessions.some((s) => s.closed)) entry.sessions = entry.sessions.filter((s) => !s.closed);
      if (entry.sessions.length === 0 && entry.opening === 0) this.#entries.delete(id);
    }
  }

  /** Every open session, for fan-out (subscriptions) and inspection. */
  sessions(): Array<{ key: SessionKey; session: UpstreamSession }> {
    const out: Array<{ key: SessionKey; session: UpstreamSession }> = [];
    for (const e of this.#entries.values()) for (const s of e.sessions) if (!s.closed) out.push({ key: e.key, session: s });
    return out;
  }

  /** Closes every session (their calls get errors) and stops the sweeper. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const sessions = [...this.#entries.values()].flatMap((e) => e.sessions);
    for (const entry of this.#entries.values()) this.#wakeWaiting(entry);
    this.#entries.clear();
    await Promise.all(sessions.map((s) => s.close()));
  }
}
