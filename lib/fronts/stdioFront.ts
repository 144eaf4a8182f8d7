/**
 * The stdio line server every wrap is served through: newline-delimited JSON-RPC on our own
 * stdin/stdout (or any pair of streams). Modern requests are served statelessly and concurrently;
 * a legacy `initialize` opens one legacy session relayed untouched to the pipe the wrap opens (a
 * client that falls back to it after modern requests gets no late answers to those). A wrap that
 * serves legacy sessions only relays everything to its session. `notifications/cancelled` cancels
 * the modern request it names; end of input shuts down cleanly. Ids a JavaScript number would change
 * are answered as the client wrote them (`exactIds.ts`).
 */
import type { Readable, Writable } from 'node:stream';
import { claimedEra } from '../core/era.ts';
import { errorResponse, isRequestId, parseMessage, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { closedReason, describeFailure, upstreamUnavailable, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { isRecord } from '../core/primitives.ts';
import { Cancellation } from '../util/signals.ts';
import { IdTable } from '../util/idTable.ts';
import { LineFramer } from '../transport/lineFramer.ts';
import { exactJson, holdExactIds } from '../transport/exactIds.ts';
import { turnBatcher } from '../transport/turnBatcher.ts';
import { LONE, type Transport } from '../transport/transport.ts';
import type { Served } from './served.ts';
import type { RelayTelemetry } from '../observe/relayTelemetry.ts';
import { ErrorCode } from '../core/errors.ts';
import { DEFAULTS } from '../util/defaults.ts';

/** Options of {@link serveStdio}. */
export interface StdioFrontOptions {
  readonly input?: Readable;
  readonly output?: Writable;
  /** The principal every request on this pipe acts as (one user per process). */
  readonly principal?: string;
  /** Close the wrap when the input ends (default true). */
  readonly closeOnEnd?: boolean;
  /** After the input ends, how long requests in flight may take before they are cancelled (default 30 s). */
  readonly graceMs?: number;
}

/** A wrap served on stdin/stdout: how to stop it and when it is done. */
export interface RunningStdioFront {
  /** Resolves when the input has ended and everything in flight was answered. */
  readonly done: Promise<void>;
  /** Stops reading; what is in flight is answered (within the grace period), then as `close`. */
  finish(): Promise<void>;
  /** Cancels what is in flight and stops. */
  close(): Promise<void>;
}

/** A modern request being served. */
interface Serving {
  readonly controller: Cancellation;
  /** Not `subscriptions/listen`: answered within the grace period when the input ends. */
  readonly isCall: boolean;
  /** Settles once its answer is written. */
  readonly served: Promise<void>;
}

/** Serves a wrap on stdio until the input ends. */
export function serveStdio(wrap: Served, options: StdioFrontOptions = {}): RunningStdioFront {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const principal = options.principal ?? 'stdio';
  const serveModern = wrap.serveModern;
  /**
   * Every modern request in flight, whatever its id, under a number of our own: all are ended when
   * the input ends. Not `Map`s and `Set`s, whose entries come and go on every request (see `IdTable`).
   */
  const serving = new IdTable<Serving>();
  let nextServing = 0;
  /**
   * The modern request in flight under each id (its number in `serving`), for
   * `notifications/cancelled` (a reused id names the latest). A `Map` holding only numbers: what
   * its dropped tables keep is no more than the ids.
   */
  const active = new Map<RequestId, number>();
  /** What else is in flight: legacy relays, requests answered by the modern rules alone. */
  const inflight = new IdTable<Promise<void>>();
  let nextTracked = 0;
  let legacy: Transport | undefined;
  /** What is observed of the legacy session, when anything is. */
  let legacyObserved: RelayTelemetry | undefined;
  let legacyOpening: Promise<Transport | undefined> | undefined;
  let ended = false;
  const batched = turnBatcher(output);
  /** `lone`: the one request in flight is answered, so nothing else is due this turn. Ids go out as the client wrote them. */
  const write = (message: JsonRpcMessage, lone?: boolean) => {
    if (output.writable) batched(`${exactJson(message)}\n`, lone);
  };

  /** Requests of the legacy session the upstream has not answered: answered with an error if it goes. */
  const unanswered = new Set<RequestId>();
  /** Why the legacy session's upstream is gone (once it is). */
  let legacyGone: { detail: string; failure: UpstreamFailure | undefined } | undefined;
  const legacyGoneError = () => upstreamUnavailable(legacyGone?.detail ?? 'it could not be started', legacyGone?.failure);
  /** Resolves when the legacy session's upstream has closed (and `legacyGone` says why). */
  let legacyClosed: Promise<void> = Promise.resolve();

  const openLegacy = async (): Promise<Transport | undefined> => {
    let upstream: Transport | undefined;
    let spoke = false;
    try {
      upstream = await wrap.legacy.connect();
      const own = upstream;
      const observed = wrap.legacy.observe?.('pipe');
      let closed!: () => void;
      legacyClosed = new Promise((resolve) => (closed = resolve));
      own.onmessage = (m) => {
        spoke = true;
        // The answer to the one request in flight is all that is due this turn.
        const answer = !('method' in m) && isRequestId(m.id) && unanswered.delete(m.id);
        observed?.answered(m);
        write(m, answer && unanswered.size === 0 && serving.size === 0);
      };
      own.onclose = () => {
        if (legacy === own) legacy = undefined;
        const failure = own.failure;
        legacyGone = {
          detail: `it ${failure ? closedReason(failure, spoke ? undefined : 'before it answered initialize') : 'closed the connection'}`,
          failure,
        };
        // One that never said a word did not start: the wrap's owner hears of it.
        if (!spoke) wrap.legacy.failed?.(legacyGone.detail);
        for (const id of unanswered) write(errorResponse(id, legacyGoneError()));
        unanswered.clear();
        observed?.closed(legacyGone.detail);
        closed();
      };
      await own.start();
      legacy = own;
      legacyObserved = observed;
      return own;
    } catch (e) {
      const failure = upstream?.failure;
      legacyGone = {
        detail: failure
          ? (describeFailure(failure) ?? (e instanceof Error ? e.message : String(e)))
          : e instanceof Error
            ? e.message
            : String(e),
        failure,
      };
      wrap.legacy.failed?.(legacyGone.detail);
      return undefined;
    }
  };

  const relay = async (message: JsonRpcMessage | JsonRpcMessage[]) => {
    // A batch is relayed as it is, and what the server makes of it is its own (2025-03-26 alone has them).
    const requests = Array.isArray(message)
      ? []
      : [message].filter((m): m is JsonRpcRequest => 'method' in m && 'id' in m && isRequestId(m.id));
    const upstream = legacy ?? (await legacyOpening);
    if (upstream && upstream === legacy) {
      for (const r of requests) unanswered.add(r.id);
      try {
        const sent = (legacyObserved ? legacyObserved.sent(message) : message) as JsonRpcMessage;
        // The session's one request in flight: nothing else is due on the pipe this turn.
        await (requests.length === 1 && unanswered.size === 1 ? upstream.send(sent, LONE) : upstream.send(sent));
        return;
      } catch {
        // Going: its close answers them with its own account of why; if it does not come soon, below.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([legacyClosed, new Promise((r) => (timer = setTimeout(r, 1000)))]);
        clearTimeout(timer);
        if (requests.every((r) => !unanswered.has(r.id))) return;
      }
    }
    for (const r of requests) {
      unanswered.delete(r.id);
      write(errorResponse(r.id, legacyGoneError()));
    }
  };

  const track = (p: Promise<void>) => {
    const sequence = nextTracked++;
    inflight.set(sequence, p);
    void p.finally(() => inflight.delete(sequence));
  };

  const onLine = (line: string) => {
    const parsed = parseMessage(line, { rewrite: holdExactIds });
    if (!parsed.ok) {
      write(errorResponse(parsed.error.id, parsed.error));
      return;
    }
    const c = parsed.value;
    if (!serveModern) {
      // Legacy sessions only: everything belongs to the one session, opened by the first message.
      legacyOpening ??= openLegacy();
      track(relay(c.kind === 'batch' ? (c.items as never) : c.message));
      return;
    }
    if (c.kind === 'batch') {
      if (legacy || legacyOpening) track(relay(c.items as never));
      else write(errorResponse(null, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: batches belong to a legacy session' }));
      return;
    }
    if (c.kind === 'request' && claimedEra(c.message) === 'modern') {
      const request = c.message;
      const sequence = nextServing++;
      const controller = new Cancellation();
      // Its own bookkeeping ends where its answer is written (no promise chained on it per table).
      const answered = (message: JsonRpcMessage | undefined) => {
        try {
          if (message) write(message, serving.size === 1 && inflight.size === 0);
        } finally {
          serving.delete(sequence);
          if (active.get(request.id) === sequence) active.delete(request.id);
        }
      };
      const served = serveModern(request, { principal, signal: controller.signal, notify: (n) => write(n) }).then(
        (answer) => answered(answer && !controller.signal.aborted ? answer.message : undefined),
        () => answered(errorResponse(request.id, { code: ErrorCode.InternalError, message: 'Internal error' })),
      );
      // Listed once it is under way: its answer comes in a later turn at the earliest.
      serving.set(sequence, { controller, isCall: request.method !== 'subscriptions/listen', served });
      active.set(request.id, sequence);
      return;
    }
    if (c.kind === 'notification' && c.message.method === 'notifications/cancelled' && isRecord(c.message.params)) {
      const named = active.get(c.message.params['requestId'] as RequestId);
      const target = named === undefined ? undefined : serving.get(named);
      if (target) {
        target.controller.abort();
        return;
      }
    }
    if (c.kind === 'request' && c.message.method === 'initialize' && !legacy && !legacyOpening) {
      // A client that sent modern requests and now `initialize` fell back to the legacy era (it
      // gave up waiting): what it asked before gets no late answer, and is cancelled upstream.
      for (const entry of serving.values()) entry.controller.abort();
      legacyOpening = openLegacy();
      track(relay(c.message));
      return;
    }
    if (legacy || legacyOpening) {
      track(relay(c.message));
      return;
    }
    if (c.kind === 'request') {
      // Neither modern nor inside a legacy session: answered by the modern rules (missing _meta).
      track(
        serveModern(c.message, { principal, signal: new Cancellation(), notify: () => {} }).then(
          (answer) => answer && write(answer.message),
        ),
      );
    }
  };

  const framer = new LineFramer(onLine);
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const end = async () => {
    if (ended) return;
    ended = true;
    framer.end();
    // Calls in flight are answered (within the grace period); listens end with the wrap. The grace
    // timer holds the process: with nothing else alive (an in-process server), it would end first.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise((r) => (timer = setTimeout(r, options.graceMs ?? DEFAULTS.drainGraceMs)));
    await Promise.race([Promise.allSettled(serving.values().flatMap((e) => (e.isCall ? [e.served] : []))), grace]);
    clearTimeout(timer);
    if (options.closeOnEnd !== false) await wrap.close();
    for (const entry of serving.values()) entry.controller.abort();
    while (inflight.size > 0 || serving.size > 0)
      await Promise.allSettled([...inflight.values(), ...serving.values().map((e) => e.served)]);
    await legacy?.close();
    finish();
  };
  input.on('data', (chunk: Buffer | string) => framer.push(chunk));
  input.once('end', () => void end());
  input.once('close', () => void end());
  return {
    done,
    async finish() {
      input.pause();
      await end();
    },
    async close() {
      for (const entry of serving.values()) entry.controller.abort();
      input.pause();
      await end();
    },
  };
}
