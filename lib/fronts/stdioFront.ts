/**
 * The stdio line server every wrap is served through: newline-delimited JSON-RPC on our own
 * stdin/stdout (or any pair of streams). Modern requests are served statelessly and concurrently;
 * a legacy `initialize` opens one legacy session relayed untouched to the pipe the wrap opens
 * (`stdioLegacy.ts`; a client that falls back to it after modern requests gets no late answers to
 * those). A wrap that
 * serves legacy sessions only relays everything to its session. `notifications/cancelled` cancels
 * the modern request it names; end of input shuts down cleanly. Ids a JavaScript number would change
 * are answered as the client wrote them (`exactIds.ts`).
 */
import type { Readable, Writable } from 'node:stream';
import { claimedEra } from '../core/era.ts';
import { errorResponse, parseMessage, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import { Cancellation } from '../util/signals.ts';
import { IdTable } from '../util/idTable.ts';
import { LineFramer } from '../transport/lineFramer.ts';
import { exactJson, holdExactIds } from '../transport/exactIds.ts';
import { turnBatcher, type TurnWrite } from '../transport/turnBatcher.ts';
import type { Served } from './served.ts';
import { StdioLegacySession } from './stdioLegacy.ts';
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

/** The line server of one pipe: what is in flight on it, and how each line read is served. */
class StdioFront {
  /** Resolves when the input has ended and everything in flight was answered. */
  readonly done: Promise<void>;
  readonly #wrap: Served;
  readonly #options: StdioFrontOptions;
  readonly #output: Writable;
  readonly #principal: string;
  readonly #serveModern: Served['serveModern'];
  /**
   * Every modern request in flight, whatever its id, under a number of our own: all are ended when
   * the input ends. Not `Map`s and `Set`s, whose entries come and go on every request (see `IdTable`).
   */
  readonly #serving = new IdTable<Serving>();
  #nextServing = 0;
  /**
   * The modern request in flight under each id (its number in `#serving`), for
   * `notifications/cancelled` (a reused id names the latest). A `Map` holding only numbers: what
   * its dropped tables keep is no more than the ids.
   */
  readonly #active = new Map<RequestId, number>();
  /** What else is in flight: legacy relays, requests answered by the modern rules alone. */
  readonly #inflight = new IdTable<Promise<void>>();
  #nextTracked = 0;
  readonly #legacy: StdioLegacySession;
  #ended = false;
  readonly #batched: TurnWrite;
  readonly #framer = new LineFramer((line) => this.#onLine(line));
  #finish!: () => void;

  constructor(wrap: Served, output: Writable, options: StdioFrontOptions) {
    this.#wrap = wrap;
    this.#options = options;
    this.#output = output;
    this.#principal = options.principal ?? 'stdio';
    this.#serveModern = wrap.serveModern;
    this.#batched = turnBatcher(output);
    // Its answer to the one request in flight is all that is due this turn when no modern request is.
    this.#legacy = new StdioLegacySession(wrap.legacy, (message, lone) => this.#write(message, lone && this.#serving.size === 0));
    this.done = new Promise<void>((resolve) => (this.#finish = resolve));
  }

  /** Reads a chunk of the input. */
  push(chunk: Buffer | string): void {
    this.#framer.push(chunk);
  }

  /** `lone`: the one request in flight is answered, so nothing else is due this turn. Ids go out as the client wrote them. */
  #write(message: JsonRpcMessage, lone?: boolean): void {
    if (this.#output.writable) this.#batched(`${exactJson(message)}\n`, lone);
  }

  #track(p: Promise<void>): void {
    const sequence = this.#nextTracked++;
    this.#inflight.set(sequence, p);
    void p.finally(() => this.#inflight.delete(sequence));
  }

  #onLine(line: string): void {
    const parsed = parseMessage(line, { rewrite: holdExactIds });
    if (!parsed.ok) {
      this.#write(errorResponse(parsed.error.id, parsed.error));
      return;
    }
    const c = parsed.value;
    const serveModern = this.#serveModern;
    if (!serveModern) {
      // Legacy sessions only: everything belongs to the one session, opened by the first message.
      this.#legacy.open();
      this.#track(this.#legacy.relay(c.kind === 'batch' ? (c.items as never) : c.message));
      return;
    }
    if (c.kind === 'batch') {
      if (this.#legacy.started) this.#track(this.#legacy.relay(c.items as never));
      else
        this.#write(
          errorResponse(null, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: batches belong to a legacy session' }),
        );
      return;
    }
    if (c.kind === 'request' && claimedEra(c.message) === 'modern') {
      this.#serve(serveModern, c.message);
      return;
    }
    if (c.kind === 'notification' && c.message.method === 'notifications/cancelled' && isRecord(c.message.params)) {
      const named = this.#active.get(c.message.params['requestId'] as RequestId);
      const target = named === undefined ? undefined : this.#serving.get(named);
      if (target) {
        target.controller.abort();
        return;
      }
    }
    if (c.kind === 'request' && c.message.method === 'initialize' && !this.#legacy.started) {
      // A client that sent modern requests and now `initialize` fell back to the legacy era (it
      // gave up waiting): what it asked before gets no late answer, and is cancelled upstream.
      this.cancelAll();
      this.#legacy.open();
      this.#track(this.#legacy.relay(c.message));
      return;
    }
    if (this.#legacy.started) {
      this.#track(this.#legacy.relay(c.message));
      return;
    }
    if (c.kind === 'request') {
      // Neither modern nor inside a legacy session: answered by the modern rules (missing _meta).
      this.#track(
        serveModern(c.message, { principal: this.#principal, signal: new Cancellation(), notify: () => {} }).then(
          (answer) => answer && this.#write(answer.message),
        ),
      );
    }
  }

  /** Serves a modern request, cancelled by `notifications/cancelled` naming its id or when the input ends. */
  #serve(serveModern: NonNullable<Served['serveModern']>, request: JsonRpcRequest): void {
    const sequence = this.#nextServing++;
    const controller = new Cancellation();
    // Its own bookkeeping ends where its answer is written (no promise chained on it per table).
    const answered = (message: JsonRpcMessage | undefined) => {
      try {
        if (message) this.#write(message, this.#serving.size === 1 && this.#inflight.size === 0);
      } finally {
        this.#serving.delete(sequence);
        if (this.#active.get(request.id) === sequence) this.#active.delete(request.id);
      }
    };
    const served = serveModern(request, { principal: this.#principal, signal: controller.signal, notify: (n) => this.#write(n) }).then(
      (answer) => answered(answer && !controller.signal.aborted ? answer.message : undefined),
      () => answered(errorResponse(request.id, { code: ErrorCode.InternalError, message: 'Internal error' })),
    );
    // Listed once it is under way: its answer comes in a later turn at the earliest.
    this.#serving.set(sequence, { controller, isCall: request.method !== 'subscriptions/listen', served });
    this.#active.set(request.id, sequence);
  }

  /** Cancels every modern request in flight. */
  cancelAll(): void {
    for (const entry of this.#serving.values()) entry.controller.abort();
  }

  /** Stops reading; calls in flight are answered (within the grace period), then everything ends. */
  async end(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#framer.end();
    // Calls in flight are answered (within the grace period); listens end with the wrap. The grace
    // timer holds the process: with nothing else alive (an in-process server), it would end first.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise((r) => (timer = setTimeout(r, this.#options.graceMs ?? DEFAULTS.drainGraceMs)));
    await Promise.race([Promise.allSettled(this.#serving.values().flatMap((e) => (e.isCall ? [e.served] : []))), grace]);
    clearTimeout(timer);
    if (this.#options.closeOnEnd !== false) await this.#wrap.close();
    this.cancelAll();
    while (this.#inflight.size > 0 || this.#serving.size > 0)
      await Promise.allSettled([...this.#inflight.values(), ...this.#serving.values().map((e) => e.served)]);
    await this.#legacy.close();
    this.#finish();
  }
}

/** Serves a wrap on stdio until the input ends. */
export function serveStdio(wrap: Served, options: StdioFrontOptions = {}): RunningStdioFront {
  const input = options.input ?? process.stdin;
  const front = new StdioFront(wrap, options.output ?? process.stdout, options);
  input.on('data', (chunk: Buffer | string) => front.push(chunk));
  input.once('end', () => void front.end());
  input.once('close', () => void front.end());
  return {
    done: front.done,
    async finish() {
      input.pause();
      await front.end();
    },
    async close() {
      front.cancelAll();
      input.pause();
      await front.end();
    },
  };
}
