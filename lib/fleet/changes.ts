/**
 * Changes an upstream reported to one replica, told to every replica of the fleet (Redis pub/sub
 * on one channel per fleet), so `subscriptions/listen` streams anywhere hear them. A change is
 * scoped to the caller whose upstream session reported it: the scope travels as a keyed hash,
 * never as the caller's credentials. A replica does not hear its own changes back (it delivered
 * them already). Subscribing takes a connection of its own, opened with the first subscriber.
 */
import type { JsonRpcNotification } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import type { FleetKeys } from './fleetKeys.ts';
import { boundedConnect, closeFleetRedis, subscriberOf, type FleetRedis } from './fleetRedis.ts';
import { signWith, type HopSecrets } from './hopSecrets.ts';

/** The largest change sent between replicas; a larger one is delivered on its own replica only. */
const MAX_CHANGE_BYTES = 64 * 1024;

/** Different changes on their way to Redis at once; past it a change stays on its own replica. */
const MAX_SENDING = 1024;

/** Scopes remembered with their hash (a bounded memo: hashing is per message otherwise). */
const MAX_MEMO = 1024;

/** Told of a change another replica reported: its scope's hash, the notification, and the replica. */
export type ChangeHandler = (scopeHash: string, notification: JsonRpcNotification, from: string) => void;

/** The fleet's channel of changes, for one replica. */
export class FleetChanges {
  readonly #redis: FleetRedis;
  readonly #channel: string;
  readonly #self: string;
  readonly #secrets: HopSecrets;
  /** The secret the memo's hashes were made with. */
  #memoSecret: Buffer | undefined;
  readonly #handlers = new Set<ChangeHandler>();
  readonly #memo = new Map<string, string>();
  /** Changes on their way to Redis, each with whether the same was reported again meanwhile. */
  readonly #sending = new Map<string, { again: boolean }>();
  #subscriber: Promise<FleetRedis> | undefined;
  #onError: ((error: unknown) => void) | undefined;

  constructor(redis: FleetRedis, keys: FleetKeys, self: string, secrets: HopSecrets, onError?: (error: unknown) => void) {
    this.#redis = redis;
    this.#channel = keys.changes;
    this.#self = self;
    this.#secrets = secrets;
    this.#onError = onError;
  }

  /** What `scope` is called between replicas (keyed with the fleet's current secret). */
  hash(scope: string): string {
    const secret = this.#secrets.current;
    if (secret !== this.#memoSecret) {
      this.#memo.clear();
      this.#memoSecret = secret;
    }
    let hashed = this.#memo.get(scope);
    if (hashed === undefined) {
      hashed = signWith(secret, `scope\n${scope}`);
      if (this.#memo.size >= MAX_MEMO) this.#memo.clear();
      this.#memo.set(scope, hashed);
    }
    return hashed;
  }

  /**
   * Tells the other replicas of a change reported for `scope`. A change the same as one still on
   * its way (a chatty server's list changes) is sent once more after it, not once per report: a
   * listener hears that something changed, and what is sent and held stays bounded by what Redis
   * answers, not by how fast the server reports.
   */
  publish(scope: string, notification: JsonRpcNotification): void {
    const text = JSON.stringify({ from: this.#self, scope: this.hash(scope), notification });
    if (Buffer.byteLength(text) > MAX_CHANGE_BYTES) return;
    const sending = this.#sending.get(text);
    if (sending) {
      sending.again = true;
      return;
    }
    if (this.#sending.size >= MAX_SENDING) {
      this.#onError?.(
        new Error(`${MAX_SENDING} different changes are on their way to the fleet's Redis: a change was not told to the other replicas`),
      );
      return;
    }
    const entry = { again: false };
    this.#sending.set(text, entry);
    const send = (): void => {
      this.#redis
        .publish(this.#channel, text)
        .catch((e: unknown) => this.#onError?.(e))
        .finally(() => {
          if (!entry.again) return void this.#sending.delete(text);
          entry.again = false;
          send();
        });
    };
    send();
  }

  /** Hears the other replicas' changes until the returned function is called. */
  async subscribe(handler: ChangeHandler): Promise<() => void> {
    this.#handlers.add(handler);
    await (this.#subscriber ??= this.#open());
    return () => void this.#handlers.delete(handler);
  }

  async #open(): Promise<FleetRedis> {
    const subscriber = subscriberOf(this.#redis);
    subscriber.on('error', (e: Error) => this.#onError?.(e));
    await boundedConnect(subscriber, "the fleet's Redis (for changes)");
    await subscriber.subscribe(this.#channel, (text) => this.#heard(text));
    return subscriber;
  }

  #heard(text: string): void {
    let change: unknown;
    try {
      change = JSON.parse(text);
    } catch {
      return;
    }
    if (!isRecord(change) || typeof change['from'] !== 'string' || change['from'] === this.#self || typeof change['scope'] !== 'string')
      return;
    const notification = change['notification'];
    if (!isRecord(notification) || notification['jsonrpc'] !== '2.0' || typeof notification['method'] !== 'string') return;
    for (const handler of this.#handlers) handler(change['scope'], notification as unknown as JsonRpcNotification, change['from']);
  }

  /** Closes the subscription's connection. Idempotent. */
  async close(): Promise<void> {
    this.#handlers.clear();
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    const open = await subscriber?.catch(() => undefined);
    if (open) await closeFleetRedis(open);
  }
}
