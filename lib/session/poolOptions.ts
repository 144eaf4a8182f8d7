/**
 * What a session pool is given (its bounds, the gate its openings go through, its hooks) and what
 * one acquire asks of it.
 */
import type { LegacyVersion } from '../core/era.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';
import type { JsonObject } from '../core/primitives.ts';
import type { CancelSignal } from '../util/signals.ts';
import type { Openings } from './gate.ts';
import type { UpstreamSession } from './upstreamSession.ts';
import type { RpcOutcome } from './callHooks.ts';
import type { SessionKey } from './sessionKey.ts';

/** The bounds of a pool and whom it tells of sessions opened, closed and failed. */
export interface SessionPoolOptions {
  /** Sessions in all (default 64). */
  readonly maxSessions?: number;
  /** Sessions one key may have, so pushable calls need not share one (default 16). */
  readonly maxPerKey?: number;
  /** Sessions one principal may have, whatever its capability sets (default 16). */
  readonly maxPerPrincipal?: number;
  /**
   * Sessions kept for principals that have none busy (default 8): a principal with a busy session
   * opens another only while fewer than `maxSessions - reserve` are busy, so a new caller (and its
   * `server/discover`) always finds one.
   */
  readonly reserve?: number;
  /** How long a caller waits for a session to be free or room to open one before it is refused (default 10 s). */
  readonly waitMs?: number;
  /**
   * Sessions being opened at once (default half the cores, at least 1), or the `Openings` of a
   * wrap (shared with its legacy sessions): each starts an upstream server, so a crowd of new
   * callers boots servers a few at a time, in turn, rather than on every core at once.
   */
  readonly opening?: number | Openings;
  readonly idleMs?: number;
  /**
   * The principal callers' keys are filed under when they share sessions (`shareSessions`): its
   * sessions are every caller's, so the bounds per principal and per key are the pool's own, and
   * callers wait their turn to open one as themselves (`AcquireOptions.caller`).
   */
  readonly sharedPrincipal?: string;
  /**
   * Sessions the quiet calls of a shared key spread over under load (default the cores less one,
   * at least 1: a server process works on one core, and the wrap takes one of its own).
   */
  readonly spread?: number;
  readonly protocolVersion?: LegacyVersion;
  /** Attempts to open a session before giving up (with exponential backoff). */
  readonly openAttempts?: number;
  /** Answers a push of `session` that belongs to no call. */
  readonly onUnrelatedPush?: (key: SessionKey, push: JsonRpcRequest, session: UpstreamSession) => Promise<RpcOutcome>;
  /** See `UpstreamSessionOptions.awaitsCall`. */
  readonly awaitsCall?: (key: SessionKey, push: JsonRpcRequest) => boolean;
  readonly onNotification?: (key: SessionKey, session: UpstreamSession, method: string, params: JsonObject | undefined) => void;
  readonly onSessionClosed?: (key: SessionKey, reason: string) => void;
  /** A session was opened: the server answered its `initialize`. */
  readonly onSessionOpened?: (key: SessionKey, session: UpstreamSession) => void;
  /** A session could not be opened, after its retries: `error` is what the last attempt met. */
  readonly onOpenFailed?: (key: SessionKey, error: unknown) => void;
}

/** How a caller wants its session. */
export interface AcquireOptions {
  /**
   * The call is known to push requests: prefer a session where no other pushable call is in
   * flight (opening another, up to `maxPerKey`), so its pushes are never ambiguous.
   */
  readonly exclusive?: boolean;
  /**
   * With `exclusive`, when every open session of the key has a pushable call in flight:
   * open another (true, the default, up to `maxPerKey`) or wait briefly for one to be free first
   * (false: for calls not yet known to push, so that a burst of first calls does not open a
   * session each). At the bound, or without room in the pool, the caller waits either way (up to
   * `waitMs`, then it is refused): a session shared by two pushable calls could not tell their
   * pushes apart.
   */
  readonly open?: boolean;
  /** Asked again after each wait: whether the caller still wants a session alone. */
  readonly stillExclusive?: () => boolean;
  /**
   * With `exclusive`: the caller never shares a session, even after waiting in vain at the bound
   * (it is refused then, as a call known to push is): its call changes what the server holds
   * for every call on the session.
   */
  readonly neverShare?: boolean;
  /** Stops waiting (the acquire rejects). */
  readonly signal?: CancelSignal;
  /**
   * Who asks, when the key is filed under another principal (callers sharing sessions): its
   * openings wait their turn at the gate as this caller's, known or not.
   */
  readonly caller?: string;
  /**
   * Set to true when the session was handed over alone (`exclusive`): it is reserved for the
   * caller's call, made with `reserved`, or the caller calls `session.unreserve()`.
   */
  readonly reservation?: { reserved: boolean };
  /** Set to true when the session was opened for this caller (not one that was open already). */
  readonly opened?: { opened: boolean };
}
