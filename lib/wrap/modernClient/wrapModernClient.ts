/**
 * `wrapModernClient`: a transport for code that speaks the modern wire (2026-07-28) that reaches
 * any server. It probes the server first; a modern one gets the client's messages untouched (the
 * probed stdio process is kept, nothing is spawned twice), a legacy one is served through an
 * in-process `wrapLegacyServer` whose upstream is that same server, so `initialize`, sessions,
 * pushes turned into MRTR rounds, logs, progress, subscriptions and cancellation are translated.
 * With an OAuth provider, every HTTP request to the server (the probe's too) is authorized.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { authorizedFetch, SIGN_IN_TIMEOUT_MS } from '../../auth/authorizedFetch.ts';
import type { Emitter } from '../../util/events.ts';
import { AdapterError, ErrorCode, internalError } from '../../core/errors.ts';
import { classify, errorResponse, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../../core/jsonrpc.ts';
import { MetaKey } from '../../core/era.ts';
import { isRecord, LOGGING_LEVELS, type LoggingLevel } from '../../core/primitives.ts';
import { httpBackend, stdioBackend, type Backend } from '../../session/backend.ts';
import type { LegacyHttpClientOptions } from '../../transport/legacyHttpClient.ts';
import { ModernHttpClientTransport } from '../../transport/modernHttpClient.ts';
import { StdioChildTransport, type StdioChildOptions } from '../../transport/stdioChild.ts';
import type { SdkTransport, Transport, TransportMessage } from '../../transport/transport.ts';
import { createProbeEvents, describeTarget, probe, targetKey } from '../../probe/probe.ts';
import {
  isHttpTarget,
  type HttpTarget,
  type ProbeEvents,
  type ProbeOptions,
  type ProbeTarget,
  type VerdictSource,
} from '../../probe/probeTypes.ts';
import { processVerdictCache, type Verdict } from '../../probe/verdictCache.ts';
import type { ModernContext } from '../../fronts/served.ts';
import { adoptingBackend, type PipeHooks } from './sessionPipe.ts';
import { wrapLegacyServer, type LegacyServerWrap, type WrapLegacyServerOptions } from '../legacyServer/wrapLegacyServer.ts';
import { KeyedTable } from '../../util/idTable.ts';

/** Options of {@link wrapModernClient}: how to probe, and how to serve a legacy server. */
export interface WrapModernClientOptions extends Omit<ProbeOptions, 'keepProcess' | 'force' | 'events'> {
  /** For a legacy server: the options of the in-process `wrapLegacyServer` (roots answered outside any call, MRTR, session bounds, caching hints, deadline). */
  readonly legacy?: Pick<WrapLegacyServerOptions, 'roots' | 'mrtr' | 'sessions' | 'requestTimeoutMs' | 'cache' | 'serverInfo'>;
  /** For a legacy HTTP server: how its sessions and streams behave. */
  readonly legacyHttp?: Pick<LegacyHttpClientOptions, 'requestTimeoutMs' | 'reconnect'>;
  /**
   * An OAuth client provider (SDK v1 `OAuthClientProvider`, e.g. `SignInProvider`) for an HTTP
   * server that wants OAuth: the target's fetch becomes `authorizedFetch(authProvider, url, { fetch })`,
   * so the probe and every later request carry the token, refresh it, and on a 401 sign in (waiting
   * for it when the provider can, else failing with the SDK's `UnauthorizedError`) and go again.
   * A sign-in may happen during the probe: unless `timeoutMs` is given, the probe then waits as
   * long as a sign-in may (5 minutes). HTTP targets only; given with a command it throws.
   */
  readonly authProvider?: OAuthClientProvider;
}

/** The transport {@link wrapModernClient} returns: hand it to an SDK `Client`'s `connect()`, v1 or v2. */
export interface ModernClientTransport extends SdkTransport {
  /** Probe, fallback, verdict and re-probe events. */
  readonly events: Emitter<ProbeEvents>;
  /** The era in use, once started. */
  readonly verdict: Verdict | undefined;
  /** Where the verdict in use came from. */
  readonly source: VerdictSource | undefined;
}

const PRINCIPAL = 'wrapModernClient';

/** One way of reaching the server, chosen by the verdict. */
interface Path {
  send(message: JsonRpcMessage): Promise<void>;
  close(): Promise<void>;
  /** Why the verdict behind this path proved wrong, judged from the first answer, if it did. */
  wrong(request: JsonRpcRequest, answer: JsonRpcMessage): string | undefined;
}

/** An MRTR retry: its parked call lived on the upstream session, so it cannot simply be sent again. */
function isRetry(request: JsonRpcRequest): boolean {
  return isRecord(request.params) && (request.params['requestState'] !== undefined || request.params['inputResponses'] !== undefined);
}

function isCancel(message: JsonRpcMessage): RequestId | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return undefined;
  const id = isRecord(message.params) ? message.params['requestId'] : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

class WrappedModernClient implements ModernClientTransport {
  onmessage?: ((message: TransportMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  readonly events = createProbeEvents();
  readonly #target: ProbeTarget;
  readonly #options: WrapModernClientOptions;
  #verdict: Verdict | undefined;
  #source: VerdictSource | undefined;
  #path: Path | undefined;
  #started: Promise<void> | undefined;
  /**
   * Under a verdict from the cache or a prior, the requests sent until the first answer judges it:
   * if it proves wrong, the ones still unanswered are sent again the right way.
   */
  #judging: Map<RequestId, JsonRpcRequest> | undefined;
  /** While the target is probed again, sends wait for it. */
  #reprobing: Promise<void> | undefined;
  #closed = false;

  constructor(target: ProbeTarget, options: WrapModernClientOptions) {
    this.#target = target;
    this.#options = options;
  }

  get verdict(): Verdict | undefined {
    return this.#verdict;
  }

  get source(): VerdictSource | undefined {
    return this.#source;
  }

  start(): Promise<void> {
    this.#started ??= this.#connect(false);
    return this.#started;
  }

  async #connect(force: boolean): Promise<void> {
    const { legacy: _legacy, legacyHttp: _legacyHttp, authProvider: _authProvider, ...probeOptions } = this.#options;
    const result = await probe(this.#target, {
      ...probeOptions,
      events: this.events,
      keepProcess: true,
      ...(force ? { force: true } : {}),
    });
    if (this.#closed) {
      await result.process?.close();
      return;
    }
    this.#verdict = result.verdict;
    this.#source = result.source;
    this.#judging = result.source === 'cache' || result.source === 'prior' ? new Map() : undefined;
    const path =
      result.verdict.era === 'modern' ? await this.#modernPath(result.process) : this.#legacyPath(result.verdict, result.process);
    if (this.#closed) return void (await path.close().catch(() => {}));
    this.#path = path;
  }

  /** A message from `path` on its way to the client; the first answer under a known verdict judges it. */
  #deliver(path: Path, message: JsonRpcMessage): void {
    if (this.#closed || path !== this.#path) return;
    const judging = this.#judging;
    if (
      judging &&
      !('method' in message) &&
      'id' in message &&
      message.id !== null &&
      message.id !== undefined &&
      judging.has(message.id)
    ) {
      const reason = path.wrong(judging.get(message.id)!, message);
      if (reason) return this.#reprobe(path, reason);
      this.#judging = undefined;
    }
    this.onmessage?.(message);
  }

  /** The verdict in use proved wrong: probe again, and send what is unanswered the new way. */
  #reprobe(path: Path, reason: string): void {
    const unanswered = [...(this.#judging?.values() ?? [])];
    this.#judging = undefined;
    this.#path = undefined;
    this.events.emit('reprobe', { target: describeTarget(this.#target), was: this.#verdict!, reason });
    const cache = this.#options.cache === false ? undefined : (this.#options.cache ?? processVerdictCache);
    cache?.delete(targetKey(this.#target));
    this.#reprobing = (async () => {
      await path.close().catch(() => {});
      try {
        await this.#connect(true);
      } catch (e) {
        this.onerror?.(e instanceof Error ? e : new Error(String(e)));
        return void (await this.close());
      }
      for (const request of unanswered) await this.#path?.send(request).catch(() => {});
    })().finally(() => (this.#reprobing = undefined));
  }

  async #modernPath(probed: StdioChildTransport | undefined): Promise<Path> {
    const target = this.#target;
    let inner: Transport;
    if (isHttpTarget(target))
      inner = new ModernHttpClientTransport({
        url: target.url,
        ...(target.headers ? { headers: target.headers } : {}),
        ...(target.fetch ? { fetch: target.fetch } : {}),
      });
    else if (probed) inner = probed;
    else {
      inner = new StdioChildTransport(target);
      await inner.start();
    }
    inner.onmessage = (message) => this.#deliver(path, message);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      if (this.#path !== path) return;
      if (this.#judging) this.#reprobe(path, 'the server went away before it answered');
      else void this.close();
    };
    const path: Path = {
      send: (message) => inner.send(message),
      close: () => inner.close(),
      wrong: (request, answer) => {
        if (!('error' in answer) || !answer.error) return undefined;
        const code = answer.error.code;
        if (code === ErrorCode.ConnectionClosed) return `${request.method} answered ${code} ${answer.error.message}`;
        if (code === ErrorCode.MethodNotFound && request.method === 'server/discover')
          return 'server/discover is not a method the server knows';
        return undefined;
      },
    };
    return path;
  }

  #legacyPath(verdict: Verdict, probed: StdioChildTransport | undefined): Path {
    const target = this.#target;
    let refused: string | undefined;
    const onRefused = (reason: string) => void (refused ??= reason);
    // The most verbose level any request has asked for: the level upstream sessions are raised to.
    let level: LoggingLevel | undefined;
    // Not a `Map`: see `KeyedTable`.
    const inflight = new KeyedTable<RequestId, AbortController>();
    // A request that was the only one in flight when its session expired never ran: it may be sent again once.
    const expiredUnder = new Set<RequestId>();
    const hooks: PipeHooks = {
      onRefused,
      wanted: () => level,
      onExpired: () => {
        if (inflight.size === 1) for (const id of inflight.keys()) expiredUnder.add(id);
      },
    };
    let backend: Backend;
    if (isHttpTarget(target)) {
      const http = httpBackend({
        url: target.url,
        mode: verdict.era === 'legacy' && verdict.http ? verdict.http : 'auto',
        ...(target.headers ? { headers: target.headers } : {}),
        ...(target.fetch ? { fetch: target.fetch } : {}),
        ...this.#options.legacyHttp,
      });
      backend = adoptingBackend(http, undefined, () => false, hooks);
    } else {
      let alive = probed !== undefined;
      if (probed) probed.onexit = () => void (alive = false);
      backend = adoptingBackend(stdioBackend(target), probed, () => alive, hooks);
    }
    const wrap: LegacyServerWrap = wrapLegacyServer({ upstream: backend, ...this.#options.legacy });
    const serve = async (request: JsonRpcRequest, ctx: ModernContext): Promise<JsonRpcMessage | undefined> => {
      const answer = (await wrap.serveModern(request, ctx))?.message;
      const again =
        expiredUnder.delete(request.id) && answer !== undefined && 'error' in answer && !isRetry(request) && !ctx.signal.aborted;
      return again ? (await wrap.serveModern(request, ctx))?.message : answer;
    };
    const path: Path = {
      send: async (message) => {
        const cancelled = isCancel(message);
        if (cancelled !== undefined) {
          inflight.get(cancelled)?.abort();
          return;
        }
        const c = classify(message);
        if (!c.ok || c.value.kind !== 'request') return;
        const request = c.value.message;
        const asked = isRecord(request.params) && isRecord(request.params['_meta']) ? request.params['_meta'][MetaKey.logLevel] : undefined;
        if (
          LOGGING_LEVELS.includes(asked as LoggingLevel) &&
          (level === undefined || LOGGING_LEVELS.indexOf(asked as LoggingLevel) < LOGGING_LEVELS.indexOf(level))
        )
          level = asked as LoggingLevel;
        const abort = new AbortController();
        inflight.set(request.id, abort);
        const ctx: ModernContext = { principal: PRINCIPAL, signal: abort.signal, notify: (n) => this.#deliver(path, n) };
        void serve(request, ctx)
          .then(
            (answer) => answer,
            (e: unknown) => errorResponse(request.id, internalError(e instanceof Error ? e.message : String(e))),
          )
          .then((answer) => {
            expiredUnder.delete(request.id);
            if (inflight.get(request.id) === abort) inflight.delete(request.id);
            // A request the client cancelled gets nothing more.
            if (answer && !abort.signal.aborted) this.#deliver(path, answer);
          });
      },
      close: async () => {
        for (const abort of inflight.values()) abort.abort();
        await wrap.close();
      },
      wrong: (_request, answer) => ('error' in answer && answer.error ? refused : undefined),
    };
    return path;
  }

  async send(message: JsonRpcMessage): Promise<void> {
    await this.start();
    while (this.#reprobing) await this.#reprobing;
    const path = this.#path;
    if (!path || this.#closed) throw new AdapterError('closed', 'the transport is closed');
    if (this.#judging && 'method' in message && 'id' in message) this.#judging.set(message.id, message as JsonRpcRequest);
    return path.send(message);
  }

  /** The SDK tells the version it negotiated; every request already carries it in `_meta`. */
  setProtocolVersion(): void {}

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const path = this.#path;
    this.#path = undefined;
    await path?.close().catch(() => {});
    this.onclose?.();
  }
}

/**
 * A transport for a modern (2026-07-28) client that reaches modern, dual-era and legacy servers
 * alike, over stdio (`{ command, args }`) or HTTP (`{ url }`): the client never sees which era
 * answered. Give it to an SDK `Client`'s `connect()`.
 */
export function wrapModernClient(target: StdioChildOptions | HttpTarget, options: WrapModernClientOptions = {}): ModernClientTransport {
  const provider = options.authProvider;
  if (!provider) return new WrappedModernClient(target, options);
  if (!isHttpTarget(target)) throw new AdapterError('config', 'authProvider needs an HTTP server ({ url }), not a command');
  const authorized: HttpTarget = { ...target, fetch: authorizedFetch(provider, target.url, target.fetch ? { fetch: target.fetch } : {}) };
  return new WrappedModernClient(authorized, { ...options, timeoutMs: options.timeoutMs ?? SIGN_IN_TIMEOUT_MS });
}
