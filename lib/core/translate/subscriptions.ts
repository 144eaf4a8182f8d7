/**
 * Subscriptions both ways (translation table rows 9, 13, 14): a `subscriptions/listen` filter ⇄ the
 * legacy subscribe set and list-changed capabilities, the acknowledgement with what was honoured,
 * `subscriptionId` tagging, the graceful listen result, and matching resource updates to subscribed URIs.
 */
import * as v from 'valibot';
import { MetaKey } from '../era.ts';
import { invalidParams } from '../errors.ts';
import { describe, type JsonRpcNotification, type RequestId } from '../jsonrpc.ts';
import { TASKS_EXTENSION, type ModernServerCapabilities } from '../modern/capabilities.ts';
import { ListenParamsSchema, type SubscriptionFilter } from '../modern/notifications.ts';
import { extend, isRecord, omitKeys, type Implementation, type JsonObject } from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';
import { stampServerInfo } from './meta.ts';

/** Reads a listen request's filter. */
export function readListenFilter(params: unknown): Outcome<SubscriptionFilter> {
  const parsed = v.safeParse(ListenParamsSchema, params);
  return parsed.success ? ok(parsed.output.notifications) : fail(invalidParams(`subscriptions/listen: ${describe(parsed.issues)}`));
}

/** The part of a filter a server with `capabilities` can honour (what the acknowledgement carries). */
export function honouredFilter(requested: SubscriptionFilter, capabilities: ModernServerCapabilities | JsonObject): SubscriptionFilter {
  const caps = capabilities as JsonObject;
  const out: { -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K] } = {};
  const listChanged = (name: string): boolean => isRecord(caps[name]) && caps[name]['listChanged'] === true;
  if (requested.toolsListChanged && listChanged('tools')) out.toolsListChanged = true;
  if (requested.promptsListChanged && listChanged('prompts')) out.promptsListChanged = true;
  if (requested.resourcesListChanged && listChanged('resources')) out.resourcesListChanged = true;
  const resources = caps['resources'];
  if (requested.resourceSubscriptions && isRecord(resources) && resources['subscribe'] === true)
    out.resourceSubscriptions = [...requested.resourceSubscriptions];
  const extensions = caps['extensions'];
  if (requested.taskIds && isRecord(extensions) && TASKS_EXTENSION in extensions) out.taskIds = [...requested.taskIds];
  return out;
}

/** `notifications/subscriptions/acknowledged` for a listen, carrying what is honoured. */
export function acknowledgement(subscriptionId: RequestId, honoured: SubscriptionFilter): JsonRpcNotification {
  return {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [MetaKey.subscriptionId]: subscriptionId }, notifications: honoured },
  };
}

/** The result that ends a listen gracefully. */
export function listenResult(subscriptionId: RequestId, options: { serverInfo?: Implementation } = {}): JsonObject {
  return { resultType: 'complete', _meta: { ...stampServerInfo(undefined, options.serverInfo), [MetaKey.subscriptionId]: subscriptionId } };
}

/** True when `uri` is a subscribed URI or a sub-resource of one. */
export function uriMatches(uri: string, subscribed: readonly string[]): boolean {
  for (const s of subscribed) {
    if (uri === s) return true;
    if (uri.startsWith(s) && (s.endsWith('/') || '/?#'.includes(uri.charAt(s.length)))) return true;
  }
  return false;
}

/** True when a listen with `filter` opted in to this notification. */
export function filterAccepts(notification: Pick<JsonRpcNotification, 'method' | 'params'>, filter: SubscriptionFilter): boolean {
  switch (notification.method) {
    case 'notifications/tools/list_changed':
      return filter.toolsListChanged === true;
    case 'notifications/prompts/list_changed':
      return filter.promptsListChanged === true;
    case 'notifications/resources/list_changed':
      return filter.resourcesListChanged === true;
    case 'notifications/resources/updated': {
      const uri = isRecord(notification.params) ? notification.params['uri'] : undefined;
      return typeof uri === 'string' && uriMatches(uri, filter.resourceSubscriptions ?? []);
    }
    case 'notifications/tasks': {
      const taskId = isRecord(notification.params) ? notification.params['taskId'] : undefined;
      return typeof taskId === 'string' && (filter.taskIds ?? []).includes(taskId);
    }
    default:
      return false;
  }
}

/**
 * An unsolicited legacy notification → the notification for one listen stream: tagged with the
 * listen's id, or `undefined` when the listen did not opt in.
 */
export function notificationToListen(
  notification: JsonRpcNotification,
  listen: { subscriptionId: RequestId; filter: SubscriptionFilter },
): JsonRpcNotification | undefined {
  if (!filterAccepts(notification, listen.filter)) return undefined;
  const params = isRecord(notification.params) ? notification.params : {};
  const meta = isRecord(params['_meta']) ? params['_meta'] : {};
  return {
    jsonrpc: '2.0',
    method: notification.method,
    params: extend(params, { _meta: extend(meta, { [MetaKey.subscriptionId]: listen.subscriptionId }) }),
  };
}

/** A notification from a listen stream → legacy: the subscription tag removed (and empty params dropped). */
export function notificationFromListen(notification: JsonRpcNotification): {
  notification: JsonRpcNotification;
  subscriptionId?: RequestId;
} {
  const params = isRecord(notification.params) ? notification.params : undefined;
  const meta = params && isRecord(params['_meta']) ? params['_meta'] : undefined;
  if (!params || !meta || !(MetaKey.subscriptionId in meta)) return { notification };
  const subscriptionId = meta[MetaKey.subscriptionId] as RequestId;
  const restMeta = omitKeys(meta, [MetaKey.subscriptionId]);
  const rest = omitKeys(params, ['_meta']);
  if (Object.keys(restMeta).length > 0) rest['_meta'] = restMeta;
  const out: JsonRpcNotification =
    Object.keys(rest).length > 0
      ? { jsonrpc: '2.0', method: notification.method, params: rest }
      : { jsonrpc: '2.0', method: notification.method };
  return { notification: out, subscriptionId };
}

/**
 * The listen filter that stands for a legacy session's subscriptions (direction A): list changes
 * the server announces, plus the URIs the legacy client subscribed to.
 */
export function legacySubscriptionsToFilter(
  subscribed: readonly string[],
  capabilities: ModernServerCapabilities | JsonObject,
): SubscriptionFilter {
  const caps = capabilities as JsonObject;
  const out: { -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K] } = {};
  const listChanged = (name: string): boolean => isRecord(caps[name]) && caps[name]['listChanged'] === true;
  if (listChanged('tools')) out.toolsListChanged = true;
  if (listChanged('prompts')) out.promptsListChanged = true;
  if (listChanged('resources')) out.resourcesListChanged = true;
  if (subscribed.length > 0) out.resourceSubscriptions = [...subscribed];
  return out;
}

/**
 * The legacy subscription calls that stand for a listen (direction B): one `resources/subscribe`
 * per URI, or none when the upstream cannot subscribe. List changes need no call upstream.
 */
export function filterToLegacySubscriptions(filter: SubscriptionFilter, capabilities: JsonObject): readonly string[] {
  const resources = capabilities['resources'];
  if (!isRecord(resources) || resources['subscribe'] !== true) return [];
  return [...new Set(filter.resourceSubscriptions ?? [])];
}
