/**
 * What a legacy server sends of its own accord on an upstream session: its notifications (progress
 * and logs given to the call they belong to, cancellations of its own pushes, the rest to the
 * session's options) and the requests it pushes, each tied to the call it belongs to (held while
 * that is ambiguous, gathered with its copies over HTTP, claimed while a notification is announced)
 * and answered upstream. It does not decide what a push becomes (the call's hooks do), nor settle
 * calls (the session does, `upstreamSession.ts`).
 */
import { ErrorCode } from '../core/errors.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from '../core/jsonrpc.ts';
import type { MessageExtra } from '../transport/transport.ts';
import { DEFAULTS } from '../util/defaults.ts';
import type { IdTable } from '../util/idTable.ts';
import type { CancelSignal } from '../util/signals.ts';
import type { CallHooks, RpcOutcome, UpstreamSessionOptions } from './callHooks.ts';
import type { Pending } from './pendingCall.ts';

/** What the pushes read of their session, and what they may do with it. */
export interface PushHost {
  readonly options: UpstreamSessionOptions;
  /** The session's calls in flight, by upstream id. */
  readonly calls: IdTable<Pending>;
  readonly closed: () => boolean;
  /** Calls in flight that may push, reservations included (see `UpstreamSession.pushableInFlight`). */
  readonly pushable: () => number;
  /** Reservations no call used yet (see `UpstreamSession.reserve`). */
  readonly reserved: () => number;
  /** Sends a message upstream. */
  readonly send: (message: JsonRpcMessage) => Promise<void>;
  readonly notify: (method: string) => Promise<void>;
  readonly barrier: (signal?: CancelSignal) => Promise<void>;
}

interface HeldPush {
  readonly settle: (owner: Pending | undefined) => void;
  /** It waits for the session's next call even when none is in flight (see `awaitsCall`). */
  readonly awaitsCall: boolean;
}

/**
 * While `announce` runs: the owner the pushes that name no call are given to, and what became of
 * them. `owner` is no call in flight: it only carries the announcing caller's hooks.
 */
interface Claim {
  readonly owner: Pending;
  /** Pushes claimed so far. */
  seen: number;
  /** Claimed pushes not answered upstream yet. */
  open: number;
  readonly answered: Array<{ readonly method: string; readonly outcome: RpcOutcome }>;
  /** Called whenever a claimed push was answered, or a push naming no call was attributed. */
  wake: (() => void) | undefined;
  /** Resolves when the announcement ends. */
  readonly ended: Promise<void>;
}

/** Most barriers `announce` asks before it stops waiting for a server that keeps pushing. */
const ANNOUNCE_BARRIERS = 8;

/** The server's notifications and pushes on one upstream session. */
export class UpstreamPushes {
  readonly #host: PushHost;
  #held: HeldPush[] = [];
  /** See `announce`. */
  #claim: Claim | undefined;
  /** Pushes that name no call, read and not yet given to a call (gathered with their copies, or held). */
  #arriving = 0;

  constructor(host: PushHost) {
    this.#host = host;
  }

  /** A notification the server sent: given to the call it belongs to, else to the session's options. */
  notification(message: JsonRpcNotification, extra: MessageExtra | undefined): void {
    const params = message.params;
    if (message.method === 'notifications/progress' && params) {
      const token = params['progressToken'];
      const pending = typeof token === 'string' ? this.#byProgressToken(token) : undefined;
      if (pending) pending.hooks.onProgress?.({ ...params, progressToken: pending.callerToken });
      return;
    }
    if (message.method === 'notifications/message' && params) {
      const owner = this.#owner(extra, false);
      if (owner?.hooks.onLog) owner.hooks.onLog(params);
      else this.#host.options.onNotification?.(message.method, params);
      return;
    }
    if (message.method === 'notifications/cancelled' && params) {
      for (const p of this.#host.calls.values()) p.hooks.onPushCancelled?.(params['requestId'] as RequestId);
      return;
    }
    this.#host.options.onNotification?.(message.method, params);
  }

  /**
   * Gives `hooks.onPush` (with `before` true) the pushes that name no call until `method` has been
   * notified upstream and a barrier asked after the last of them was answered passes with no new
   * one, and the pushes held waiting for the session's next call (see `UpstreamSession.announce`).
   */
  async announce(method: string, hooks: CallHooks): Promise<Array<{ readonly method: string; readonly outcome: RpcOutcome }>> {
    const host = this.#host;
    const answered: Claim['answered'] = [];
    if (host.closed() || hooks.signal?.aborted) return answered;
    const give = hooks.onPush;
    const owner: Pending = {
      upstreamId: -1,
      method,
      hooks: {
        onPush: (push) =>
          give
            ? give(push, true)
            : Promise.resolve({ error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method}` } }),
      },
      progressToken: undefined,
      callerToken: undefined,
      pushable: true,
      resolve: () => {},
      onAbort: undefined,
      settled: false,
    };
    // One announcement at a time: a later one waits for the one before to end.
    while (this.#claim) await this.#claim.ended;
    if (host.closed() || hooks.signal?.aborted) return answered;
    let end: () => void = () => {};
    const claim: Claim = { owner, seen: 0, open: 0, answered, wake: undefined, ended: new Promise<void>((resolve) => (end = resolve)) };
    this.#claim = claim;
    for (const h of [...this.#held]) h.settle(owner);
    const signal = hooks.signal;
    try {
      await host.notify(method);
      for (let i = 0; i < ANNOUNCE_BARRIERS && !host.closed() && !signal?.aborted; i++) {
        const seen = claim.seen;
        await host.barrier(signal);
        await this.#claimSettled(claim, signal);
        if (claim.seen === seen) break;
      }
    } finally {
      if (this.#claim === claim) this.#claim = undefined;
      end();
    }
    return answered;
  }

  /** Resolves once no push naming no call is on its way and every claimed one was answered (or the session closed, or `signal` aborted). */
  #claimSettled(claim: Claim, signal: CancelSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = (): void => {
        if ((this.#arriving === 0 && claim.open === 0) || this.#host.closed() || signal?.aborted) {
          claim.wake = undefined;
          signal?.removeEventListener('abort', check);
          clearInterval(closing);
          resolve();
        }
      };
      // A session that closes meanwhile answers nothing more: it is looked at now and then.
      const closing = setInterval(check, 1000);
      closing.unref?.();
      claim.wake = check;
      signal?.addEventListener('abort', check, { once: true });
      check();
    });
  }

  /** The call whose progress token (`p` and its upstream id, see `UpstreamSession.call`) the server named. */
  #byProgressToken(token: string): Pending | undefined {
    const pending = token.startsWith('p') ? this.#host.calls.get(Number(token.slice(1))) : undefined;
    return pending?.progressToken === token ? pending : undefined;
  }

  #owner(extra: MessageExtra | undefined, pushableOnly: boolean): Pending | undefined {
    const related = extra?.relatedRequestId;
    if (typeof related === 'number') return this.#host.calls.get(related);
    let only: Pending | undefined;
    for (const p of this.#host.calls.values()) {
      if (pushableOnly && !p.pushable) continue;
      if (only) return undefined;
      only = p;
    }
    return only;
  }

  /**
   * The call a push belongs to: the one the transport names, else the only call in flight that may
   * push. With several candidates the push waits until the others finish (the pushable call cannot:
   * it is waiting for the answer), so it lands on the right call.
   */
  #attribute(extra: MessageExtra | undefined, push: JsonRpcRequest): Pending | undefined | Promise<Pending | undefined> {
    const related = extra?.relatedRequestId;
    if (typeof related === 'number') return this.#host.calls.get(related);
    const candidates = this.#host.pushable();
    const awaitsCall = this.#host.options.awaitsCall?.(push) ?? false;
    if (candidates <= 1) {
      const owner = this.#owner(undefined, true);
      // The one candidate may be a call reserved and not sent yet (the session was opened for it):
      // the push waits for it. With none, a push only the client can answer waits for its next call.
      if (owner) return owner;
      if (this.#host.reserved() === 0 && !awaitsCall) return undefined;
    }
    return new Promise<Pending | undefined>((resolve) => {
      const timer = setTimeout(() => settle(undefined), this.#host.options.ambiguityTimeoutMs ?? DEFAULTS.pushAmbiguityMs);
      timer.unref?.();
      const entry: HeldPush = { settle: (owner) => settle(owner), awaitsCall };
      const settle = (owner: Pending | undefined) => {
        clearTimeout(timer);
        this.#held = this.#held.filter((h) => h !== entry);
        resolve(owner);
      };
      this.#held.push(entry);
    });
  }

  /**
   * Settles the held pushes that can be: on the one call that may push once it is sent; as
   * unrelated once none is left (or the session closed), except those that await the next call.
   */
  settleHeld(): void {
    if (this.#held.length === 0) return;
    if (this.#host.closed()) {
      for (const h of [...this.#held]) h.settle(undefined);
      return;
    }
    if (this.#host.pushable() > 1) return;
    const owner = this.#owner(undefined, true);
    if (!owner && this.#host.reserved() > 0) return;
    for (const h of [...this.#held]) if (owner || !h.awaitsCall) h.settle(owner);
  }

  /** A request the server pushed: given to the call it belongs to (or answered otherwise), and its answer sent upstream. */
  async request(push: JsonRpcRequest, extra: MessageExtra | undefined): Promise<void> {
    const host = this.#host;
    let outcome: RpcOutcome;
    // Counted until it is given to a call (or the claim, see `announce`), or answered otherwise.
    let arriving = push.method !== 'ping' && extra?.relatedRequestId === undefined;
    if (arriving) this.#arriving++;
    const arrived = (): void => {
      if (!arriving) return;
      arriving = false;
      this.#arriving--;
      this.#claim?.wake?.();
    };
    let claimed: Claim | undefined;
    try {
      const copies = host.options.copies;
      const verdict =
        push.method !== 'ping' && copies && extra?.relatedRequestId === undefined
          ? await copies.gather(push, () => host.pushable() + (this.#claim ? 1 : 0))
          : 'handle';
      if (verdict === 'drop') return;
      if (push.method === 'ping') outcome = { result: {} };
      else if (verdict === 'refuse') {
        outcome = {
          error: {
            code: ErrorCode.InternalError,
            message: `Internal error: the server sent ${push.method} to several sessions with calls in flight; it cannot be told which call it belongs to`,
          },
        };
      } else {
        const owner = arriving && this.#claim ? this.#claim.owner : await this.#attribute(extra, push);
        if (owner && owner === this.#claim?.owner) {
          claimed = this.#claim;
          claimed.seen++;
          claimed.open++;
        }
        arrived();
        try {
          if (owner?.hooks.onPush) outcome = await owner.hooks.onPush(push);
          else if (host.options.onUnrelatedPush) outcome = await host.options.onUnrelatedPush(push);
          else outcome = { error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method}` } };
        } catch (e) {
          outcome = { error: { code: ErrorCode.InternalError, message: `Internal error: ${e instanceof Error ? e.message : String(e)}` } };
        }
      }
      if (host.closed()) return;
      const reply: JsonRpcMessage =
        'result' in outcome
          ? { jsonrpc: '2.0', id: push.id, result: outcome.result }
          : { jsonrpc: '2.0', id: push.id, error: outcome.error };
      await host.send(reply).catch(() => {});
      claimed?.answered.push({ method: push.method, outcome });
    } finally {
      arrived();
      if (claimed) {
        claimed.open--;
        claimed.wake?.();
      }
    }
  }
}
