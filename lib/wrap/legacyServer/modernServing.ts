/**
 * How `wrapLegacyServer` serves its modern requests, whatever the transport: each counted and
 * observed (spans, metrics, the access log), refused once the wrap shuts down and, while it drains,
 * unless it continues a parked call; calls go to the modern dispatch, listens to the listen hub, and
 * open listens are ended together on shutdown. The fronts and the wrap's stats read it.
 */
import { isTaskMethod } from '../../core/modern/methods.ts';
import { scope, type Scope } from '../../util/signals.ts';
import { ErrorCode } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import { errorAnswer, withTelemetry, type Answer, type ModernContext } from '../../fronts/served.ts';
import { observe, type AccessEntry } from '../../observe/requestTelemetry.ts';
import { withHeaderTrace } from '../../observe/traceContext.ts';
import type { ServeMetrics } from '../../observe/serveMetrics.ts';
import type { InputBroker } from '../mrtr/broker.ts';
import type { ListenHub } from './listen.ts';
import { serveModern } from './modernDispatch.ts';
import { envelopeOf } from './modernRequest.ts';
import type { Envelope, EnvelopeError } from '../../core/translate/envelope.ts';
import type { Outcome } from '../../core/outcome.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';

/** What a new call gets from a replica that drains with no other to hand it to: 503, send it again. */
function drainingAnswer(id: JsonRpcRequest['id']): Answer {
  return {
    ...errorAnswer(id, {
      code: ErrorCode.InternalError,
      message: 'Internal error: this replica is draining; send the request again',
      status: 503,
    }),
    headers: { 'retry-after': '0' },
  };
}

/** The `traceparent` of the first round of the call a retry continues, when it was traced. */
function continuedTrace(inputs: InputBroker, envelope: Outcome<Envelope, EnvelopeError>): string | undefined {
  const state = envelope.ok ? envelope.value.retry?.requestState : undefined;
  return state === undefined ? undefined : inputs.traceOf?.(state);
}

/** What serving modern requests takes: where calls and listens go, and what observes them. */
export interface ModernServingOptions {
  readonly dispatch: ModernDispatchOptions;
  readonly hub: ListenHub;
  /** Carries a retry's trace on from the round it continues. */
  readonly inputs: InputBroker;
  readonly metrics: ServeMetrics | undefined;
  readonly accessLog: ((entry: AccessEntry) => void) | undefined;
}

/** The wrap's modern requests being served. */
export class ModernServing {
  readonly #options: ModernServingOptions;
  readonly #shutdown = new AbortController();
  /** Every listen being served: ended together on shutdown. */
  readonly #listening = new Set<Scope>();
  #draining = false;
  #serving = 0;
  readonly #served = (): void => {
    this.#serving--;
  };

  constructor(options: ModernServingOptions) {
    this.#options = options;
  }

  /** Modern requests being served (a listen counts while its stream is open). */
  get requests(): number {
    return this.#serving;
  }

  /** `subscriptions/listen` streams being served. */
  get listens(): number {
    return this.#listening.size;
  }

  /** Requests being served other than open listens. */
  get calls(): number {
    return this.#serving - this.#listening.size;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Whether the wrap shut down: every request is refused now. */
  get shutDown(): boolean {
    return this.#shutdown.signal.aborted;
  }

  /** New calls get 503 from now on; retries that continue a parked call are still served. */
  drain(): void {
    this.#draining = true;
  }

  /** Refuses every request from now on, and ends the listens being served. */
  shutdown(): void {
    this.#shutdown.abort();
    for (const s of this.#listening) s.abort();
  }

  /** Serves one modern request, counted and observed. */
  readonly serve = (request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined> => {
    this.#serving++;
    const { inputs, metrics, accessLog } = this.#options;
    // Over HTTP, the trace context of the headers goes on in `_meta` when the request has none there.
    const traced = ctx.headers ? withHeaderTrace(request, ctx.headers) : request;
    const envelope = envelopeOf(traced, ctx, this.#options.dispatch);
    const telemetry = observe(traced, {
      metrics,
      transport: ctx.headers ? 'tcp' : 'pipe',
      clientEra: 'modern',
      serverEra: 'legacy',
      continued: inputs.traceOf ? () => continuedTrace(inputs, envelope) : undefined,
      access: accessLog ? { write: accessLog, principal: ctx.principal } : undefined,
    });
    if (!telemetry) {
      const answer = this.#serveRead(traced, ctx, envelope);
      void answer.then(this.#served, this.#served);
      return answer;
    }
    const answer = this.#serveRead(traced, withTelemetry(ctx, telemetry), envelope);
    // One reaction both counts the request served and ends its telemetry.
    void answer.then(
      (a) => {
        this.#serving--;
        telemetry.end(a?.message);
      },
      (e: unknown) => {
        this.#serving--;
        telemetry.end(undefined, e);
      },
    );
    return answer;
  };

  /** Serves one modern request, neither counted nor observed. */
  readonly serveUnobserved = (request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined> =>
    this.#serveRead(request, ctx, envelopeOf(request, ctx, this.#options.dispatch));

  /** Serves one modern request whose envelope is read (`envelopeOf`): what follows reads it there. */
  #serveRead(request: JsonRpcRequest, ctx: ModernContext, read: Outcome<Envelope, EnvelopeError>): Promise<Answer | undefined> {
    if (this.#shutdown.signal.aborted)
      return Promise.resolve(
        errorAnswer(request.id, { code: ErrorCode.InternalError, message: 'Internal error: the server is shutting down' }),
      );
    if (!read.ok) return Promise.resolve(errorAnswer(request.id, read.error));
    const envelope = read.value;
    // Draining, it serves what it owns: the retries of its parked calls and the requests about its tasks.
    if (this.#draining && envelope.retry?.requestState === undefined && !isTaskMethod(request.method))
      return Promise.resolve(drainingAnswer(request.id));
    // A call ends on shutdown when the pool closes (its upstream call gets an error); a listen
    // has nothing upstream in flight, so it is ended here.
    if (request.method !== 'subscriptions/listen') {
      try {
        return serveModern(request, ctx, envelope, this.#options.dispatch);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return this.#serveListen(request, ctx, envelope);
  }

  async #serveListen(request: JsonRpcRequest, ctx: ModernContext, envelope: Envelope): Promise<Answer | undefined> {
    const own = scope([ctx.signal]);
    this.#listening.add(own);
    try {
      return await this.#options.hub.serve(request, { ...ctx, signal: own.signal }, envelope, this.#options.dispatch);
    } finally {
      this.#listening.delete(own);
      own.dispose();
    }
  }
}
