/**
 * A modern transcript (`_meta` on its requests) explained as what a legacy peer would see through
 * the adapter: the first request opens a session with `initialize`, a change of log level becomes
 * `logging/setLevel`, a listen stream becomes the session's notifications and `resources/subscribe`,
 * and an `input_required` answer becomes requests pushed to the legacy client, the call parked until
 * the retry's `inputResponses` answer them. Stateful and pure: the same transcript always explains
 * the same way. The other direction is transcriptToModern.ts.
 */
import type { WireError } from '../core/errors.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from '../core/jsonrpc.ts';
import type { InitializeParams } from '../core/legacy/lifecycle.ts';
import type { InputMethod } from '../core/legacy/inputs.ts';
import { isRecord, type JsonObject, type LoggingLevel } from '../core/primitives.ts';
import type { InputRequests } from '../core/modern/inputs.ts';
import { discoverToInitializeResult } from '../core/translate/discover.ts';
import {
  discoverToInitializeRequest,
  readEnvelope,
  requestToLegacy,
  sessionFromInitialize,
  type LegacySessionView,
} from '../core/translate/envelope.ts';
import { errorToLegacy } from '../core/translate/errors.ts';
import { inputRequestToPush, inputResponseToResult, readInputRequired } from '../core/translate/inputRequests.ts';
import { cancelToLegacy, logToLegacy, progressToLegacy } from '../core/translate/notifications.ts';
import { resultToLegacy } from '../core/translate/results.ts';
import { filterToLegacySubscriptions, notificationFromListen, readListenFilter } from '../core/translate/subscriptions.ts';
import { explained, type ExplainedMessage, type MessageKind, type Side } from './explainedMessage.ts';

interface Call {
  readonly method: string;
  readonly params: JsonObject | undefined;
  /** The id its answer carries in the legacy era, when not its own (a retry answers the first call). */
  readonly answerAs?: RequestId;
}

/** Explains a modern transcript one message at a time, in order, as the legacy era carries it. */
export class ModernToLegacy {
  #session: LegacySessionView | undefined;
  #serverCapabilities: JsonObject = {};
  /** Requests of the transcript's client, by id. */
  #calls = new Map<RequestId, Call>();
  /** The pushes each parked call's input keys became. */
  #held = new Map<string, { id: RequestId; method: InputMethod }>();
  /** The first call each round's requestState belongs to. */
  #parkedCalls = new Map<string, RequestId>();
  #logLevel: LoggingLevel | undefined;
  #nextId = 1;

  explain(kind: MessageKind, message: JsonRpcMessage): ExplainedMessage {
    if (kind === 'request') return this.#modernRequest(message as JsonRpcRequest);
    if (kind === 'notification') return this.#modernNotification(message as JsonRpcNotification);
    return this.#modernResponse(message, kind);
  }

  #out(from: Side, message: unknown, becomes: JsonRpcMessage[], note: string, problem?: string): ExplainedMessage {
    return explained('modern', from, message, becomes, note, problem);
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
