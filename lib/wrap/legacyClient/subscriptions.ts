/**
 * A bridged session's subscriptions: the resources the legacy client subscribed to and the list
 * notifications it may get, carried by one upstream `subscriptions/listen`, re-opened whenever the
 * set changes. Not the translation of a listen notification itself: `core/translate` does that.
 */
import { AdapterError } from '../../core/errors.ts';
import type { JsonRpcNotification, JsonRpcRequest } from '../../core/jsonrpc.ts';
import type { JsonObject } from '../../core/primitives.ts';
import { sessionMeta } from '../../core/translate/envelope.ts';
import { legacySubscriptionsToFilter, notificationFromListen } from '../../core/translate/subscriptions.ts';
import type { ModernUpstream } from '../../transport/modernUpstream.ts';
import type { BridgeSession } from './bridgeSession.ts';

/** Where the notifications of the listen go. */
export interface SubscriptionsHooks {
  /** A notification for the client, translated to the legacy wire. */
  readonly notify: (notification: JsonRpcNotification) => void;
  /** The server's tool list changed (before the client is told). */
  readonly toolsChanged: () => void;
  /** The listen failed (other than by being cancelled). */
  readonly error: (error: Error) => void;
}

interface Listen {
  readonly controller: AbortController;
  readonly filterKey: string;
}

/** The subscriptions of one session and the upstream listen that stands for them. */
export class Subscriptions {
  readonly #upstream: ModernUpstream;
  readonly #session: BridgeSession;
  readonly #hooks: SubscriptionsHooks;
  readonly #ackTimeoutMs: number;
  readonly #subscribed = new Set<string>();
  #listen: Listen | undefined;
  #closed = false;

  /** `ackTimeoutMs`: how long a (re-)opening waits at most for the upstream to acknowledge. */
  constructor(upstream: ModernUpstream, session: BridgeSession, hooks: SubscriptionsHooks, ackTimeoutMs: number) {
    this.#upstream = upstream;
    this.#session = session;
    this.#hooks = hooks;
    this.#ackTimeoutMs = ackTimeoutMs;
  }

  /** Adds (`resources/subscribe`) or removes a resource, then re-opens the listen; resolves once acknowledged. */
  async change(uri: string, subscribed: boolean): Promise<void> {
    if (subscribed) this.#subscribed.add(uri);
    else this.#subscribed.delete(uri);
    await this.reopen();
  }

  /** Opens (or re-opens) the upstream listen that stands for the session's subscriptions; resolves once acknowledged. */
  async reopen(): Promise<void> {
    const session = this.#session.view;
    if (!session || this.#closed) return;
    const filter = legacySubscriptionsToFilter([...this.#subscribed].sort(), this.#session.capabilities);
    const key = JSON.stringify(filter);
    if (this.#listen?.filterKey === key) return;
    this.#listen?.controller.abort('the subscription set changed');
    this.#listen = undefined;
    if (Object.keys(filter).length === 0) return;
    const controller = new AbortController();
    this.#listen = { controller, filterKey: key };
    let acknowledged!: () => void;
    const ack = new Promise<void>((resolve) => (acknowledged = resolve));
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: 'listen',
      method: 'subscriptions/listen',
      params: { notifications: filter as JsonObject, _meta: sessionMeta(session, undefined, this.#session.modernVersion) },
    };
    void this.#upstream
      .request(request, {
        signal: controller.signal,
        onNotification: (n) => {
          if (n.method === 'notifications/subscriptions/acknowledged') {
            acknowledged();
            return;
          }
          const { notification } = notificationFromListen(n);
          if (notification.method === 'notifications/tools/list_changed') this.#hooks.toolsChanged();
          this.#hooks.notify(notification);
        },
      })
      .then(
        () => acknowledged(),
        (e: unknown) => {
          acknowledged();
          if (!(e instanceof AdapterError && e.code === 'cancelled')) this.#hooks.error(e instanceof Error ? e : new Error(String(e)));
        },
      )
      .finally(() => {
        if (this.#listen?.controller === controller) this.#listen = undefined;
      });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([ack, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#ackTimeoutMs)))]);
    clearTimeout(timer);
  }

  /** Ends the listen for good; later re-openings do nothing. */
  close(): void {
    this.#closed = true;
    this.#listen?.controller.abort('the session closed');
  }
}
