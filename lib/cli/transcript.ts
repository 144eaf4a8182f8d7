/**
 * A recorded exchange, message by message, in the other era: what `mcp-dual-era explain` shows.
 * A legacy transcript (it opens with `initialize`, or its requests carry no modern `_meta`) becomes
 * what a modern peer would see through the adapter; a modern one (`_meta` on its requests) becomes
 * what a legacy peer would see. Stateful (the session, the calls in flight, the pushes of a round,
 * the log level, the subscriptions) and pure: the same transcript always explains the same way.
 */
import { claimedEra } from '../core/era.ts';
import type { WireError } from '../core/errors.ts';
import { classify, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import type { InitializeParams } from '../core/legacy/lifecycle.ts';
import { LEGACY_SERVER_REQUESTS } from '../core/legacy/methods.ts';
import type { InputMethod } from '../core/legacy/inputs.ts';
import { isRecord, type Implementation, type JsonObject, type LoggingLevel } from '../core/primitives.ts';
import type { InputRequests } from '../core/modern/inputs.ts';
import { discoverToInitializeResult, initializeResultToDiscover } from '../core/translate/discover.ts';
import {
  discoverToInitializeRequest,
  initializeToDiscoverRequest,
  readEnvelope,
  requestToLegacy,
  requestToModern,
  sessionFromInitialize,
  type LegacySessionView,
} from '../core/translate/envelope.ts';
import { errorToLegacy, errorToModern } from '../core/translate/errors.ts';
import {
  inputKeyOf,
  inputRequestToPush,
  inputRequiredResult,
  inputResponseToResult,
  readInputRequired,
  resultToInputResponse,
  retryRequest,
} from '../core/translate/inputRequests.ts';
import {
  cancelToLegacy,
  cancelToModern,
  isLegacyOnlyNotification,
  logToLegacy,
  logToModern,
  progressToLegacy,
  progressToModern,
} from '../core/translate/notifications.ts';
import { resultToLegacy, resultToModern } from '../core/translate/results.ts';
import {
  filterToLegacySubscriptions,
  legacySubscriptionsToFilter,
  notificationFromListen,
  notificationToListen,
  readListenFilter,
} from '../core/translate/subscriptions.ts';
import type { SubscriptionFilter } from '../core/modern/notifications.ts';
import { isMrtrMethod } from '../core/modern/methods.ts';

/** Who sent a message. */
export type Side = 'client' | 'server';

/** One message of the transcript and what it becomes in the other era. */
export interface ExplainedMessage {
  /** The era of the transcript (of `message`). */
  readonly era: 'legacy' | 'modern';
  readonly from: Side;
  readonly message: unknown;
  /** What the other era carries in its place: nothing, one message, or several. */
  readonly becomes: readonly JsonRpcMessage[];
  /** Why, in a sentence. */
  readonly note: string;
  /** Set when the message could not be translated (malformed, or out of place). */
  readonly problem?: string;
}

/** The sealed state the adapter would put in a round (shown, not sealed, in an explanation). */
export const SHOWN_REQUEST_STATE = '<sealed by mcp-dual-era>';

const PUSHES = new Set<string>(LEGACY_SERVER_REQUESTS.filter((m) => m !== 'ping'));

interface Call {
  readonly method: string;
  readonly params: JsonObject | undefined;
  /** The request in the other era (a retry is built from it). */
  readonly translated?: JsonRpcRequest;
  /** The id its answer carries in the other era, when not its own (a retry answers the first call). */
  answerAs?: RequestId;
}

interface RoundPush {
  readonly key: string;
  readonly push: JsonRpcRequest;
  answer?: JsonObject;
}

/** The era a transcript speaks: modern when a request claims a modern version in its `_meta`. */
export function transcriptEra(messages: readonly unknown[]): 'legacy' | 'modern' {
  for (const m of messages) {
    const c = classify(m);
    if (!c.ok || c.value.kind !== 'request') continue;
    if (c.value.message.method === 'initialize') return 'legacy';
    if (claimedEra(c.value.message) === 'modern') return 'modern';
  }
  return 'legacy';
}

/** Explains a whole transcript. */
export function explainTranscript(messages: readonly unknown[], options: { era?: 'legacy' | 'modern' } = {}): ExplainedMessage[] {
  const explainer = new TranscriptExplainer(options.era ?? transcriptEra(messages));
  return messages.map((m) => explainer.explain(m));
}

/** Explains a transcript one message at a time, in order. */
export class TranscriptExplainer {
  readonly era: 'legacy' | 'modern';
  #session: LegacySessionView | undefined;
  #serverInfo: Implementation | undefined;
  #serverCapabilities: JsonObject = {};
  /** Requests of the transcript's client, by id. */
  #calls = new Map<RequestId, Call>();
  /** Requests of the transcript's server (pushes), by id. */
  #pushes = new Map<RequestId, { method: string; call: RequestId | undefined; key: string }>();
  /** Legacy → modern: the pushes of the round each call is in. */
  #rounds = new Map<RequestId, RoundPush[]>();
  #ordinals = new Map<RequestId, number>();
  /** Modern → legacy: the pushes each parked call's input keys became. */
  #held = new Map<string, { id: RequestId; method: InputMethod }>();
  /** Modern → legacy: the first call each round's requestState belongs to. */
  #parkedCalls = new Map<string, RequestId>();
  #subscribed: string[] = [];
  #logLevel: LoggingLevel | undefined;
  #nextId = 1;
  #listenId: RequestId = 'listen-1';

  constructor(era: 'legacy' | 'modern') {
    this.era = era;
  }

  explain(message: unknown): ExplainedMessage {
    const c = classify(message);
    if (!c.ok) return this.#out('client', message, [], 'not a JSON-RPC message', c.error.message);
    const v = c.value;
    if (v.kind === 'batch')
      return this.#out(
        'client',
        message,
        [],
        'a JSON-RPC batch (2025-03-26)',
        this.era === 'legacy' ? undefined : 'batches have no modern form',
      );
    return this.era === 'legacy' ? this.#legacy(v.kind, v.message as JsonRpcMessage) : this.#modern(v.kind, v.message as JsonRpcMessage);
  }

  #out(from: Side, message: unknown, becomes: JsonRpcMessage[], note: string, problem?: string): ExplainedMessage {
    return problem === undefined
      ? { era: this.era, from, message, becomes, note }
      : { era: this.era, from, message, becomes, note, problem };
  }

  /** A response's sender: the other side of the request it answers. */
  #responder(id: RequestId | null | undefined): Side {
    if (id !== undefined && id !== null && this.#pushes.has(id)) return 'client';
    return 'server';
  }

  // ——— legacy → modern ———

  #legacy(kind: 'request' | 'notification' | 'result' | 'error', message: JsonRpcMessage): ExplainedMessage {
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

  // ——— modern → legacy ———

  #modern(kind: 'request' | 'notification' | 'result' | 'error', message: JsonRpcMessage): ExplainedMessage {
    if (kind === 'request') return this.#modernRequest(message as JsonRpcRequest);
    if (kind === 'notification') return this.#modernNotification(message as JsonRpcNotification);
    return this.#modernResponse(message, kind);
  }

  #modernRequest(r: JsonRpcRequest): ExplainedMessage {
    const out: JsonRpcMessage[] = [];
    const envelope = readEnvelope(r);
    if (!envelope.ok) return this.#out('client', r, [], r.method, envelope.error.message);
    if (!this.#session) {
      const init = discoverToInitializeRequest({
        jsonrpc: '2.0',
        id: r.method === 'server/discover' ? r.id : `init-${this.#nextId++}`,
        method: 'server/discover',
        params: r.params ?? {},
      });
      if (init.ok) {
        out.push(init.value);
        this.#session = sessionFromInitialize(init.value.params as unknown as InitializeParams);
      }
    }
    const level = envelope.value.logLevel;
    if (level !== undefined && level !== this.#logLevel) {
      this.#logLevel = level;
      out.push({ jsonrpc: '2.0', id: `set-level-${this.#nextId++}`, method: 'logging/setLevel', params: { level } });
    }
    if (r.method === 'server/discover') {
      this.#calls.set(r.id, { method: r.method, params: r.params });
      return this.#out(
        'client',
        r,
        out,
        'server/discover becomes initialize (then notifications/initialized); the session is opened for this client identity and capability set',
      );
    }
    if (r.method === 'subscriptions/listen') {
      const filter = readListenFilter(r.params);
      if (!filter.ok) return this.#out('client', r, out, r.method, filter.error.message);
      const uris = filterToLegacySubscriptions(filter.value, this.#serverCapabilities);
      for (const uri of uris)
        out.push({ jsonrpc: '2.0', id: `subscribe-${this.#nextId++}`, method: 'resources/subscribe', params: { uri } });
      this.#listenId = r.id;
      return this.#out(
        'client',
        r,
        out,
        `the listen stream becomes the session's own notifications${uris.length ? ` plus resources/subscribe for ${uris.length} resource(s)` : ''}`,
      );
    }
    const legacy = requestToLegacy(r, { envelope: envelope.value });
    if (!legacy.ok) return this.#out('client', r, out, r.method, legacy.error.message);
    const retry = legacy.value.envelope.retry;
    if (retry?.inputResponses) {
      const answers: JsonRpcMessage[] = [];
      for (const [key, response] of Object.entries(retry.inputResponses)) {
        const held = this.#held.get(key);
        if (!held) continue;
        const result = inputResponseToResult(held.method, key, response);
        if (result.ok) answers.push({ jsonrpc: '2.0', id: held.id, result: result.value });
        this.#held.delete(key);
      }
      const first = retry.requestState === undefined ? undefined : this.#parkedCalls.get(retry.requestState);
      this.#calls.set(r.id, { method: r.method, params: r.params, ...(first !== undefined ? { answerAs: first } : {}) });
      return this.#out(
        'client',
        r,
        [...out, ...answers],
        'a retry: its inputResponses answer the requests the legacy server pushed, and the original call goes on',
      );
    }
    this.#calls.set(r.id, { method: r.method, params: r.params });
    return this.#out(
      'client',
      r,
      [...out, legacy.value.request],
      'the same request without the era keys of _meta (the session carries them)',
    );
  }

  #modernResponse(message: JsonRpcMessage, kind: 'result' | 'error'): ExplainedMessage {
    const id = (message as { id?: RequestId | null }).id;
    const call = id === undefined || id === null ? undefined : this.#calls.get(id);
    if (!call || id === undefined || id === null)
      return this.#out('server', message, [], 'a response', 'answers no request of this transcript');
    this.#calls.delete(id);
    const answerId = call.answerAs ?? id;
    if (kind === 'error') {
      const error = (message as { error: WireError }).error;
      const legacy = errorToLegacy(error, { method: call.method });
      return this.#out(
        'server',
        message,
        [{ jsonrpc: '2.0', id: answerId, error: legacy }],
        legacy.code === error.code ? 'the same error' : `error ${error.code} becomes ${legacy.code}`,
      );
    }
    const result = (message as { result: JsonObject }).result;
    if (call.method === 'server/discover') {
      this.#serverCapabilities = isRecord(result['capabilities']) ? result['capabilities'] : {};
      const init = discoverToInitializeResult(result);
      return init.ok
        ? this.#out(
            'server',
            message,
            [{ jsonrpc: '2.0', id, result: init.value as JsonObject }],
            'the discover result becomes the initialize result',
          )
        : this.#out('server', message, [], 'discover result', init.error.message);
    }
    if (call.method === 'subscriptions/listen')
      return this.#out('server', message, [], 'the listen ended: the subscriptions end (resources/unsubscribe)');
    if (result['resultType'] === 'input_required') {
      const read = readInputRequired(result);
      if (!read.ok) return this.#out('server', message, [], 'input_required', read.error.message);
      const pushes: JsonRpcMessage[] = [];
      for (const [key, input] of Object.entries(read.value.inputRequests as InputRequests)) {
        const push = inputRequestToPush(key, input, { id: `push-${this.#nextId++}` });
        if (!push.ok) return this.#out('server', message, [], 'input_required', push.error.message);
        this.#held.set(key, { id: push.value.id, method: push.value.method as InputMethod });
        pushes.push(push.value);
      }
      if (read.value.requestState !== undefined) this.#parkedCalls.set(read.value.requestState, call.answerAs ?? id);
      return this.#out(
        'server',
        message,
        pushes,
        'input_required becomes requests pushed to the legacy client; the call stays open until they are answered',
      );
    }
    const legacy = resultToLegacy(call.method, result);
    if (!legacy.ok) return this.#out('server', message, [], call.method, legacy.error.message);
    return this.#out(
      'server',
      message,
      [{ jsonrpc: '2.0', id: answerId, result: legacy.value.result }],
      answerId === id
        ? 'the same result without resultType, cache fields and the server info'
        : `the answer to the first call (id ${JSON.stringify(answerId)}), without resultType, cache fields and the server info`,
    );
  }

  #modernNotification(n: JsonRpcNotification): ExplainedMessage {
    switch (n.method) {
      case 'notifications/cancelled': {
        const c = cancelToLegacy(n);
        return c.ok ? this.#out('client', n, [c.value], 'the same cancellation') : this.#out('client', n, [], n.method, c.error.message);
      }
      case 'notifications/message': {
        const l = logToLegacy(n);
        return l.ok
          ? this.#out('server', n, [l.value], 'the same log notification')
          : this.#out('server', n, [], n.method, l.error.message);
      }
      case 'notifications/progress': {
        const p = progressToLegacy(n);
        return p.ok ? this.#out('server', n, [p.value], 'the same progress') : this.#out('server', n, [], n.method, p.error.message);
      }
    }
    const plain = notificationFromListen(n);
    return this.#out(
      'server',
      n,
      [plain.notification],
      plain.subscriptionId === undefined ? 'the same notification' : "the listen stream's notification, without its subscriptionId",
    );
  }
}
