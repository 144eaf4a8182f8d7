/**
 * One legacy client session in front of a modern server (direction A): the `Transport` a legacy
 * client (an SDK v1 `Client`, a host) connects to. `initialize` is answered from the upstream's
 * `server/discover`; every other request is stamped with the session's `_meta` and forwarded;
 * `input_required` rounds become real requests pushed to the client; subscriptions ride an
 * upstream `subscriptions/listen`. When the upstream turns out to be legacy the session is relayed
 * unchanged. Not an HTTP or stdio front: `wrapModernServer` puts those around it.
 */
import { AdapterError, ErrorCode, internalError, invalidRequest, type WireError } from '../../core/errors.ts';
import { LATEST_MODERN_VERSION, LEGACY_VERSIONS, negotiateLegacyVersion, pickModernVersion, type LegacyVersion, type ModernVersion } from '../../core/era.ts';
import { classify, errorResponse, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type RequestId } from '../../core/jsonrpc.ts';
import { InitializeParamsSchema, type InitializeParams } from '../../core/legacy/lifecycle.ts';
import { isInputMethod } from '../../core/legacy/inputs.ts';
import { isMrtrMethod, type InputRequests } from '../../core/modern/inputs.ts';
import { isRecord, LoggingLevelSchema, type JsonObject, type LoggingLevel } from '../../core/primitives.ts';
import { assembleBatch, splitBatch } from '../../core/translate/batch.ts';
import { discoverToInitializeResult } from '../../core/translate/discover.ts';
import { requestToModern, sessionFromInitialize, sessionMeta, type LegacySessionView } from '../../core/translate/envelope.ts';
import { inputRequestToPush, readInputRequired, resultToInputResponse, retryRequest } from '../../core/translate/inputRequests.ts';
import { discoverVerdict, inputFailure, refusalToInitializeError, unanswerableInputs, upstreamErrorToLegacy } from '../../core/translate/legacyClient.ts';
import { logToLegacy, progressToLegacy } from '../../core/translate/notifications.ts';
import { resultToLegacy } from '../../core/translate/results.ts';
import { legacySubscriptionsToFilter, notificationFromListen } from '../../core/translate/subscriptions.ts';
import { fail, ok, type Outcome } from '../../core/outcome.ts';
import * as v from 'valibot';
import { createEmitter } from '../../events.ts';
import { UpstreamHttpError, type ModernUpstream } from '../../transport/modernUpstream.ts';
import type { MessageExtra, SdkTransport, Transport, TransportMessage } from '../../transport/transport.ts';

/** Options of a legacy client session bridged to a modern server. */
export interface LegacyClientBridgeOptions {
  /** Most `input_required` rounds one call may take before it fails (default 8). */
  readonly maxRounds?: number;
  /** Log level stamped when the client never called `logging/setLevel` (default none: no logs). */
  readonly defaultLogLevel?: LoggingLevel;
  /** How long a discover result is reused when the server gives no `ttlMs` (default 0). */
  readonly discoverCache?: DiscoverCache;
  /** Legacy versions offered to the client (default all). */
  readonly legacyVersions?: readonly LegacyVersion[];
  /** Milliseconds; subscribe waits at most this long for the upstream to acknowledge (default 5000). */
  readonly subscribeAckTimeoutMs?: number;
  /** Deadline for one call, input rounds included; then it is cancelled upstream and answered -32603 (default 5 minutes). */
  readonly requestTimeoutMs?: number;
  /** The clock (default `Date.now`). */
  readonly now?: () => number;
}

/** Events of a bridge: what was translated away, for logs. */
export type LegacyClientBridgeEvents = {
  /** A tool was dropped from `tools/list` (invalid `x-mcp-header`). */
  droppedTool: { tool: string; reason: string };
  /** The upstream answered discover like a legacy server: the session is relayed unchanged. */
  passthrough: { upstream: string };
  /** An upstream failure outside any request. */
  error: Error;
};

/** A discover result shared by the sessions of one upstream, valid until `expiresAt`. */
export class DiscoverCache {
  #entry: { result: JsonObject; expiresAt: number } | undefined;
  get(now: number): JsonObject | undefined {
    return this.#entry && this.#entry.expiresAt > now ? this.#entry.result : undefined;
  }
  set(result: JsonObject, now: number): void {
    const ttl = typeof result['ttlMs'] === 'number' && result['ttlMs'] > 0 ? result['ttlMs'] : 0;
    this.#entry = { result, expiresAt: now + ttl };
  }
}

interface ActiveCall {
  readonly controller: AbortController;
  readonly pushes: Set<RequestId>;
}

interface PendingPush {
  readonly resolve: (answer: { result: JsonObject } | { error: WireError }) => void;
}

interface Listen {
  readonly controller: AbortController;
  readonly filterKey: string;
}

const NO_ANSWER = Symbol('no answer');

/** A legacy client session bridged to a modern upstream, with the SDK's `Transport` shape. */
export class LegacyClientBridge implements SdkTransport {
  onmessage?: ((message: TransportMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  sessionId?: string | undefined;
  readonly events = createEmitter<LegacyClientBridgeEvents>();
  readonly upstream: ModernUpstream;
  readonly #options: LegacyClientBridgeOptions;
  readonly #cache: DiscoverCache;
  readonly #now: () => number;
  readonly #ownsUpstream: boolean;
  #session: LegacySessionView | undefined;
  #legacyVersion: LegacyVersion = LEGACY_VERSIONS[LEGACY_VERSIONS.length - 1]!;
  #capabilities: JsonObject = {};
  #modernVersion: ModernVersion = LATEST_MODERN_VERSION;
  #passthrough: Transport | undefined;
  #passthroughOpening: Promise<Transport | undefined> | undefined;
  readonly #calls = new Map<RequestId, ActiveCall>();
  readonly #pushes = new Map<RequestId, PendingPush>();
  readonly #subscribed = new Set<string>();
  readonly #tools = new Map<string, unknown>();
  #listen: Listen | undefined;
  #pushSeq = 0;
  #closed = false;

  constructor(upstream: ModernUpstream, options: LegacyClientBridgeOptions & { ownsUpstream?: boolean } = {}) {
    this.upstream = upstream;
    this.#options = options;
    this.#cache = options.discoverCache ?? new DiscoverCache();
    this.#now = options.now ?? (() => Date.now());
    this.#ownsUpstream = options.ownsUpstream ?? true;
  }

  async start(): Promise<void> {
    await this.upstream.start();
  }

  #emit(message: JsonRpcMessage | JsonRpcMessage[], related?: RequestId): void {
    if (this.#closed) return;
    const extra: MessageExtra | undefined = related === undefined ? undefined : { relatedRequestId: related };
    this.onmessage?.(message as JsonRpcMessage, extra);
  }

  /**
   * A message from the legacy client (a batch is an array). Typed loosely so any SDK's message
   * type is accepted as it is; the message is checked here.
   */
  async send(message: object): Promise<void> {
    if (this.#closed) throw new AdapterError('closed', 'the bridge is closed');
    if (this.#passthrough || this.#passthroughOpening) {
      const pipe = this.#passthrough ?? (await this.#passthroughOpening);
      if (pipe) await pipe.send(message as JsonRpcMessage);
      return;
    }
    const c = classify(message);
    if (!c.ok) {
      this.#emit(errorResponse(c.error.id, c.error));
      return;
    }
    const item = c.value;
    switch (item.kind) {
      case 'batch':
        void this.#batch(item.items);
        return;
      case 'request':
        if (item.message.method === 'initialize') {
          const answer = await this.#initialize(item.message);
          if (answer !== NO_ANSWER) this.#emit(answer);
          return;
        }
        void this.#serve(item.message).then((answer) => answer !== NO_ANSWER && this.#emit(answer));
        return;
      case 'notification':
        this.#notification(item.message);
        return;
      case 'result':
      case 'error': {
        const id = item.message.id;
        const push = id === undefined || id === null ? undefined : this.#pushes.get(id);
        if (push) {
          this.#pushes.delete(id!);
          push.resolve('result' in item.message ? { result: item.message.result } : { error: item.message.error });
        }
        return;
      }
    }
  }

  async #batch(items: readonly unknown[]): Promise<void> {
    const split = splitBatch(items);
    const answers = new Map<RequestId, JsonRpcResponse>();
    await Promise.all(
      split.map(async (entry) => {
        if (!entry.ok) return;
        const m = entry.item;
        if (m.kind === 'notification') this.#notification(m.message);
        else if (m.kind === 'result' || m.kind === 'error') await this.send(m.message);
        else if (m.kind === 'request') {
          const answer = m.message.method === 'initialize' ? await this.#initialize(m.message) : await this.#serve(m.message);
          if (answer !== NO_ANSWER) answers.set(m.message.id, answer);
        }
      }),
    );
    const kept = split.filter((e) => !(e.ok && e.item.kind === 'request' && !answers.has(e.item.message.id)));
    const out = assembleBatch(kept, answers);
    if (out) this.#emit(out as unknown as JsonRpcMessage);
  }

  #notification(n: JsonRpcNotification): void {
    if (n.method === 'notifications/cancelled') {
      const id = isRecord(n.params) ? (n.params['requestId'] as RequestId | undefined) : undefined;
      const call = id === undefined ? undefined : this.#calls.get(id);
      if (call) call.controller.abort(isRecord(n.params) && typeof n.params['reason'] === 'string' ? n.params['reason'] : 'cancelled by the client');
    }
    // notifications/initialized, roots/list_changed and anything else: nothing to send upstream.
  }

  // ── initialize ───────────────────────────────────────────────────────────

  async #discover(params: InitializeParams): Promise<Outcome<JsonObject, WireError> | 'legacy'> {
    const cached = this.#cache.get(this.#now());
    if (cached) {
      this.#modernVersion = (Array.isArray(cached['supportedVersions']) ? pickModernVersion(cached['supportedVersions']) : undefined) ?? this.#modernVersion;
      return ok(cached);
    }
    // A -32022 naming a modern version we speak is answered by asking again in that version, once.
    for (let attempt = 0; ; attempt++) {
      const request: JsonRpcRequest = { jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: { _meta: sessionMeta(sessionFromInitialize(params), undefined, this.#modernVersion) } };
      let answer: JsonRpcResponse;
      try {
        answer = await this.upstream.request(request);
      } catch (e) {
        if (e instanceof UpstreamHttpError && (e.status === 401 || e.status === 403)) return fail(refusalToInitializeError({ status: e.status }));
        if (e instanceof UpstreamHttpError && e.status >= 400 && e.status < 500) return 'legacy';
        return fail(internalError(`the upstream MCP server is unavailable: ${e instanceof Error ? e.message : String(e)}`));
      }
      const verdict = discoverVerdict('result' in answer ? { result: answer.result } : { error: answer.error });
      if (verdict.era === 'legacy') return 'legacy';
      if (verdict.era === 'modern-refused') {
        const data = verdict.error.code === ErrorCode.UnsupportedProtocolVersion && isRecord(verdict.error.data) ? verdict.error.data : undefined;
        const shared = data && Array.isArray(data['supported']) ? pickModernVersion(data['supported']) : undefined;
        if (attempt === 0 && shared) {
          this.#modernVersion = shared;
          continue;
        }
        return fail(refusalToInitializeError({ error: verdict.error }));
      }
      const versions = Array.isArray(verdict.result['supportedVersions']) ? pickModernVersion(verdict.result['supportedVersions']) : undefined;
      if (versions) this.#modernVersion = versions;
      this.#cache.set(verdict.result, this.#now());
      return ok(verdict.result);
    }
  }

  async #initialize(request: JsonRpcRequest): Promise<JsonRpcResponse | typeof NO_ANSWER> {
    const parsed = v.safeParse(InitializeParamsSchema, request.params);
    if (!parsed.success) return errorResponse(request.id, { code: ErrorCode.InvalidParams, message: 'Invalid params: initialize needs protocolVersion, capabilities and clientInfo' });
    const params = request.params as InitializeParams;
    const discovered = await this.#discover(params);
    if (discovered === 'legacy') {
      await this.#relay(request);
      return NO_ANSWER;
    }
    if (!discovered.ok) return errorResponse(request.id, discovered.error);
    const init = discoverToInitializeResult(discovered.value, { requestedVersion: params.protocolVersion, ...(this.#options.legacyVersions ? { supportedLegacyVersions: this.#options.legacyVersions } : {}) });
    if (!init.ok) return errorResponse(request.id, init.error);
    this.#legacyVersion = negotiateLegacyVersion(params.protocolVersion, this.#options.legacyVersions);
    this.#capabilities = isRecord(discovered.value['capabilities']) ? discovered.value['capabilities'] : {};
    this.#session = sessionFromInitialize(params, this.#options.defaultLogLevel);
    void this.#reopenListen();
    return { jsonrpc: '2.0', id: request.id, result: init.value as unknown as JsonObject };
  }

  /** The upstream is legacy: from here on every message travels unchanged. */
  async #relay(initialize: JsonRpcRequest): Promise<void> {
    this.#passthroughOpening = (async () => {
      try {
        const pipe = this.upstream.legacyPipe();
        pipe.onmessage = (m, extra) => this.#emit(m, (extra as MessageExtra | undefined)?.relatedRequestId);
        pipe.onclose = () => void this.close();
        pipe.onerror = (e) => this.onerror?.(e);
        if (this.upstream.kind === 'http') await pipe.start();
        this.#passthrough = pipe;
        this.events.emit('passthrough', { upstream: this.upstream.describe });
        return pipe;
      } catch (e) {
        this.#emit(errorResponse(initialize.id, internalError(`the upstream legacy server is unavailable: ${e instanceof Error ? e.message : String(e)}`)));
        return undefined;
      }
    })();
    const pipe = await this.#passthroughOpening;
    await pipe?.send(initialize);
  }

  // ── requests ─────────────────────────────────────────────────────────────

  async #serve(request: JsonRpcRequest): Promise<JsonRpcResponse | typeof NO_ANSWER> {
    const session = this.#session;
    if (!session) return errorResponse(request.id, invalidRequest('the session is not initialized: send initialize first'));
    switch (request.method) {
      case 'ping':
        return { jsonrpc: '2.0', id: request.id, result: {} };
      case 'logging/setLevel': {
        const level = isRecord(request.params) ? request.params['level'] : undefined;
        if (!v.is(LoggingLevelSchema, level)) return errorResponse(request.id, { code: ErrorCode.InvalidParams, message: `Invalid params: unknown log level ${JSON.stringify(level)}` });
        this.#session = { ...session, logLevel: level };
        return { jsonrpc: '2.0', id: request.id, result: {} };
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const uri = isRecord(request.params) ? request.params['uri'] : undefined;
        if (typeof uri !== 'string') return errorResponse(request.id, { code: ErrorCode.InvalidParams, message: 'Invalid params: uri must be a string' });
        if (request.method === 'resources/subscribe') this.#subscribed.add(uri);
        else this.#subscribed.delete(uri);
        await this.#reopenListen();
        return { jsonrpc: '2.0', id: request.id, result: {} };
      }
    }
    const controller = new AbortController();
    const call: ActiveCall = { controller, pushes: new Set() };
    this.#calls.set(request.id, call);
    const timeoutMs = this.#options.requestTimeoutMs ?? 300_000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort('the call timed out');
    }, timeoutMs);
    const late = () => errorResponse(request.id, internalError(`no answer from the upstream server within ${timeoutMs} ms; the call was cancelled`));
    try {
      const answer = await this.#call(request, session, call);
      if (controller.signal.aborted) return timedOut ? late() : NO_ANSWER;
      return 'result' in answer ? { jsonrpc: '2.0', id: request.id, result: answer.result } : errorResponse(request.id, answer.error);
    } catch (e) {
      if (controller.signal.aborted) return timedOut ? late() : NO_ANSWER;
      return errorResponse(request.id, internalError(e instanceof Error ? e.message : String(e)));
    } finally {
      clearTimeout(timer);
      this.#calls.delete(request.id);
      for (const id of call.pushes) this.#cancelPush(id, 'the call ended');
    }
  }

  async #call(request: JsonRpcRequest, session: LegacySessionView, call: ActiveCall): Promise<{ result: JsonObject } | { error: WireError }> {
    const stamped = requestToModern(request, this.#session ?? session, { modernVersion: this.#modernVersion });
    if (!stamped.ok) return { error: stamped.error };
    const original = stamped.value;
    const maxRounds = this.#options.maxRounds ?? 8;
    const toolName = request.method === 'tools/call' && isRecord(request.params) ? request.params['name'] : undefined;
    let next = original;
    let relearned = false;
    for (let round = 0; ; round++) {
      const toolSchema = typeof toolName === 'string' ? this.#tools.get(toolName) : undefined;
      const answer = await this.upstream.request(next, {
        signal: call.controller.signal,
        onNotification: (n) => this.#related(n, request.id),
        ...(toolSchema === undefined ? {} : { toolSchema }),
      });
      if ('error' in answer) {
        // Header mismatch on a tool we know nothing of yet: learn the tools (their Mcp-Param-*
        // annotations) and send the call again, once.
        if (answer.error.code === ErrorCode.HeaderMismatch && typeof toolName === 'string' && !relearned && this.upstream.kind === 'http') {
          relearned = true;
          if (await this.#relearnTools(call.controller.signal)) {
            round--;
            continue;
          }
        }
        return upstreamErrorToLegacy(request.method, answer.error);
      }
      const result = answer.result;
      if (result['resultType'] !== 'input_required' || !isMrtrMethod(request.method)) {
        if (request.method === 'tools/list') this.#learnTools(result);
        const legacy = resultToLegacy(request.method, result);
        if (!legacy.ok) return { error: legacy.error };
        for (const d of legacy.value.droppedTools) this.events.emit('droppedTool', d);
        return { result: legacy.value.result };
      }
      if (round + 1 >= maxRounds) return inputFailure(request.method, `The server still needed input after ${maxRounds} rounds; the call was abandoned`);
      const read = readInputRequired(result);
      if (!read.ok) return { error: read.error };
      const responses = await this.#ask(read.value.inputRequests, request, call);
      if (!responses.ok) return inputFailure(request.method, responses.error);
      next = retryRequest(original, {
        id: original.id,
        inputResponses: responses.value,
        ...(read.value.requestState === undefined ? {} : { requestState: read.value.requestState }),
      });
    }
  }

  /** Pushes one round's input requests to the client, in parallel; all answers, or why not. */
  async #ask(inputs: InputRequests, request: JsonRpcRequest, call: ActiveCall): Promise<Outcome<Record<string, JsonObject>, string>> {
    const missing = unanswerableInputs(inputs, this.#session?.capabilities ?? {});
    if (missing.length > 0) {
      const methods = missing.map((k) => inputs[k]!.method).join(', ');
      return fail(`The server asked for ${methods}, which this client did not declare at initialize`);
    }
    const entries = Object.entries(inputs);
    const answers = await Promise.all(
      entries.map(async ([key, input]) => {
        const id = `mcp-dual-era-${++this.#pushSeq}`;
        const push = inputRequestToPush(key, input, { id, elicitationId: `${String(request.id)}-${key}-${this.#pushSeq}` });
        if (!push.ok) return { key, failure: push.error.message };
        const answer = await new Promise<{ result: JsonObject } | { error: WireError }>((resolve) => {
          this.#pushes.set(id, { resolve });
          call.pushes.add(id);
          this.#emit(push.value, request.id);
        });
        call.pushes.delete(id);
        if ('error' in answer) return { key, failure: `The client answered ${input.method} with an error: ${answer.error.message}` };
        if (!isInputMethod(input.method)) return { key, failure: `unknown input request ${input.method}` };
        const response = resultToInputResponse(input.method, key, answer.result);
        return response.ok ? { key, response: response.value } : { key, failure: response.error.message };
      }),
    );
    const out: Record<string, JsonObject> = {};
    for (const a of answers) {
      if ('failure' in a) return fail(a.failure ?? 'input failed');
      out[a.key] = a.response;
    }
    return ok(out);
  }

  #cancelPush(id: RequestId, reason: string): void {
    const push = this.#pushes.get(id);
    if (!push) return;
    this.#pushes.delete(id);
    this.#emit({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
    push.resolve({ error: { code: ErrorCode.InternalError, message: reason } });
  }

  /** A progress or log notification of a call, on its way to the client. */
  #related(n: JsonRpcNotification, clientId: RequestId): void {
    if (n.method === 'notifications/progress') {
      const out = progressToLegacy(n, { legacyVersion: this.#legacyVersion });
      if (out.ok) this.#emit(out.value, clientId);
    } else if (n.method === 'notifications/message') {
      const out = logToLegacy(n);
      if (out.ok) this.#emit(out.value, clientId);
    }
  }

  /** Reads every page of `tools/list` to learn the tools' input schemas; false when that fails. */
  async #relearnTools(signal: AbortSignal): Promise<boolean> {
    const session = this.#session;
    if (!session) return false;
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const list = requestToModern({ jsonrpc: '2.0', id: `tools-${page}`, method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) }, session, { modernVersion: this.#modernVersion });
      if (!list.ok) return false;
      const answer = await this.upstream.request(list.value, { signal }).catch(() => undefined);
      if (!answer || !('result' in answer)) return false;
      this.#learnTools(answer.result);
      cursor = typeof answer.result['nextCursor'] === 'string' ? answer.result['nextCursor'] : undefined;
      if (cursor === undefined) return true;
    }
    return true;
  }

  #learnTools(result: JsonObject): void {
    const tools = Array.isArray(result['tools']) ? result['tools'] : [];
    for (const tool of tools) if (isRecord(tool) && typeof tool['name'] === 'string') this.#tools.set(tool['name'], tool['inputSchema']);
  }

  // ── subscriptions ────────────────────────────────────────────────────────

  /** Opens (or re-opens) the upstream listen that stands for the session's subscriptions; resolves once acknowledged. */
  async #reopenListen(): Promise<void> {
    const session = this.#session;
    if (!session || this.#closed) return;
    const filter = legacySubscriptionsToFilter([...this.#subscribed].sort(), this.#capabilities);
    const key = JSON.stringify(filter);
    if (this.#listen?.filterKey === key) return;
    this.#listen?.controller.abort('the subscription set changed');
    this.#listen = undefined;
    if (Object.keys(filter).length === 0) return;
    const controller = new AbortController();
    this.#listen = { controller, filterKey: key };
    let acknowledged!: () => void;
    const ack = new Promise<void>((resolve) => (acknowledged = resolve));
    const request: JsonRpcRequest = { jsonrpc: '2.0', id: 'listen', method: 'subscriptions/listen', params: { notifications: filter as JsonObject, _meta: sessionMeta(session, undefined, this.#modernVersion) } };
    void this.upstream
      .request(request, {
        signal: controller.signal,
        onNotification: (n) => {
          if (n.method === 'notifications/subscriptions/acknowledged') {
            acknowledged();
            return;
          }
          const { notification } = notificationFromListen(n);
          if (notification.method === 'notifications/tools/list_changed') this.#tools.clear();
          this.#emit(notification);
        },
      })
      .then(
        () => acknowledged(),
        (e: unknown) => {
          acknowledged();
          if (!(e instanceof AdapterError && e.code === 'cancelled')) this.events.emit('error', e instanceof Error ? e : new Error(String(e)));
        },
      )
      .finally(() => {
        if (this.#listen?.controller === controller) this.#listen = undefined;
      });
    const timeout = this.#options.subscribeAckTimeoutMs ?? 5000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([ack, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeout)))]);
    clearTimeout(timer);
  }

  // ── shutdown ─────────────────────────────────────────────────────────────

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listen?.controller.abort('the session closed');
    for (const call of this.#calls.values()) call.controller.abort('the session closed');
    for (const push of this.#pushes.values()) push.resolve({ error: { code: ErrorCode.InternalError, message: 'the session closed' } });
    this.#pushes.clear();
    if (this.#passthrough) await this.#passthrough.close().catch(() => {});
    else if (this.#ownsUpstream) await this.upstream.close().catch(() => {});
    this.onclose?.();
  }

  /** The log level the session stamps (set by `logging/setLevel`). */
  get logLevel(): LoggingLevel | undefined {
    return this.#session?.logLevel;
  }
}

