/**
 * `subscriptions/listen` served from a legacy server: the acknowledgement first (only what the
 * upstream can deliver), then the server's list-changed and resource-updated notifications tagged
 * with the listen's id, subscribing upstream per URI (reference-counted per session). The stream
 * ends when the client leaves (nothing more is sent) or gracefully with the listen result.
 */
import { resultResponse, type JsonRpcNotification, type JsonRpcRequest } from '../core/jsonrpc.ts';
import { internalError, invalidParams } from '../core/errors.ts';
import type { JsonObject } from '../core/primitives.ts';
import type { SubscriptionFilter } from '../core/modern/notifications.ts';
import { serverCapabilitiesToModern } from '../core/translate/capabilities.ts';
import { readEnvelope } from '../core/translate/envelope.ts';
import { acknowledgement, filterToLegacySubscriptions, honouredFilter, listenResult, notificationToListen, readListenFilter } from '../core/translate/subscriptions.ts';
import type { UpstreamSession } from '../session/upstreamSession.ts';
import { errorAnswer, keyFor, ownRoots, unavailable, type Answer, type ModernContext, type ModernDispatchOptions } from './modernDispatch.ts';

interface Listener {
  readonly deliver: (notification: JsonRpcNotification) => void;
}

/** Per-session listeners and upstream subscription counts. */
export class ListenHub {
  #listeners = new Map<UpstreamSession, Set<Listener>>();
  #subscriptions = new Map<UpstreamSession, Map<string, number>>();
  #closing = new Set<() => void>();

  /** Feeds an upstream notification to the listens on its session. */
  dispatch(session: UpstreamSession, method: string, params: JsonObject | undefined): void {
    const set = this.#listeners.get(session);
    if (!set) return;
    const notification: JsonRpcNotification = params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    for (const l of set) l.deliver(notification);
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
  }

  /** Serves one listen until the client leaves, the session dies or the wrap closes. */
  async serve(request: JsonRpcRequest, ctx: ModernContext, options: ModernDispatchOptions): Promise<Answer | undefined> {
    const envelope = readEnvelope(request, options.supportedVersions ? { supportedVersions: options.supportedVersions } : {});
    if (!envelope.ok) return errorAnswer(request.id, envelope.error);
    const filter = readListenFilter(request.params);
    if (!filter.ok) return errorAnswer(request.id, filter.error);
    if (filter.value.taskIds && filter.value.taskIds.length > 0) return errorAnswer(request.id, invalidParams('taskIds needs the tasks extension, which this server does not offer'));
    let session: UpstreamSession;
    try {
      session = await options.pool.acquire(keyFor(ctx.principal, envelope.value, ownRoots(options)));
    } catch (e) {
      return unavailable(request, e);
    }
    const caps = serverCapabilitiesToModern(session.initializeResult?.capabilities ?? {});
    const honoured: SubscriptionFilter = honouredFilter(filter.value, caps);
    const uris = filterToLegacySubscriptions(honoured, session.initializeResult?.capabilities ?? {});
    const release = session.hold();
    const listen = { subscriptionId: request.id, filter: honoured };
    const listener: Listener = {
      deliver: (n) => {
        const tagged = notificationToListen(n, listen);
        if (tagged) ctx.notify(tagged);
      },
    };
    try {
      await this.#subscribe(session, uris);
      ctx.notify(acknowledgement(request.id, honoured));
      const set = this.#listeners.get(session) ?? new Set<Listener>();
      this.#listeners.set(session, set);
      set.add(listener);
      const ended = await new Promise<'client' | 'graceful'>((resolve) => {
        if (ctx.signal.aborted) return resolve('client');
        if (session.closed) return resolve('graceful');
        const onClient = () => done('client');
        const onGraceful = () => done('graceful');
        const done = (why: 'client' | 'graceful') => {
          ctx.signal.removeEventListener('abort', onClient);
          session.closedSignal.removeEventListener('abort', onGraceful);
          this.#closing.delete(onGraceful);
          resolve(why);
        };
        ctx.signal.addEventListener('abort', onClient, { once: true });
        session.closedSignal.addEventListener('abort', onGraceful, { once: true });
        this.#closing.add(onGraceful);
      });
      if (ended === 'client') return undefined;
      const serverInfo = options.serverInfo ?? session.initializeResult?.serverInfo;
      return { message: resultResponse(request.id, listenResult(request.id, serverInfo ? { serverInfo } : {})), status: 200 };
    } finally {
      this.#listeners.get(session)?.delete(listener);
      if (this.#listeners.get(session)?.size === 0) this.#listeners.delete(session);
      release();
      void this.#unsubscribe(session, uris).catch(() => {});
    }
  }
}
