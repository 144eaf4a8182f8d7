/**
 * A legacy transcript (it opens with `initialize`, or its requests carry no modern `_meta`)
 * explained as what a modern peer would see through the adapter: the handshake becomes
 * `server/discover` and `_meta` on every request, the log level and the subscriptions ride on later
 * requests and one `subscriptions/listen` stream, and the server's pushes become `input_required`
 * rounds of the call they belong to, answered by a retry once every input of the round is in.
 * Stateful and pure: the same transcript always explains the same way. The other direction is
 * transcriptToLegacy.ts.
 */
import type { WireError } from '../core/errors.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from '../core/jsonrpc.ts';
import type { InitializeParams } from '../core/legacy/lifecycle.ts';
import { LEGACY_SERVER_REQUESTS } from '../core/legacy/methods.ts';
import type { InputMethod } from '../core/legacy/inputs.ts';
import { isRecord, type Implementation, type JsonObject, type LoggingLevel } from '../core/primitives.ts';
import { initializeResultToDiscover } from '../core/translate/discover.ts';
import { initializeToDiscoverRequest, requestToModern, sessionFromInitialize, type LegacySessionView } from '../core/translate/envelope.ts';
import { errorToModern } from '../core/translate/errors.ts';
import { inputKeyOf, inputRequiredResult, resultToInputResponse, retryRequest } from '../core/translate/inputRequests.ts';
import { cancelToModern, isLegacyOnlyNotification, logToModern, progressToModern } from '../core/translate/notifications.ts';
import { resultToModern } from '../core/translate/results.ts';
import { legacySubscriptionsToFilter, notificationToListen } from '../core/translate/subscriptions.ts';
import type { SubscriptionFilter } from '../core/modern/notifications.ts';
import { isMrtrMethod } from '../core/modern/methods.ts';
import { explained, type ExplainedMessage, type MessageKind, type Side } from './explainedMessage.ts';

/** The sealed state the adapter would put in a round (shown, not sealed, in an explanation). */
export const SHOWN_REQUEST_STATE = '<sealed by mcp-dual-era>';

const PUSHES = new Set<string>(LEGACY_SERVER_REQUESTS.filter((m) => m !== 'ping'));

interface Call {
  readonly method: string;
  readonly params: JsonObject | undefined;
  /** The request in the modern era (a retry is built from it). */
  readonly translated?: JsonRpcRequest;
  /** The id its answer carries in the modern era, when not its own (a retry answers the first call). */
  answerAs?: RequestId;
}

interface RoundPush {
  readonly key: string;
  readonly push: JsonRpcRequest;
  answer?: JsonObject;
}

/** Explains a legacy transcript one message at a time, in order, as the modern era carries it. */
export class LegacyToModern {
  #session: LegacySessionView | undefined;
  #serverInfo: Implementation | undefined;
  #serverCapabilities: JsonObject = {};
  /** Requests of the transcript's client, by id. */
  #calls = new Map<RequestId, Call>();
  /** Requests of the transcript's server (pushes), by id. */
  #pushes = new Map<RequestId, { method: string; call: RequestId | undefined; key: string }>();
  /** The pushes of the round each call is in. */
  #rounds = new Map<RequestId, RoundPush[]>();
  #ordinals = new Map<RequestId, number>();
  #subscribed: string[] = [];
  #logLevel: LoggingLevel | undefined;
  #nextId = 1;
  #listenId: RequestId = 'listen-1';

  explain(kind: MessageKind, message: JsonRpcMessage): ExplainedMessage {
    if (kind === 'request') {
      const r = message as JsonRpcRequest;
      if (PUSHES.has(r.method)) return this.#legacyPush(r);
      return this.#legacyRequest(r);
    }
    if (kind === 'notification') return this.#legacyNotification(message as JsonRpcNotification);
    const id = (message as { id?: RequestId | null }).id;
    if (this.#responder(id) === 'client') return this.#legacyPushAnswer(message, kind);
    return this.#legacyResponse(message, kind);
  }

  #out(from: Side, message: unknown, becomes: JsonRpcMessage[], note: string, problem?: string): ExplainedMessage {
    return explained('legacy', from, message, becomes, note, problem);
  }

  /** A response's sender: the other side of the request it answers. */
  #responder(id: RequestId | null | undefined): Side {
    if (id !== undefined && id !== null && this.#pushes.has(id)) return 'client';
    return 'server';
  }

  #legacyRequest(r: JsonRpcRequest): ExplainedMessage {
    switch (r.method) {
      case 'initialize': {
        this.#session = sessionFromInitialize(r.params as unknown as InitializeParams);
        this.#calls.set(r.id, { method: r.method, params: r.params });
        const d = initializeToDiscoverRequest(r);
        return d.ok
          ? this.#out(
              'client',
              r,
              [d.value],
              'no handshake: the client asks server/discover (optional), and sends its info and capabilities in _meta on every request',
            )
          : this.#out('client', r, [], 'initialize', d.error.message);
      }
      case 'ping':
        this.#calls.set(r.id, { method: r.method, params: r.params });
        return this.#out('client', r, [], 'ping is gone in 2026-07-28: an adapter answers it itself');
      case 'logging/setLevel': {
        this.#calls.set(r.id, { method: r.method, params: r.params });
        const level = r.params?.['level'];
        if (typeof level === 'string') this.#logLevel = level as LoggingLevel;
        if (this.#session) this.#session = { ...this.#session, logLevel: this.#logLevel! };
        return this.#out(
          'client',
          r,
          [],
          `no logging/setLevel: every later request carries logLevel "${String(level)}" in its _meta, and gets only its own logs`,
        );
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        this.#calls.set(r.id, { method: r.method, params: r.params });
        const uri = r.params?.['uri'];
        if (typeof uri === 'string')
          this.#subscribed =
            r.method === 'resources/subscribe' ? [...new Set([...this.#subscribed, uri])] : this.#subscribed.filter((u) => u !== uri);
        const filter = legacySubscriptionsToFilter(this.#subscribed, this.#serverCapabilities);
        this.#listenId = `listen-${this.#nextId++}`;
        const listen: JsonRpcRequest = {
          jsonrpc: '2.0',
          id: this.#listenId,
          method: 'subscriptions/listen',
          params: { notifications: filter as JsonObject, _meta: this.#meta() },
        };
        return this.#out(
          'client',
          r,
          [listen],
          `subscriptions live on one subscriptions/listen stream: re-opened with the subscribed set (${this.#subscribed.length} resource(s))`,
        );
      }
    }
    if (!this.#session) return this.#out('client', r, [], r.method, 'a request before initialize');
    const m = requestToModern(r, this.#session);
    if (!m.ok) return this.#out('client', r, [], r.method, m.error.message);
    this.#calls.set(r.id, { method: r.method, params: r.params, translated: m.value });
    return this.#out('client', r, [m.value], "the same request, with the client's version, info, capabilities (and log level) in _meta");
  }

  #meta(): JsonObject {
    const m = this.#session ? requestToModern({ jsonrpc: '2.0', id: 0, method: 'x' }, this.#session) : undefined;
    return m?.ok ? ((m.value.params?.['_meta'] as JsonObject) ?? {}) : {};
  }

  #legacyResponse(message: JsonRpcMessage, kind: 'result' | 'error'): ExplainedMessage {
    const id = (message as { id?: RequestId | null }).id;
    const call = id === undefined || id === null ? undefined : this.#calls.get(id);
    if (!call || id === undefined || id === null)
      return this.#out('server', message, [], 'a response', 'answers no request of this transcript');
    this.#calls.delete(id);
    this.#rounds.delete(id);
    const answerId = call.answerAs ?? id;
    if (kind === 'error') {
      const error = (message as { error: WireError }).error;
      const modern = errorToModern(error, { method: call.method, ...(call.params ? { params: call.params } : {}) });
      return this.#out(
        'server',
        message,
        [{ jsonrpc: '2.0', id: answerId, error: modern }],
        modern.code === error.code ? 'the same error' : `error ${error.code} becomes ${modern.code}`,
      );
    }
    const result = (message as { result: JsonObject }).result;
    switch (call.method) {
      case 'initialize': {
        this.#serverInfo = isRecord(result['serverInfo']) ? (result['serverInfo'] as Implementation) : undefined;
        this.#serverCapabilities = isRecord(result['capabilities']) ? result['capabilities'] : {};
        const d = initializeResultToDiscover(result as never);
        return d.ok
          ? this.#out(
              'server',
              message,
              [{ jsonrpc: '2.0', id, result: d.value as JsonObject }],
              'the initialize result becomes the server/discover result (supported versions, capabilities, server info)',
            )
          : this.#out('server', message, [], 'initialize result', d.error.message);
      }
      case 'ping':
      case 'logging/setLevel':
        return this.#out('server', message, [], 'nothing: the request has no modern form');
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return this.#out('server', message, [], 'nothing: the listen stream acknowledges its filter instead');
    }
    const translated = resultToModern(call.method, result, {
      ...(this.#serverInfo ? { serverInfo: this.#serverInfo } : {}),
      retry: this.#ordinals.has(id),
    });
    this.#ordinals.delete(id);
    if (!translated.ok) return this.#out('server', message, [], call.method, translated.error.message);
    return this.#out(
      'server',
      message,
      [{ jsonrpc: '2.0', id: answerId, result: translated.value.result }],
      answerId === id
        ? 'the same result, with resultType "complete" and the server info in _meta'
        : `the answer to the retry (id ${JSON.stringify(answerId)}), with resultType "complete" and the server info in _meta`,
    );
  }

  #legacyPush(push: JsonRpcRequest): ExplainedMessage {
    // The call the push belongs to: the one its _meta names, else the latest pushable call.
    let owner: RequestId | undefined;
    for (const [id, call] of this.#calls) if (isMrtrMethod(call.method)) owner = id;
    const ordinal = (this.#ordinals.get(owner ?? '') ?? 0) + 1;
    const key = inputKeyOf(push, ordinal);
    this.#pushes.set(push.id, { method: push.method, call: owner, key });
    if (owner === undefined)
      return this.#out(
        'server',
        push,
        [],
        `${push.method} outside any call: an adapter answers it from its configuration (roots given to it; elicitation declined)`,
      );
    this.#ordinals.set(owner, ordinal);
    const round = [...(this.#rounds.get(owner) ?? []).filter((p) => p.answer === undefined), { key, push }];
    this.#rounds.set(owner, round);
    const result = inputRequiredResult(
      round.map((p) => ({ key: p.key, request: p.push })),
      { requestState: SHOWN_REQUEST_STATE, ...(this.#serverInfo ? { serverInfo: this.#serverInfo } : {}) },
    );
    if (!result.ok) return this.#out('server', push, [], push.method, result.error.message);
    return this.#out(
      'server',
      push,
      [{ jsonrpc: '2.0', id: this.#calls.get(owner)?.answerAs ?? owner, result: result.value }],
      `no push in 2026-07-28: the call is answered with input_required (input key "${key}"); the server's request waits`,
    );
  }

  #legacyPushAnswer(message: JsonRpcMessage, kind: 'result' | 'error'): ExplainedMessage {
    const id = (message as { id: RequestId }).id;
    const push = this.#pushes.get(id)!;
    this.#pushes.delete(id);
    if (push.call === undefined)
      return this.#out('client', message, [], 'the answer to a request made outside any call: nothing reaches a modern client');
    const call = this.#calls.get(push.call);
    const round = this.#rounds.get(push.call) ?? [];
    const entry = round.find((p) => p.push.id === id);
    if (!call?.translated || !entry) return this.#out('client', message, [], 'an answer', 'answers no push of this transcript');
    if (kind === 'error')
      return this.#out(
        'client',
        message,
        [],
        'a client error for an input request: the modern client would answer with an error, and the call ends',
        (message as { error: WireError }).error.message,
      );
    const response = resultToInputResponse(push.method as InputMethod, push.key, (message as { result: unknown }).result);
    if (!response.ok) return this.#out('client', message, [], push.method, response.error.message);
    entry.answer = response.value;
    if (round.some((p) => p.answer === undefined))
      return this.#out('client', message, [], `held until every input of the round is answered (key "${push.key}")`);
    const retry = retryRequest(call.translated, {
      id: `${String(push.call)}-retry-${push.key}`,
      inputResponses: Object.fromEntries(round.map((p) => [p.key, p.answer!])),
      requestState: SHOWN_REQUEST_STATE,
    });
    call.answerAs = retry.id;
    return this.#out(
      'client',
      message,
      [retry],
      'the answers travel in a retry of the same call: inputResponses by key, the requestState echoed',
    );
  }

  #legacyNotification(n: JsonRpcNotification): ExplainedMessage {
    switch (n.method) {
      case 'notifications/initialized':
        return this.#out('client', n, [], 'no handshake in 2026-07-28: nothing to confirm');
      case 'notifications/roots/list_changed':
        return this.#out('client', n, [], 'nothing: a modern server asks for roots when a call needs them');
      case 'notifications/cancelled': {
        const c = cancelToModern(n);
        return c.ok
          ? this.#out('client', n, [c.value], "cancellation (over HTTP: closing the request's stream)")
          : this.#out('client', n, [], n.method, c.error.message);
      }
      case 'notifications/message': {
        const l = logToModern(n, this.#logLevel);
        if (!l.ok) return this.#out('server', n, [], n.method, l.error.message);
        return l.value
          ? this.#out('server', n, [l.value], `a log on the stream of the request that asked for logs (at or above "${this.#logLevel}")`)
          : this.#out(
              'server',
              n,
              [],
              this.#logLevel ? `below the request's log level "${this.#logLevel}": not sent` : 'no request asked for logs: not sent',
            );
      }
      case 'notifications/progress': {
        const p = progressToModern(n);
        return p.ok
          ? this.#out('server', n, [p.value], 'progress on the stream of the request that carries the token')
          : this.#out('server', n, [], n.method, p.error.message);
      }
    }
    if (isLegacyOnlyNotification(n.method)) return this.#out('server', n, [], `${n.method} has no modern form`);
    const filter: SubscriptionFilter = legacySubscriptionsToFilter(this.#subscribed, this.#serverCapabilities);
    const tagged = notificationToListen(n, { subscriptionId: this.#listenId, filter });
    return tagged
      ? this.#out('server', n, [tagged], 'delivered on the subscriptions/listen stream, tagged with its subscriptionId')
      : this.#out('server', n, [], 'not asked for by any listen: not sent');
  }
}
