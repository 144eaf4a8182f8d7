/**
 * One initialized session with a legacy server over a pipe: it sends `initialize` and
 * `notifications/initialized`, remaps request ids and progress tokens so callers never collide,
 * and gives every call exactly one outcome, whatever the server or the pipe does. What the server
 * sends of its own accord (its notifications and pushed requests, tied to the call they belong to)
 * is read by `upstreamPushes.ts`. It does not decide what a push becomes (the wrap does, through the
 * call's hooks).
 */
import { ErrorCode, type WireError } from '../core/errors.ts';
import { classify, type JsonRpcMessage, type JsonRpcRequest } from '../core/jsonrpc.ts';
import type { InitializeResult } from '../core/legacy/lifecycle.ts';
import { isRecord, type JsonObject } from '../core/primitives.ts';
import { closedReason, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { LONE, SENT, type MessageExtra, type Transport } from '../transport/transport.ts';
import { isMrtrMethod } from '../core/modern/methods.ts';
import type { CancelSignal } from '../util/signals.ts';
import type { CallHooks, RpcOutcome, UpstreamSessionOptions } from './callHooks.ts';
import { IdTable } from '../util/idTable.ts';
import type { Pending } from './pendingCall.ts';
import { UpstreamPushes } from './upstreamPushes.ts';
import { handshake } from './upstreamHandshake.ts';

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
  #pushable = 0;
  #reserved = 0;
  readonly #pushes: UpstreamPushes;
  readonly #closedController = new AbortController();

  constructor(transport: Transport, options: UpstreamSessionOptions) {
    this.#transport = transport;
    this.options = options;
    this.#pushes = new UpstreamPushes({
      options,
      calls: this.#pending,
      closed: () => this.#closed !== undefined,
      pushable: () => this.#pushable,
      reserved: () => this.#reserved,
      send: (message) => transport.send(message),
      notify: (method) => this.notify(method),
      barrier: (signal) => this.barrier(signal),
    });
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
    this.#pushes.settleHeld();
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
   * Starts the transport and performs the handshake (see `handshake`): a server gone before it
   * answered `initialize` fails with `upstream-exited`, one that refused it with `upstream-error`.
   */
  open(): Promise<InitializeResult> {
    return handshake(this, this.#transport, (result) => (this.#initialize = result));
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
      this.#pushes.settleHeld();
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
    this.#pushes.settleHeld();
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
  announce(method: string, hooks: CallHooks): Promise<Array<{ readonly method: string; readonly outcome: RpcOutcome }>> {
    return this.#pushes.announce(method, hooks);
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

  /** What the server sent: an answer settles its call; its notifications and pushes are read by `#pushes`. */
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
      case 'notification':
        this.#pushes.notification(v.message, extra);
        return;
      case 'request':
        void this.#pushes.request(v.message, extra);
        return;
      case 'batch':
        return;
    }
  }

  #shutdown(reason: string): void {
    if (this.#closed) return;
    this.#closed = reason;
    this.#closedController.abort();
    for (const p of this.#pending.values()) this.#settle(p, { error: closedError(reason, this.#failure) });
    this.#pushes.settleHeld();
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
