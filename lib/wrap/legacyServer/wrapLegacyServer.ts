/**
 * `wrapLegacyServer`: one dual-era endpoint in front of an unmodified legacy server. Modern
 * requests (their `_meta` names a modern version) are served statelessly through pooled upstream
 * sessions; an `initialize` opens a legacy session relayed untouched. Serves Streamable HTTP as a
 * Web `fetch` handler; the stdio front and the Node listener build on the same object. The pool and
 * what it hears of the server are `upstreamPool.ts`; the serving of modern requests, `modernServing.ts`;
 * the tasks of tools the server runs as tasks, `toolTasks.ts`.
 */
import { createEmitter, type Emitter } from '../../util/events.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { Backend } from '../../session/backend.ts';
import type { SessionPool } from '../../session/pool.ts';
import type { Openings } from '../../session/gate.ts';
import { createHttpFront } from '../../fronts/httpFront.ts';
import { requestPrincipal } from '../../transport/httpEdge.ts';
import { LegacyHttpSessions } from '../../fronts/legacyHttpSessions.ts';
import { ProtectedResource } from '../../fronts/protectedResource.ts';
import { Shares } from '../../session/shares.ts';
import { ListenHub } from './listen.ts';
import { RootsHolders } from './rootsHolders.ts';
import { ToolIndex } from './toolIndex.ts';
import { Catalog } from './catalog.ts';
import { Described, openPool, toBackend } from './upstreamPool.ts';
import { ModernServing } from './modernServing.ts';
import { ToolTasks } from './toolTasks.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';
import type { InputBroker } from '../mrtr/broker.ts';
import type { SessionSource } from '../../fronts/served.ts';
import { MrtrBroker } from '../mrtr/suspend.ts';
import type { MrtrOptions } from '../mrtr/mrtrOptions.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { ServeMetrics } from '../../observe/serveMetrics.ts';
import { RelayTelemetry } from '../../observe/relayTelemetry.ts';

import type { LegacyServerWrap, WrapEvents, WrapLegacyServerOptions, WrapStats } from './wrapOptions.ts';

/** The wrap's options, the wrap and what it tells, with the function that makes it. */
export type { LegacyServerWrap, WrapEvents, WrapLegacyServerOptions, WrapStats } from './wrapOptions.ts';

/**
 * The wrap's listens: at most so many per caller, sharing the sessions they hold with parked calls;
 * in a fleet, each change fanned out to the other replicas, and theirs heard (`hearing` stops that).
 */
function openListens(options: WrapLegacyServerOptions, shares: Shares, events: Emitter<WrapEvents>) {
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
  return { hub, hearing };
}

/**
 * Where legacy clients' sessions go: each relayed on a pipe of its own (`source`), over HTTP held in
 * `legacy`; in front of a protected server that gets each caller's credentials, `protectedResource`
 * gives its metadata and challenges, pointing here.
 */
function openLegacySessions(
  backend: Backend,
  openings: Openings,
  options: WrapLegacyServerOptions,
  events: Emitter<WrapEvents>,
  metrics: ServeMetrics | undefined,
) {
  const fleet = options.fleet;
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
    ...(fleet ? { sessionId: fleet.forwarding.ownedId } : {}),
  });
  return { source, protectedResource, legacy, unwatchLegacy };
}

/** Where pushing calls' rounds go: the broker the options give, or the built-in one (parking calls, or replaying them). */
function inputBrokerOf(options: WrapLegacyServerOptions, shares: Shares, catalog: Catalog, pool: SessionPool): InputBroker {
  const fleet = options.fleet;
  const mrtr: MrtrOptions = {
    ...(options.mrtr && !('run' in options.mrtr) ? options.mrtr : {}),
    ...(fleet ? { keyring: fleet.keyring, usedStates: fleet.usedStates, replica: fleet.id } : {}),
  };
  return options.mrtr && 'run' in options.mrtr
    ? options.mrtr
    : new MrtrBroker(mrtr, { shares, listed: (target) => catalog.listed(target, () => pool.sessions()[0]?.session) });
}

/** What the modern dispatch is given: the pool and broker, what the wrap knows of the server, and the options that shape a call. */
function dispatchOptionsOf(
  options: WrapLegacyServerOptions,
  backend: Backend,
  parts: {
    readonly pool: SessionPool;
    readonly inputs: InputBroker;
    readonly tools: ToolIndex;
    readonly catalog: Catalog;
    readonly described: Described;
    readonly holders: RootsHolders;
    readonly tasks: ToolTasks;
  },
): ModernDispatchOptions {
  const { pool, inputs, tools, catalog, described, holders, tasks } = parts;
  return {
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
    tasks,
    ...(options.shareSessions
      ? { shared: { perCaller: options.sessions?.perPrincipal ?? DEFAULTS.sessionsPerCaller, pushing: new Map<string, number>() } }
      : {}),
  };
}

/** Calls parked waiting for their retry (the built-in broker's, in suspend mode). */
function parkedIn(inputs: InputBroker): number {
  return inputs instanceof MrtrBroker ? inputs.parked : 0;
}

/** What the wrap holds right now. */
function statsOf(pool: SessionPool, modern: ModernServing, inputs: InputBroker, legacy: LegacyHttpSessions, tasks: ToolTasks): WrapStats {
  let sessions = 0;
  let inFlight = 0;
  let holds = 0;
  for (const { session } of pool.sessions()) {
    sessions++;
    inFlight += session.inFlight;
    holds += session.holds;
  }
  return {
    requests: modern.requests,
    sessions,
    inFlight,
    holds,
    parked: parkedIn(inputs),
    listens: modern.listens,
    legacySessions: legacy.size,
    remembered: inputs instanceof MrtrBroker ? inputs.remembered : 0,
    tasks: tasks.size,
    tasksOwed: tasks.unsettled,
  };
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
  const { hub, hearing } = openListens(options, shares, events);
  const catalog = new Catalog();
  const described = new Described();
  const tools = new ToolIndex(catalog);
  const holders = new RootsHolders();
  // What is held now is read from the wrap when scraped.
  const metrics = options.metrics
    ? new ServeMetrics({ stats: () => wrap.stats(), ...(fleet ? { forwards: () => fleet.forwarding.counts() } : {}) })
    : undefined;
  const tasks = new ToolTasks(options.tasks, fleet?.forwarding.ownedId);
  tasks.watchWith(
    { watches: (principal, id) => hub.watches(principal, id), deliver: (principal, n) => hub.deliverTask(principal, n) },
    options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
  );
  const { openings, pool } = openPool(backend, options, { events, metrics, tools, catalog, hub, holders, described, tasks });
  const { source, protectedResource, legacy, unwatchLegacy } = openLegacySessions(backend, openings, options, events, metrics);
  const inputs = inputBrokerOf(options, shares, catalog, pool);
  const dispatch = dispatchOptionsOf(options, backend, { pool, inputs, tools, catalog, described, holders, tasks });
  const modern = new ModernServing({ dispatch, hub, inputs, metrics, accessLog: options.accessLog });

  const front = createHttpFront({
    http: options.http ?? {},
    legacy,
    serve: modern.serve,
    ...(metrics ? { metrics } : {}),
    ...(options.supportedVersions ? { supportedVersions: options.supportedVersions } : {}),
    ...(fleet ? { forwarding: fleet.forwarding } : {}),
    ...(protectedResource ? { protectedResource } : {}),
    ...(options.health
      ? {
          health: {
            ready: () => !modern.draining,
            info: () => ({ ...fleet?.info(), ...wrap.stats(), ...(typeof options.health === 'object' ? options.health.info() : {}) }),
          },
        }
      : {}),
  });

  let closing: Promise<void> | undefined;
  const wrap: LegacyServerWrap = {
    fetch: front.fetch,
    node: front.node,
    serveModern: modern.serve,
    serveUnobserved: modern.serveUnobserved,
    legacy: source,
    events,
    pool,
    backend,
    get legacySessions() {
      return legacy.size;
    },
    metrics,
    stats() {
      return statsOf(pool, modern, inputs, legacy, tasks);
    },
    async drain() {
      modern.drain();
      legacy.refuseNew();
      // Until nothing it took is left: no call parked, none being served (open listens aside), no
      // legacy session's request in progress.
      const busy = () => parkedIn(inputs) + modern.calls + legacy.active > 0;
      // And, for a bounded time, until every task has ended and its end was read by its caller.
      const tasksUntil = Date.now() + (options.tasks?.drainMs ?? DEFAULTS.taskDrainMs);
      const owed = () => tasks.unsettled > 0 && Date.now() < tasksUntil;
      while ((busy() || owed()) && !modern.shutDown) await new Promise((r) => setTimeout(r, 50));
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
        tasks.closeAll();
        await new Promise((r) => setTimeout(r, 0));
        modern.shutdown();
        unwatchLegacy();
        await Promise.all([pool.close(), legacy.close()]);
        await backend.close?.();
      })();
      return closing;
    },
  };
  return wrap;
}
