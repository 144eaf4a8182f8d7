/**
 * One initialized session with a legacy server over a pipe: it sends `initialize` and
 * `notifications/initialized`, remaps request ids and progress tokens so callers never collide,
 * ties the server's notifications and pushed requests to the call they belong to, and gives every
 * call exactly one outcome, whatever the server or the pipe does. It does not decide what a push
 * becomes (the wrap does, through the call's hooks).
 */
import { AdapterError, ErrorCode, type WireError } from '../core/errors.ts';
import { classify, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import type { InitializeResult } from '../core/legacy/lifecycle.ts';
import { isRecord, type JsonObject } from '../core/primitives.ts';
import { closedReason, failureOf, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { LONE, SENT, type MessageExtra, type Transport } from '../transport/transport.ts';
import { isMrtrMethod } from '../core/modern/methods.ts';
import { DEFAULTS } from '../util/defaults.ts';
import type { CancelSignal } from '../util/signals.ts';
import type { CallHooks, RpcOutcome, UpstreamSessionOptions } from './callHooks.ts';
import { IdTable } from '../util/idTable.ts';

interface HeldPush {
  readonly settle: (owner: Pending | undefined) => void;
  /** It waits for the session's next call even when none is in flight (see `awaitsCall`). */
  readonly awaitsCall: boolean;
}

/** A call in flight. Settled once, through `UpstreamSession.#settle`. */
interface Pending {
  readonly upstreamId: number;
  readonly method: string;
  readonly hooks: CallHooks;
  readonly progressToken: string | undefined;
  readonly callerToken: string | number | undefined;
  readonly pushable: boolean;
  /** Resolves the caller's promise. */
  resolve: (outcome: RpcOutcome) => void;
  /** Set when the call listens to a signal or hands out a cancel function. */
  onAbort: (() => void) | undefined;
  settled: boolean;
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

function cancelled(): RpcOutcome {
  return { error: { code: ErrorCode.InternalError, message: 'Request cancelled' } };
}

function noop(): void {}

function closedError(reason: string, failure?: UpstreamFailure): WireError {
  const message = `Internal error: the upstream server ${reason}`;
  return failure && Object.keys(failure).length > 0
    ? { code: ErrorCode.InternalError, message, data: { ...failure } }
    : { code: ErrorCode.InternalError, message };
}

/** A legacy session over one transport. */
export class UpstreamSession {
  readonly options: UpstreamSessionOptions;
  #transport: Transport;
  #nextId = 1;
  /** Not a `Map`: see `IdTable`. */
  #pending = new IdTable<Pending>();
  #closed: string | undefined;
  /** What the upstream said when the pipe closed under us (not when we closed it). */
  #failure: UpstreamFailure | undefined;
  #initialize: InitializeResult | undefined;
  #lastUsed = 0;
  #holds = 0;
  #held: HeldPush[] = [];
  #pushable = 0;
  #reserved = 0;
  /** See `announce`. */
  #claim: Claim | undefined;
  /** Pushes that name no call, read and not yet given to a call (gathered with their copies, or held). */
  #arriving = 0;
  readonly #closedController = new AbortController();

  constructor(transport: Transport, options: UpstreamSessionOptions) {
    this.#transport = transport;
    this.options = options;
    transport.onmessage = (message, extra) => this.#receive(message, extra as MessageExtra | undefined);
    transport.onclose = () => {
      this.#failure = transport.failure;
      this.#shutdown(closedReason(this.#failure));
    };
    transport.onerror = () => {
      /* garbage on the pipe is skipped; a broken pipe surfaces through onclose */
    };
  }

  /** The server's `initialize` result, once open. */
  get initializeResult(): InitializeResult | undefined {
    return this.#initialize;
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** Aborts when the session closes, for whatever reason. */
  get closedSignal(): AbortSignal {
    return this.#closedController.signal;
  }

  /** Calls in flight. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /** Calls in flight that may push requests (see `CallHooks.pushable`). */
  get pushableInFlight(): number {
    return this.#pushable;
  }

  /**
   * Counts a pushable call before it is sent, so that the session is not handed to another
   * such call meanwhile. The call is then made with `reserved`; a caller that sends nothing calls
   * `unreserve()`.
   */
  reserve(): void {
    this.#reserved++;
    this.#pushable++;
  }

  /** Gives back a reservation no call used. */
  unreserve(): void {
    if (this.#reserved === 0) return;
    this.#reserved--;
    this.#pushable--;
    if (this.#held.length > 0) this.#settleHeld();
    this.options.onPushableEnd?.();
  }

  /** Long-lived users (listen streams) that keep the session from idle eviction. */
  get holds(): number {
    return this.#holds;
  }

  /** Keeps the session open until the returned release is called (idempotent release). */
  hold(): () => void {
    this.#holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds--;
      if (this.#holds === 0 && this.#pending.size === 0) this.options.onIdle?.();
    };
  }

  /** When the session last finished or started a call (a caller-supplied clock reading). */
  get lastUsed(): number {
    return this.#lastUsed;
  }

  /** What the upstream said when the pipe closed under us, if it did. */
  get failure(): UpstreamFailure | undefined {
    return this.#failure;
  }

  /**
   * Starts the transport and performs the handshake. A server that is gone before it answered
   * `initialize` fails with `upstream-exited` (it did not start: no retry will help); one that
   * refused it with `upstream-error`. Either way the error carries what the upstream said.
   */
  async open(): Promise<InitializeResult> {
    try {
      await this.#transport.start();
    } catch (e) {
      throw e instanceof AdapterError
        ? e
        : new AdapterError('upstream-error', `the upstream server could not be reached: ${e instanceof Error ? e.message : String(e)}`, {
            cause: e,
          });
    }
    const timeout = AbortSignal.timeout(this.options.initializeTimeoutMs ?? DEFAULTS.initializeTimeoutMs);
    const outcome = await this.call(
      'initialize',
      { protocolVersion: this.options.protocolVersion, capabilities: this.options.capabilities, clientInfo: this.options.clientInfo },
      { signal: timeout },
    );
    if ('error' in outcome) {
      const gone = this.#failure !== undefined;
      await this.close();
      if (gone)
        throw new AdapterError('upstream-exited', `it ${closedReason(this.#failure, 'before it answered initialize')}`, {
          cause: outcome.error,
          upstream: this.#failure,
        });
      const said = outcome.error.message.replace(/^Internal error: /, '');
      throw new AdapterError('upstream-error', `initialize failed: ${said}`, {
        cause: outcome.error,
        upstream: failureOf(outcome.error.data),
      });
    }
    this.#initialize = outcome.result as InitializeResult;
    await this.#transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return this.#initialize;
  }

  /**
   * Sends one request upstream and resolves with its result or error. Aborting the signal sends
   * `notifications/cancelled` upstream and resolves with a cancellation error. `reserved`: the call
   * uses the reservation its caller got with the session (see `reserve`).
   */
  call(method: string, params: JsonObject | undefined, hooks: CallHooks = {}, reserved = false): Promise<RpcOutcome> {
    if (reserved && (this.#closed || hooks.signal?.aborted)) this.unreserve();
    if (this.#closed) return Promise.resolve({ error: closedError(this.#closed, this.#failure) });
    if (hooks.signal?.aborted) return Promise.resolve(cancelled());
    const upstreamId = this.#nextId++;
    let sent = params;
    let progressToken: string | undefined;
    let callerToken: string | number | undefined;
    const meta = params && isRecord(params['_meta']) ? params['_meta'] : undefined;
    if (meta && (typeof meta['progressToken'] === 'string' || typeof meta['progressToken'] === 'number')) {
      callerToken = meta['progressToken'];
      progressToken = `p${upstreamId}`;
      sent = { ...params, _meta: { ...meta, progressToken } };
    }
    const pending: Pending = {
      upstreamId,
      method,
      hooks,
      progressToken,
      callerToken,
      pushable: hooks.pushable ?? isMrtrMethod(method),
      resolve: noop,
      onAbort: undefined,
      settled: false,
    };
    const promise = new Promise<RpcOutcome>((resolve) => (pending.resolve = resolve));
    this.#pending.set(upstreamId, pending);
    if (pending.pushable) {
      if (reserved && this.#reserved > 0) this.#reserved--;
      else this.#pushable++;
      if (this.#held.length > 0) this.#settleHeld();
    } else if (reserved) this.unreserve();
    if (hooks.signal || hooks.onCancel) {
      const onAbort = (): void => this.#settle(pending, cancelled(), true);
      pending.onAbort = onAbort;
      hooks.signal?.addEventListener('abort', onAbort, { once: true });
      hooks.onCancel?.(onAbort);
    }
    const request: JsonRpcRequest =
      sent === undefined ? { jsonrpc: '2.0', id: upstreamId, method } : { jsonrpc: '2.0', id: upstreamId, method, params: sent };
    // The session's one call in flight: nothing else of ours is due on the pipe this turn.
    const sending = this.#pending.size === 1 ? this.#transport.send(request, LONE) : this.#transport.send(request);
    if (sending !== SENT)
      sending.catch((e: unknown) =>
        this.#settle(pending, { error: closedError(`could not be reached (${e instanceof Error ? e.message : String(e)})`) }),
      );
    return promise;
  }

  /**
   * Resolves once the server answered a `ping` sent now, or could not be asked, or `signal`
   * aborted (the ping is then cancelled): what the server wrote before it read the ping has come
   * in by then (see `gatherRound`). On a transport whose messages may come on streams apart (not
   * `ordered`), a turn of the event loop after the answer lets the reads already made come in too.
   */
  barrier(signal?: CancelSignal): Promise<void> {
    const answered = this.call('ping', undefined, signal ? { signal, pushable: false } : { pushable: false });
    return this.#transport.ordered ? answered.then(noop) : answered.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  }

  /** Ends a call (once): its bookkeeping, a cancellation upstream when asked, then its caller's answer. */
  #settle(pending: Pending, outcome: RpcOutcome, cancelUpstream = false): void {
    if (pending.settled) return;
    pending.settled = true;
    this.#pending.delete(pending.upstreamId);
    if (pending.pushable) {
      this.#pushable--;
      this.options.onPushableEnd?.();
    }
    if (this.#held.length > 0) this.#settleHeld();
    if (pending.onAbort) pending.hooks.signal?.removeEventListener('abort', pending.onAbort);
    if (cancelUpstream && !this.#closed) {
      this.#transport
        .send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: pending.upstreamId, reason: 'The client cancelled the request' },
        })
        .catch(() => {});
    }
    pending.resolve(outcome);
    if (this.#pending.size === 0 && this.#holds === 0 && !this.#closed) this.options.onIdle?.();
  }

  /**
   * Sends notification `method` upstream and gives `hooks.onPush` (with `before` true) the requests
   * the server pushes in answer: every push that names no call, from now until a barrier asked
   * after the last of them was answered passes with no new one (so the server has read the
   * answers, and acted on them, before the caller's next message), and the pushes held waiting for
   * the session's next call. Resolves with what each was answered (at once when the session is
   * closed or `hooks.signal` aborts). For a caller that has the session alone: no other call that
   * may push is in flight, or its pushes would be taken too.
   */
  async announce(method: string, hooks: CallHooks): Promise<Array<{ readonly method: string; readonly outcome: RpcOutcome }>> {
    const answered: Claim['answered'] = [];
    if (this.#closed || hooks.signal?.aborted) return answered;
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
      resolve: noop,
      onAbort: undefined,
      settled: false,
    };
    // One announcement at a time: a later one waits for the one before to end.
    while (this.#claim) await this.#claim.ended;
    if (this.#closed || hooks.signal?.aborted) return answered;
    let end = noop;
    const claim: Claim = { owner, seen: 0, open: 0, answered, wake: undefined, ended: new Promise<void>((resolve) => (end = resolve)) };
    this.#claim = claim;
    for (const h of [...this.#held]) h.settle(owner);
    const signal = hooks.signal;
    try {
      await this.notify(method);
      for (let i = 0; i < ANNOUNCE_BARRIERS && !this.#closed && !signal?.aborted; i++) {
        const seen = claim.seen;
        await this.barrier(signal);
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
        if ((this.#arriving === 0 && claim.open === 0) || this.#closed || signal?.aborted) {
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

  /** Sends a notification upstream (best effort). */
  async notify(method: string, params?: JsonObject): Promise<void> {
    if (this.#closed) return;
    await this.#transport.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }).catch(() => {});
  }

  /** Records use at `now` (for idle eviction). */
  touch(now: number): void {
    this.#lastUsed = now;
  }

  /** The call whose progress token (`p` and its upstream id, see `call`) the server named. */
  #byProgressToken(token: string): Pending | undefined {
    const pending = token.startsWith('p') ? this.#pending.get(Number(token.slice(1))) : undefined;
    return pending?.progressToken === token ? pending : undefined;
  }

  #owner(extra: MessageExtra | undefined, pushableOnly: boolean): Pending | undefined {
    const related = extra?.relatedRequestId;
    if (typeof related === 'number') return this.#pending.get(related);
    let only: Pending | undefined;
    for (const p of this.#pending.values()) {
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
    if (typeof related === 'number') return this.#pending.get(related);
    const candidates = this.pushableInFlight;
    const awaitsCall = this.options.awaitsCall?.(push) ?? false;
    if (candidates <= 1) {
      const owner = this.#owner(undefined, true);
      // The one candidate may be a call reserved and not sent yet (the session was opened for it):
      // the push waits for it. With none, a push only the client can answer waits for its next call.
      if (owner) return owner;
      if (this.#reserved === 0 && !awaitsCall) return undefined;
    }
    return new Promise<Pending | undefined>((resolve) => {
      const timer = setTimeout(() => settle(undefined), this.options.ambiguityTimeoutMs ?? DEFAULTS.pushAmbiguityMs);
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
  #settleHeld(): void {
    if (this.#closed) {
      for (const h of [...this.#held]) h.settle(undefined);
      return;
    }
    if (this.pushableInFlight > 1) return;
    const owner = this.#owner(undefined, true);
    if (!owner && this.#reserved > 0) return;
    for (const h of [...this.#held]) if (owner || !h.awaitsCall) h.settle(owner);
  }

  #receive(raw: JsonRpcMessage, extra: MessageExtra | undefined): void {
    const c = classify(raw);
    if (!c.ok) return;
    const v = c.value;
    switch (v.kind) {
      case 'result':
      case 'error': {
        const id = v.message.id;
        const pending = typeof id === 'number' ? this.#pending.get(id) : undefined;
        if (!pending) return;
        this.#settle(pending, v.kind === 'result' ? { result: v.message.result } : { error: v.message.error });
        return;
      }
      case 'notification': {
        const params = v.message.params;
        if (v.message.method === 'notifications/progress' && params) {
          const token = params['progressToken'];
          const pending = typeof token === 'string' ? this.#byProgressToken(token) : undefined;
          if (pending) pending.hooks.onProgress?.({ ...params, progressToken: pending.callerToken });
          return;
        }
        if (v.message.method === 'notifications/message' && params) {
          const owner = this.#owner(extra, false);
          if (owner?.hooks.onLog) owner.hooks.onLog(params);
          else this.options.onNotification?.(v.message.method, params);
          return;
        }
        if (v.message.method === 'notifications/cancelled' && params) {
          for (const p of this.#pending.values()) p.hooks.onPushCancelled?.(params['requestId'] as RequestId);
          return;
        }
        this.options.onNotification?.(v.message.method, params);
        return;
      }
      case 'request':
        void this.#push(v.message, extra);
        return;
      case 'batch':
        return;
    }
  }

  async #push(push: JsonRpcRequest, extra: MessageExtra | undefined): Promise<void> {
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
      const copies = this.options.copies;
      const verdict =
        push.method !== 'ping' && copies && extra?.relatedRequestId === undefined
          ? await copies.gather(push, () => this.pushableInFlight + (this.#claim ? 1 : 0))
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
          else if (this.options.onUnrelatedPush) outcome = await this.options.onUnrelatedPush(push);
          else outcome = { error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method}` } };
        } catch (e) {
          outcome = { error: { code: ErrorCode.InternalError, message: `Internal error: ${e instanceof Error ? e.message : String(e)}` } };
        }
      }
      if (this.#closed) return;
      const reply: JsonRpcMessage =
        'result' in outcome
          ? { jsonrpc: '2.0', id: push.id, result: outcome.result }
          : { jsonrpc: '2.0', id: push.id, error: outcome.error };
      await this.#transport.send(reply).catch(() => {});
      claimed?.answered.push({ method: push.method, outcome });
    } finally {
      arrived();
      if (claimed) {
        claimed.open--;
        claimed.wake?.();
      }
    }
  }

  #shutdown(reason: string): void {
    if (this.#closed) return;
    this.#closed = reason;
    this.#closedController.abort();
    for (const p of this.#pending.values()) this.#settle(p, { error: closedError(reason, this.#failure) });
    this.#settleHeld();
    this.options.onClose?.(reason);
  }

  /**
   * Closes the pipe; every call still in flight gets an error, and is first cancelled upstream so
   * the server stops its work (closing the pipe alone does not tell every server). Idempotent.
   */
  async close(): Promise<void> {
    const cancels: Array<Promise<void>> = [];
    if (!this.#closed) {
      for (const p of this.#pending.values()) {
        if (p.method === 'initialize') continue;
        cancels.push(
          this.#transport
            .send({
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId: p.upstreamId, reason: 'The connection is closing' },
            })
            .catch(() => {}),
        );
      }
    }
    this.#shutdown('was shut down');
    await Promise.all(cancels);
    await this.#transport.close().catch(() => {});
  }
}
