/**
 * `wrapLegacyServer`: one dual-era endpoint in front of an unmodified legacy server. Modern
 * requests (their `_meta` names a modern version) are served statelessly through pooled upstream
 * sessions; an `initialize` opens a legacy session relayed untouched. Serves Streamable HTTP as a
 * Web `fetch` handler; the stdio front and the Node listener build on the same object.
 */
import { createEmitter } from '../../util/events.ts';
import { scope, type Scope } from '../../util/signals.ts';
import { AdapterError, ErrorCode } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import { canonicalJson } from '../../core/primitives.ts';
import { inProcessBackend, type Backend, type ConnectableServer } from '../../session/backend.ts';
import { SessionPool } from '../../session/pool.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { InitializeResult } from '../../core/legacy/lifecycle.ts';
import type { RpcOutcome } from '../../session/callHooks.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { createHttpFront } from '../../fronts/httpFront.ts';
import { requestPrincipal } from '../../transport/httpEdge.ts';
import { LegacyHttpSessions } from '../../fronts/legacyHttpSessions.ts';
import { ProtectedResource } from '../../fronts/protectedResource.ts';
import { Shares } from '../../session/shares.ts';
import { Openings } from '../../session/gate.ts';
import { ListenHub } from './listen.ts';
import { RootsHolders, WRAP_ROOTS } from './rootsHolders.ts';
import { ToolIndex } from './toolIndex.ts';
import { Catalog } from './catalog.ts';
import { envelopeOf, serveModern } from './modernDispatch.ts';
import type { Envelope, EnvelopeError } from '../../core/translate/envelope.ts';
import type { Outcome } from '../../core/outcome.ts';
import { SHARED_PRINCIPAL } from './callerKeys.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';
import type { InputBroker } from '../mrtr/broker.ts';
import { errorAnswer, withTelemetry, type Answer, type ModernContext, type SessionSource } from '../../fronts/served.ts';
import { MrtrBroker } from '../mrtr/suspend.ts';
import type { MrtrOptions } from '../mrtr/mrtrOptions.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { observe } from '../../observe/requestTelemetry.ts';
import { withHeaderTrace } from '../../observe/traceContext.ts';
import { ServeMetrics } from '../../observe/serveMetrics.ts';
import { RelayTelemetry } from '../../observe/relayTelemetry.ts';

import type { LegacyServerWrap, WrapEvents, WrapLegacyServerOptions } from './wrapOptions.ts';

/** The wrap's options, the wrap and what it tells, with the function that makes it. */
export type { LegacyServerWrap, WrapEvents, WrapLegacyServerOptions, WrapStats } from './wrapOptions.ts';
function toBackend(upstream: WrapLegacyServerOptions['upstream']): Backend {
  if (
    typeof upstream === 'object' &&
    upstream !== null &&
    'kind' in upstream &&
    'connect' in upstream &&
    typeof (upstream as Backend).describe === 'string'
  )
    return upstream as Backend;
  return inProcessBackend(upstream as ConnectableServer);
}

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

/** Most capability sets whose server description is kept for `server/discover`. */
const DESCRIBED = 64;

/** The `traceparent` of the first round of the call a retry continues, when it was traced. */
function continuedTrace(inputs: InputBroker, envelope: Outcome<Envelope, EnvelopeError>): string | undefined {
  const state = envelope.ok ? envelope.value.retry?.requestState : undefined;
  return state === undefined ? undefined : inputs.traceOf?.(state);
}

/**
 * What the server said at `initialize` to a session of each capability set and client info, the
 * newest kept: `server/discover` needs no session of the caller's own. Nothing here varies the
 * server's answer by caller (every session of a backend reaches the same server as the same client).
 */
class Described {
  readonly #results = new Map<string, InitializeResult>();

  static #text(key: SessionKey): string {
    return `${key.capabilitiesText ?? canonicalJson(key.capabilities)}\u0000${key.clientInfo.name}\u0000${key.clientInfo.version}`;
  }

  note(key: SessionKey, result: InitializeResult): void {
    const text = Described.#text(key);
    this.#results.delete(text);
    this.#results.set(text, result);
    if (this.#results.size > DESCRIBED) this.#results.delete(this.#results.keys().next().value!);
  }

  get(key: SessionKey): InitializeResult | undefined {
    return this.#results.get(Described.#text(key));
  }
}

/** Wraps a legacy server so modern and legacy clients can both use it. */
export function wrapLegacyServer(options: WrapLegacyServerOptions): LegacyServerWrap {
  const events = createEmitter<WrapEvents>();
  const backend = toBackend(options.upstream);
  if (options.shareSessions && backend.passesAuthorization)
    throw new TypeError(
      "wrapLegacyServer: shareSessions cannot go with a backend that passes each caller's Authorization upstream: a caller's token would serve another caller's calls",
    );
  // Parked calls and listens hold sessions for minutes: together, fairly shared, never more than
  // the pool (made below) less its reserve.
  const shares = new Shares({
    budget: () => pool.max - pool.reserve,
    ...(options.mrtr && !('run' in options.mrtr) && options.mrtr.maxParkedPerPrincipal !== undefined
      ? { parkedPerPrincipal: options.mrtr.maxParkedPerPrincipal }
      : {}),
  });
  const fleet = options.fleet;
  const hub = new ListenHub({
    shares,
    ...(options.listens?.perPrincipal !== undefined ? { perPrincipal: options.listens.perPrincipal } : {}),
    ...(fleet ? { fanOut: { publish: (principal, change) => fleet.changes.publish(principal, change) } } : {}),
  });
  // The other replicas' changes, to this replica's listens of the same caller.
  const hearing = fleet?.changes.subscribe((scope, change, from) =>
    hub.deliverElsewhere(from, (principal) => fleet.changes.hash(principal) === scope, change),
  );
  hearing?.catch((e: unknown) =>
    events.emit('upstream-failed', {
      reason: `the fleet's changes cannot be heard: ${e instanceof Error ? e.message : String(e)}`,
      started: true,
    }),
  );
  const catalog = new Catalog();
  const described = new Described();
  const tools = new ToolIndex(catalog);
  const shutdown = new AbortController();
  /** Every listen being served: ended together on shutdown. */
  const listening = new Set<Scope>();
  const holders = new RootsHolders();
  const unrelated = async (key: SessionKey, push: JsonRpcRequest, session: UpstreamSession): Promise<RpcOutcome> => {
    events.emit('unrelated-push', { method: push.method });
    switch (push.method) {
      case 'roots/list':
        // The client's own roots come with its calls: outside one they are not known, and an empty
        // list would be taken for the truth (a server that caches it would never ask in a call).
        if (!options.roots?.length && key.capabilities['roots'] !== undefined)
          return {
            error: {
              code: ErrorCode.InternalError,
              message: "The client's roots are known only during a request: ask for them while serving one",
            },
          };
        if (key.capabilities['roots'] !== undefined) holders.note(key, session, WRAP_ROOTS);
        return { result: { roots: (options.roots ?? []).map((r) => ({ ...r })) } };
      case 'elicitation/create':
        // Nobody saw it: `decline` would say the user refused.
        return { result: { action: 'cancel' } };
      default:
        return {
          error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method} cannot reach a client outside a request` },
        };
    }
  };
  const openings = new Openings(backend, options.sessions?.opening !== undefined ? { size: options.sessions.opening } : {});
  const pool = new SessionPool(backend, {
    opening: openings,
    ...(options.sessions?.max !== undefined ? { maxSessions: options.sessions.max } : {}),
    ...(options.sessions?.idleMs !== undefined ? { idleMs: options.sessions.idleMs } : {}),
    ...(options.sessions?.perKey !== undefined ? { maxPerKey: options.sessions.perKey } : {}),
    ...(options.sessions?.perPrincipal !== undefined ? { maxPerPrincipal: options.sessions.perPrincipal } : {}),
    ...(options.sessions?.reserve !== undefined ? { reserve: options.sessions.reserve } : {}),
    ...(options.sessions?.waitMs !== undefined ? { waitMs: options.sessions.waitMs } : {}),
    ...(options.shareSessions ? { sharedPrincipal: SHARED_PRINCIPAL } : {}),
    onUnrelatedPush: unrelated,
    // A server that asks for roots once, right after `initialized` (fastmcp), asks while the
    // session is opened for a client that declared roots: the client's next call answers it.
    // With roots of the wrap's own, those answer at once.
    awaitsCall: (key, push) => push.method === 'roots/list' && key.capabilities['roots'] !== undefined && !options.roots?.length,
    onNotification: (key, session, method, params) => {
      if (method === 'notifications/tools/list_changed') tools.invalidate(session);
      if (method.endsWith('/list_changed')) catalog.changed(`${method.slice('notifications/'.length, -'/list_changed'.length)}/list`);
      hub.dispatch(key, session, method, params);
    },
    onSessionClosed: (key, reason) => {
      metrics?.upstreamClosed();
      events.emit('upstream-closed', { key, reason });
    },
    onSessionOpened: (key, session) => {
      metrics?.upstreamOpened();
      described.note(key, session.initializeResult!);
      events.emit('upstream-opened', { key, initializeResult: session.initializeResult! });
    },
    onOpenFailed: (_key, error) => {
      const started = !(error instanceof AdapterError && error.code === 'upstream-exited');
      metrics?.upstreamFailed(started);
      events.emit('upstream-failed', { reason: error instanceof Error ? error.message : String(error), started });
    },
  });
  const source: SessionSource = {
    connect: (context) => backend.connect(context),
    ...(backend.passesAuthorization ? { passesAuthorization: true } : {}),
    openings,
    failed: (reason) => events.emit('upstream-failed', { reason, started: false }),
    observe: (transport) => RelayTelemetry.of({ metrics, transport, clientEra: 'legacy', serverEra: 'legacy' }),
  };
  // In front of a protected server that gets each caller's credentials: its metadata and challenges, pointing here.
  const protectedResource =
    backend.passesAuthorization && backend.url
      ? new ProtectedResource({
          upstream: backend.url,
          ...(options.http?.publicUrl !== undefined ? { resource: options.http.publicUrl } : {}),
        })
      : undefined;
  // A legacy client's request in progress is a served caller at work: strangers' boots rest meanwhile.
  const unwatchLegacy = openings.working(() => legacy.working);
  const legacy = new LegacyHttpSessions(source, {
    ...(options.legacySessions ?? {}),
    ...(protectedResource
      ? { challenge: (upstream: string, requestUrl: string) => protectedResource.challenge(upstream, requestUrl) }
      : {}),
    principal: requestPrincipal(options.http?.principal),
    waitMs: options.sessions?.waitMs ?? DEFAULTS.sessionWaitMs,
    ...(fleet ? { sessionId: fleet.forwarding.sessionId } : {}),
  });
  const mrtr: MrtrOptions = {
    ...(options.mrtr && !('run' in options.mrtr) ? options.mrtr : {}),
    ...(fleet ? { keyring: fleet.keyring, usedStates: fleet.usedStates, replica: fleet.id } : {}),
  };
  const inputs: InputBroker =
    options.mrtr && 'run' in options.mrtr
      ? options.mrtr
      : new MrtrBroker(mrtr, { shares, listed: (target) => catalog.listed(target, () => pool.sessions()[0]?.session) });
  const dispatch: ModernDispatchOptions = {
    pool,
    ...(options.serverInfo ? { serverInfo: options.serverInfo } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
    ...(options.supportedVersions ? { supportedVersions: options.supportedVersions } : {}),
    ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    inputs,
    tools,
    catalog,
    // A server that asks each caller to sign in answers none without its own credentials.
    ...(backend.passesAuthorization ? {} : { described: (key: SessionKey) => described.get(key) }),
    ...(options.roots && options.roots.length > 0 ? { roots: options.roots } : {}),
    holders,
    ...(options.shareSessions
      ? { shared: { perCaller: options.sessions?.perPrincipal ?? DEFAULTS.sessionsPerCaller, pushing: new Map<string, number>() } }
      : {}),
  };
  const http = options.http ?? {};
  // What is held now is read from the wrap when scraped.
  const metrics = options.metrics
    ? new ServeMetrics({ stats: () => wrap.stats(), ...(fleet ? { forwards: () => fleet.forwarding.counts() } : {}) })
    : undefined;

  let draining = false;
  let serving = 0;
  const served = (): void => {
    serving--;
  };
  const serve = (request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined> => {
    serving++;
    // Over HTTP, the trace context of the headers goes on in `_meta` when the request has none there.
    const traced = ctx.headers ? withHeaderTrace(request, ctx.headers) : request;
    const envelope = envelopeOf(traced, ctx, dispatch);
    const telemetry = observe(traced, {
      metrics,
      transport: ctx.headers ? 'tcp' : 'pipe',
      clientEra: 'modern',
      serverEra: 'legacy',
      ...(inputs.traceOf ? { continued: () => continuedTrace(inputs, envelope) } : {}),
      ...(options.accessLog ? { access: { write: options.accessLog, principal: ctx.principal } } : {}),
    });
    const answer = serveRead(traced, telemetry ? withTelemetry(ctx, telemetry) : ctx, envelope);
    void answer.then(served, served);
    if (telemetry)
      answer.then(
        (a) => telemetry.end(a?.message),
        (e: unknown) => telemetry.end(undefined, e),
      );
    return answer;
  };
  const serveRead = (request: JsonRpcRequest, ctx: ModernContext, read: Outcome<Envelope, EnvelopeError>): Promise<Answer | undefined> => {
    if (shutdown.signal.aborted)
      return Promise.resolve(
        errorAnswer(request.id, { code: ErrorCode.InternalError, message: 'Internal error: the server is shutting down' }),
      );
    if (!read.ok) return Promise.resolve(errorAnswer(request.id, read.error));
    const envelope = read.value;
    if (draining && envelope.retry?.requestState === undefined) return Promise.resolve(drainingAnswer(request.id));
    // A call ends on shutdown when the pool closes (its upstream call gets an error); a listen
    // has nothing upstream in flight, so it is ended here.
    if (request.method !== 'subscriptions/listen') {
      try {
        return serveModern(request, ctx, envelope, dispatch);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return serveListen(request, ctx, envelope);
  };
  const serveListen = async (request: JsonRpcRequest, ctx: ModernContext, envelope: Envelope): Promise<Answer | undefined> => {
    const own = scope([ctx.signal]);
    listening.add(own);
    try {
      return await hub.serve(request, { ...ctx, signal: own.signal }, envelope, dispatch);
    } finally {
      listening.delete(own);
      own.dispose();
    }
  };

  const front = createHttpFront({
    http,
    legacy,
    serve,
    ...(metrics ? { metrics } : {}),
    ...(options.supportedVersions ? { supportedVersions: options.supportedVersions } : {}),
    ...(fleet ? { forwarding: fleet.forwarding } : {}),
    ...(protectedResource ? { protectedResource } : {}),
    ...(options.health
      ? {
          health: {
            ready: () => !draining,
            info: () => ({ ...fleet?.info(), ...wrap.stats(), ...(typeof options.health === 'object' ? options.health.info() : {}) }),
          },
        }
      : {}),
  });

  let closing: Promise<void> | undefined;
  const wrap: LegacyServerWrap = {
    fetch: front.fetch,
    node: front.node,
    serveModern: serve,
    serveUnobserved: (request, ctx) => serveRead(request, ctx, envelopeOf(request, ctx, dispatch)),
    legacy: source,
    events,
    pool,
    backend,
    get legacySessions() {
      return legacy.size;
    },
    metrics,
    stats() {
      let sessions = 0;
      let inFlight = 0;
      let holds = 0;
      for (const { session } of pool.sessions()) {
        sessions++;
        inFlight += session.inFlight;
        holds += session.holds;
      }
      return {
        requests: serving,
        sessions,
        inFlight,
        holds,
        parked: inputs instanceof MrtrBroker ? inputs.parked : 0,
        listens: listening.size,
        legacySessions: legacy.size,
        remembered: inputs instanceof MrtrBroker ? inputs.remembered : 0,
      };
    },
    async drain() {
      draining = true;
      legacy.refuseNew();
      // Until nothing it took is left: no call parked, none being served (open listens aside), no
      // legacy session's request in progress.
      const busy = () => (inputs instanceof MrtrBroker ? inputs.parked : 0) + (serving - listening.size) + legacy.active > 0;
      while (busy() && !shutdown.signal.aborted) await new Promise((r) => setTimeout(r, 50));
    },
    release() {
      hub.closeAll();
      front.endStreams();
    },
    close() {
      closing ??= (async () => {
        hub.closeAll();
        void hearing?.then(
          (stop) => stop(),
          () => {},
        );
        if (inputs instanceof MrtrBroker) inputs.close();
        await new Promise((r) => setTimeout(r, 0));
        shutdown.abort();
        for (const s of listening) s.abort();
        unwatchLegacy();
        await Promise.all([pool.close(), legacy.close()]);
        await backend.close?.();
      })();
      return closing;
    },
  };
  return wrap;
}
