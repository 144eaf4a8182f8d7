/**
 * One legacy client session in front of a modern server (direction A): the `Transport` a legacy
 * client (an SDK v1 `Client`, a host) connects to. `initialize` is answered from the upstream's
 * `server/discover`; every other request is stamped with the session's `_meta` and forwarded;
 * `input_required` rounds become real requests pushed to the client; subscriptions ride an
 * upstream `subscriptions/listen`; legacy tasks ride the server's tasks extension (tasks.ts). When the upstream turns out to be legacy the session is relayed
 * unchanged. Not an HTTP or stdio front: `wrapModernServer` puts those around it.
 */
import { AdapterError, ErrorCode, internalError, invalidRequest } from '../../core/errors.ts';
import type { LegacyVersion } from '../../core/era.ts';
import {
  classify,
  errorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../core/jsonrpc.ts';
import { isRecord, LoggingLevelSchema, type LoggingLevel } from '../../core/primitives.ts';
import { assembleBatch, splitBatch } from '../../core/translate/batch.ts';
import * as v from 'valibot';
import { createEmitter } from '../../util/events.ts';
import type { ModernUpstream } from '../../transport/modernUpstream.ts';
import type { MessageExtra, SdkTransport, Transport, TransportMessage } from '../../transport/transport.ts';
import { newBridgeSession } from './bridgeSession.ts';
import { DiscoverCache, handshake } from './handshake.ts';
import { InputRounds } from './inputRounds.ts';
import { LearnedTools } from './learnedTools.ts';
import { Subscriptions } from './subscriptions.ts';
import { BridgeTasks, withTaskSupport } from './tasks.ts';

export { DiscoverCache } from './handshake.ts';

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
  /** The upstream could not be reached when the client initialized (the client was answered with an error). */
  unreachable: { reason: string };
};

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
  readonly #session = newBridgeSession();
  readonly #tools = new LearnedTools();
  readonly #rounds: InputRounds;
  readonly #subscriptions: Subscriptions;
  readonly #tasks: BridgeTasks;
  #passthrough: Transport | undefined;
  #passthroughOpening: Promise<Transport | undefined> | undefined;
  #closed = false;

  constructor(upstream: ModernUpstream, options: LegacyClientBridgeOptions & { ownsUpstream?: boolean } = {}) {
    this.upstream = upstream;
    this.#options = options;
    this.#cache = options.discoverCache ?? new DiscoverCache();
    this.#now = options.now ?? (() => Date.now());
    this.#ownsUpstream = options.ownsUpstream ?? true;
    this.#rounds = new InputRounds({
      upstream,
      session: this.#session,
      tools: this.#tools,
      emit: (message, related) => this.#emit(message, related),
      droppedTool: (d) => this.events.emit('droppedTool', d),
      maxRounds: options.maxRounds,
      requestTimeoutMs: options.requestTimeoutMs,
    });
    this.#tasks = new BridgeTasks({ upstream, session: this.#session, rounds: this.#rounds, notify: (n) => this.#emit(n) });
    this.#subscriptions = new Subscriptions(
      upstream,
      this.#session,
      {
        notify: (n) => this.#emit(n),
        toolsChanged: () => this.#tools.forget(),
        error: (e) => this.events.emit('error', e),
      },
      options.subscribeAckTimeoutMs ?? 5000,
    );
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
        if (id !== undefined && id !== null)
          this.#rounds.answered(id, 'result' in item.message ? { result: item.message.result } : { error: item.message.error });
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
      if (id !== undefined)
        this.#rounds.cancel(
          id,
          isRecord(n.params) && typeof n.params['reason'] === 'string' ? n.params['reason'] : 'cancelled by the client',
        );
    }
    // notifications/initialized, roots/list_changed and anything else: nothing to send upstream.
  }

  // ── initialize ───────────────────────────────────────────────────────────

  async #initialize(request: JsonRpcRequest): Promise<JsonRpcResponse | typeof NO_ANSWER> {
    const answer = await handshake(request, {
      upstream: this.upstream,
      cache: this.#cache,
      now: this.#now,
      session: this.#session,
      defaultLogLevel: this.#options.defaultLogLevel,
      legacyVersions: this.#options.legacyVersions,
      unreachable: (reason) => this.events.emit('unreachable', { reason }),
    });
    if (answer === 'legacy') {
      await this.#relay(request);
      return NO_ANSWER;
    }
    if ('result' in answer) void this.#subscriptions.reopen();
    return answer;
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
        const reason = e instanceof Error ? e.message : String(e);
        this.events.emit('unreachable', { reason });
        this.#emit(errorResponse(initialize.id, internalError(`the upstream legacy server is unavailable: ${reason}`)));
        return undefined;
      }
    })();
    const pipe = await this.#passthroughOpening;
    await pipe?.send(initialize);
  }

  // ── requests ─────────────────────────────────────────────────────────────

  async #serve(request: JsonRpcRequest): Promise<JsonRpcResponse | typeof NO_ANSWER> {
    const session = this.#session.view;
    if (!session) return errorResponse(request.id, invalidRequest('the session is not initialized: send initialize first'));
    switch (request.method) {
      case 'ping':
        return { jsonrpc: '2.0', id: request.id, result: {} };
      case 'logging/setLevel': {
        const level = isRecord(request.params) ? request.params['level'] : undefined;
        if (!v.is(LoggingLevelSchema, level))
          return errorResponse(request.id, {
            code: ErrorCode.InvalidParams,
            message: `Invalid params: unknown log level ${JSON.stringify(level)}`,
          });
        this.#session.view = { ...session, logLevel: level };
        return { jsonrpc: '2.0', id: request.id, result: {} };
      }
      case 'resources/subscribe':
      case 'resources/unsubscribe': {
        const uri = isRecord(request.params) ? request.params['uri'] : undefined;
        if (typeof uri !== 'string')
          return errorResponse(request.id, { code: ErrorCode.InvalidParams, message: 'Invalid params: uri must be a string' });
        await this.#subscriptions.change(uri, request.method === 'resources/subscribe');
        return { jsonrpc: '2.0', id: request.id, result: {} };
      }
    }
    if (this.#tasks.offered) {
      if (BridgeTasks.serves(request.method)) return (await this.#tasks.serve(request)) ?? NO_ANSWER;
      if (this.#tasks.isTaskCall(request)) return (await this.#tasks.call(request)) ?? NO_ANSWER;
    }
    const answer = await this.#rounds.serve(request, session);
    if (answer && 'result' in answer && request.method === 'tools/list' && this.#tasks.offered)
      return { ...answer, result: withTaskSupport(answer.result) };
    return answer ?? NO_ANSWER;
  }

  // ── shutdown ─────────────────────────────────────────────────────────────

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscriptions.close();
    this.#rounds.close();
    if (this.#passthrough) await this.#passthrough.close().catch(() => {});
    else if (this.#ownsUpstream) await this.upstream.close().catch(() => {});
    this.onclose?.();
  }

  /** The log level the session stamps (set by `logging/setLevel`). */
  get logLevel(): LoggingLevel | undefined {
    return this.#session.view?.logLevel;
  }
}
