/**
 * `subscriptions/listen` served from a legacy server: the acknowledgement first (only what the
 * upstream can deliver), then the server's list-changed and resource-updated notifications tagged
 * with the listen's id, subscribing upstream per URI (reference-counted per session). The stream
 * ends when the client leaves (nothing more is sent) or gracefully with the listen result (the
 * session closed, the wrap shut down, or the session's share was wanted by another caller).
 */
import { resultResponse, type JsonRpcNotification, type JsonRpcRequest } from '../../core/jsonrpc.ts';
import { missingCapability } from '../../core/errors.ts';
import { TASKS_EXTENSION } from '../../core/modern/capabilities.ts';
import type { JsonObject } from '../../core/primitives.ts';
import type { SubscriptionFilter } from '../../core/modern/notifications.ts';
import { serverCapabilitiesToModern } from '../../core/translate/capabilities.ts';
import {
  acknowledgement,
  filterToLegacySubscriptions,
  honouredFilter,
  listenResult,
  notificationToListen,
  readListenFilter,
} from '../../core/translate/subscriptions.ts';
import type { Envelope } from '../../core/translate/envelope.ts';
import { limitRefusal, type LimitRefusal } from '../../util/limits.ts';
import { keyText, type SessionKey } from '../../session/sessionKey.ts';
import { Shares, type Holding } from '../../session/shares.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { declaresTasks, refusedAnswer, unavailable } from './modernRequest.ts';
import { callerKey } from './callerKeys.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';
import { errorAnswer, type Answer, type ModernContext } from '../../fronts/served.ts';
import { DEFAULTS } from '../../util/defaults.ts';

interface Listener {
  readonly deliver: (notification: JsonRpcNotification) => void;
  /** The caller whose listen it is (a unit of sessions shared by callers holds several). */
  readonly principal: string;
  /** The caller's tasks the listen was granted (`taskIds` honoured). */
  readonly taskIds: ReadonlySet<string>;
  /** Ends the listen gracefully (its stream closes with the listen result). */
  readonly end: () => void;
}

/** The listens fed by one upstream session (for the key filed as `id`), and that session's share of the sessions held. */
interface Unit {
  readonly id: string;
  readonly principal: string;
  readonly listeners: Set<Listener>;
  readonly holding: Holding;
  /**
   * In a fleet: the changes delivered lately, by their text, with when and from where (this
   * replica, or the replica that told of it): the same change heard from another source is a repeat.
   */
  readonly recent: Map<string, { at: number; sources: Set<string> }>;
}

/** Where a change reported here is told to the other replicas of a fleet. */
export interface ListenFanOut {
  /** Tells the other replicas of a change the upstream reported to a session of `principal`. */
  publish(principal: string, notification: JsonRpcNotification): void;
}

/** The notifications a listen can carry from a legacy server (the others belong to a call). */
const LISTENED = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

/** How long a change delivered to a unit makes the same change, heard from another source, a repeat. */
const REPEAT_MS = 2000;
/** The source of a change this replica's upstream reported. */
const HERE = '';
/** Most changes a unit remembers as delivered. */
const MAX_RECENT = 64;

export interface ListenHubOptions {
  /** Listens one principal may have open (default 16); one more is refused. */
  readonly perPrincipal?: number;
  /** The fair shares of held sessions (a principal's listens of one capability set hold one session). */
  readonly shares?: Shares;
  /** In a fleet: changes reported here are told to the other replicas (and theirs heard with `deliverElsewhere`). */
  readonly fanOut?: ListenFanOut;
}

/**
 * `filter` with only the `taskIds` of the caller's own tasks kept here: another caller's task, one
 * this replica does not run, or one that never was, is not granted (the acknowledgement leaves it
 * out, and the caller polls it).
 */
function grantedTasks(filter: SubscriptionFilter, principal: string, options: ModernDispatchOptions): SubscriptionFilter {
  if (!filter.taskIds) return filter;
  const { taskIds, ...rest } = filter;
  const owned = taskIds.filter((id) => options.tasks?.owns(principal, id));
  return owned.length > 0 ? { ...rest, taskIds: [...new Set(owned)] } : rest;
}

/**
 * Per-session listeners and upstream subscription counts. The listens of one principal and
 * capability set are fed by one upstream session (the first listen picks it, the others join),
 * which counts once in the principal's share of held sessions.
 */
export class ListenHub {
  readonly #options: ListenHubOptions;
  readonly #shares: Shares;
  #units = new Map<UpstreamSession, Unit>();
  /** The session the listens of a key are fed by. */
  #byKey = new Map<string, UpstreamSession>();
  #perPrincipal = new Map<string, number>();
  #subscriptions = new Map<UpstreamSession, Map<string, number>>();
  #closing = new Set<() => void>();

  constructor(options: ListenHubOptions = {}) {
    this.#options = options;
    this.#shares = options.shares ?? new Shares({ budget: Number.POSITIVE_INFINITY });
  }

  /** Feeds an upstream notification to the listens on its session (and, in a fleet, tells the other replicas). */
  dispatch(key: SessionKey, session: UpstreamSession, method: string, params: JsonObject | undefined): void {
    const unit = this.#units.get(session);
    const fanOut = this.#options.fanOut;
    if (!unit && (!fanOut || !LISTENED.has(method))) return;
    const notification: JsonRpcNotification = params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    if (unit) this.#deliver(unit, notification, HERE);
    if (fanOut && LISTENED.has(method)) fanOut.publish(key.principal, notification);
  }

  /**
   * Feeds a change another replica (`from`) reported to the listens of the principals
   * `ofPrincipal` accepts, each once even when this replica's upstream (or a third replica)
   * reported it as well.
   */
  deliverElsewhere(from: string, ofPrincipal: (principal: string) => boolean, notification: JsonRpcNotification): void {
    if (!LISTENED.has(notification.method)) return;
    for (const unit of this.#units.values()) if (ofPrincipal(unit.principal)) this.#deliver(unit, notification, from);
  }

  /**
   * Delivers a change heard from `source` to a unit's listens. In a fleet the same change may be
   * heard from several sources (every replica behind one shared server reports it): one heard from
   * a source other than those it was heard from lately is a repeat; one heard again from the
   * same source is a change of its own.
   */
  #deliver(unit: Unit, notification: JsonRpcNotification, source: string): void {
    if (this.#options.fanOut) {
      const text = JSON.stringify(notification);
      const now = Date.now();
      const seen = unit.recent.get(text);
      if (seen !== undefined && now - seen.at < REPEAT_MS && !seen.sources.has(source)) {
        seen.sources.add(source);
        return;
      }
      unit.recent.delete(text);
      if (unit.recent.size >= MAX_RECENT)
        for (const [t, e] of unit.recent) if (now - e.at >= REPEAT_MS || unit.recent.size >= MAX_RECENT) unit.recent.delete(t);
      unit.recent.set(text, { at: now, sources: new Set([source]) });
    }
    for (const l of unit.listeners) l.deliver(notification);
  }

  /** Whether a listen of `principal` was granted the task `taskId`. */
  watches(principal: string, taskId: string): boolean {
    for (const unit of this.#units.values())
      for (const l of unit.listeners) if (l.principal === principal && l.taskIds.has(taskId)) return true;
    return false;
  }

  /** Delivers a task's `notifications/tasks` to the listens of `principal` (each takes it if it was granted the task). */
  deliverTask(principal: string, notification: JsonRpcNotification): void {
    for (const unit of this.#units.values()) for (const l of unit.listeners) if (l.principal === principal) l.deliver(notification);
  }

  /** Ends every listen gracefully (wrap shutdown). */
  closeAll(): void {
    for (const end of [...this.#closing]) end();
  }

  async #subscribe(session: UpstreamSession, uris: readonly string[]): Promise<void> {
    const counts = this.#subscriptions.get(session) ?? new Map<string, number>();
    this.#subscriptions.set(session, counts);
    await Promise.all(
      uris.map(async (uri) => {
        const n = counts.get(uri) ?? 0;
        counts.set(uri, n + 1);
        if (n === 0) await session.call('resources/subscribe', { uri });
      }),
    );
  }

  async #unsubscribe(session: UpstreamSession, uris: readonly string[]): Promise<void> {
    const counts = this.#subscriptions.get(session);
    if (!counts) return;
    await Promise.all(
      uris.map(async (uri) => {
        const n = (counts.get(uri) ?? 1) - 1;
        if (n > 0) counts.set(uri, n);
        else {
          counts.delete(uri);
          if (!session.closed) await session.call('resources/unsubscribe', { uri });
        }
      }),
    );
    if (counts.size === 0 && this.#subscriptions.get(session) === counts) this.#subscriptions.delete(session);
  }

  /** The session that feeds the listens of `key`: the one already feeding them, or one from the pool. */
  async #session(key: SessionKey, options: ModernDispatchOptions, ctx: ModernContext): Promise<UpstreamSession> {
    const known = this.#byKey.get(keyText(key));
    if (known && !known.closed) {
      known.touch(Date.now());
      return known;
    }
    // A listen whose client leaves while it waits stops waiting (and opens nothing for nobody).
    return options.pool.acquire(key, { signal: ctx.signal, caller: ctx.principal });
  }

  /**
   * Adds a listener to the unit of `session`, admitting the unit into the shares if it is new;
   * another listen of `key` that found no unit yet joins the one made first.
   */
  #join(key: SessionKey, found: UpstreamSession, listener: Listener): { session: UpstreamSession; refused?: LimitRefusal } {
    const id = keyText(key);
    const known = this.#byKey.get(id);
    const session = known && !known.closed ? known : found;
    const unit = this.#units.get(session);
    if (unit) {
      unit.listeners.add(listener);
      return { session };
    }
    const principal = key.principal;
    const listeners = new Set<Listener>([listener]);
    const admitted = this.#shares.admit('listen', principal, () => {
      for (const l of [...listeners]) l.end();
    });
    if (!('end' in admitted)) return { session, refused: admitted };
    this.#units.set(session, { id, principal, listeners, holding: admitted, recent: new Map() });
    this.#byKey.set(id, session);
    return { session };
  }

  #leave(session: UpstreamSession, listener: Listener): void {
    const unit = this.#units.get(session);
    if (!unit) return;
    unit.listeners.delete(listener);
    if (unit.listeners.size > 0) return;
    this.#units.delete(session);
    unit.holding.end();
    if (this.#byKey.get(unit.id) === session) this.#byKey.delete(unit.id);
  }

  #count(principal: string, delta: number): void {
    const n = (this.#perPrincipal.get(principal) ?? 0) + delta;
    if (n > 0) this.#perPrincipal.set(principal, n);
    else this.#perPrincipal.delete(principal);
  }

  /**
   * Serves one listen (its `envelope` read: `envelopeOf`) until the client leaves, the session dies,
   * the wrap closes or its share is wanted.
   */
  async serve(
    request: JsonRpcRequest,
    ctx: ModernContext,
    envelope: Envelope,
    options: ModernDispatchOptions,
  ): Promise<Answer | undefined> {
    const filter = readListenFilter(request.params);
    if (!filter.ok) return errorAnswer(request.id, filter.error);
    if (filter.value.taskIds && filter.value.taskIds.length > 0 && !declaresTasks(envelope))
      return errorAnswer(
        request.id,
        missingCapability(
          { extensions: { [TASKS_EXTENSION]: {} } },
          `Missing required client capability: taskIds needs the tasks extension (${TASKS_EXTENSION})`,
        ),
      );
    const quota = this.#options.perPrincipal ?? DEFAULTS.listensPerCaller;
    const principal = ctx.principal;
    if ((this.#perPrincipal.get(principal) ?? 0) >= quota)
      return refusedAnswer(request.id, limitRefusal('listens-per-caller', quota, `this caller has ${quota} listens open; close one first`));
    this.#count(principal, 1);
    try {
      return await this.#serve(request, ctx, options, envelope, filter.value);
    } finally {
      this.#count(principal, -1);
    }
  }

  async #serve(
    request: JsonRpcRequest,
    ctx: ModernContext,
    options: ModernDispatchOptions,
    envelope: Envelope,
    filter: SubscriptionFilter,
  ): Promise<Answer | undefined> {
    const key = callerKey(ctx, envelope, options);
    let found: UpstreamSession;
    try {
      found = await this.#session(key, options, ctx);
    } catch (e) {
      return unavailable(request, e, ctx);
    }
    const caps = serverCapabilitiesToModern(found.initializeResult?.capabilities ?? {});
    const honoured: SubscriptionFilter = grantedTasks(honouredFilter(filter, caps), ctx.principal, options);
    const uris = filterToLegacySubscriptions(honoured, found.initializeResult?.capabilities ?? {});
    const listen = { subscriptionId: request.id, filter: honoured };
    let ended: ((why: 'client' | 'graceful') => void) | undefined;
    let endedEarly = false;
    const listener: Listener = {
      principal: ctx.principal,
      taskIds: new Set(honoured.taskIds ?? []),
      deliver: (n) => {
        const tagged = notificationToListen(n, listen);
        if (tagged) ctx.notify(tagged);
      },
      end: () => (ended ? ended('graceful') : (endedEarly = true)),
    };
    const { session, refused } = this.#join(key, found, listener);
    if (refused) return refusedAnswer(request.id, refused);
    const release = session.hold();
    try {
      await this.#subscribe(session, uris);
      ctx.notify(acknowledgement(request.id, honoured));
      // Each task granted, as it is now: a change between its creation and the listen is not missed.
      for (const id of listener.taskIds) options.tasks?.retell(ctx.principal, id);
      const why = await new Promise<'client' | 'graceful'>((resolve) => {
        if (ctx.signal.aborted) return resolve('client');
        if (session.closed || endedEarly) return resolve('graceful');
        const onClient = () => done('client');
        const onGraceful = () => done('graceful');
        const done = (reason: 'client' | 'graceful') => {
          ended = undefined;
          ctx.signal.removeEventListener('abort', onClient);
          session.closedSignal.removeEventListener('abort', onGraceful);
          this.#closing.delete(onGraceful);
          resolve(reason);
        };
        ended = done;
        ctx.signal.addEventListener('abort', onClient, { once: true });
        session.closedSignal.addEventListener('abort', onGraceful, { once: true });
        this.#closing.add(onGraceful);
      });
      if (why === 'client') return undefined;
      const serverInfo = options.serverInfo ?? session.initializeResult?.serverInfo;
      return { message: resultResponse(request.id, listenResult(request.id, serverInfo ? { serverInfo } : {})), status: 200 };
    } finally {
      this.#leave(session, listener);
      release();
      void this.#unsubscribe(session, uris).catch(() => {});
    }
  }
}
