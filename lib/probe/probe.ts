/**
 * `probe`: which era a server speaks. On stdio it sends `server/discover` first on the process it
 * spawned (and can hand that process over, so nothing is spawned twice); over HTTP it POSTs a
 * modern `server/discover`, then a legacy `initialize` (Streamable HTTP, then HTTP+SSE). Verdicts
 * are cached per command line or endpoint, can be given as a prior or pinned, and every step is
 * reported as an event. It decides; it does not translate.
 */
import { LATEST_LEGACY_VERSION, MetaKey, MODERN_VERSIONS, type ModernVersion } from '../core/era.ts';
import { AdapterError } from '../core/errors.ts';
import { classify, parseMessage, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { isRecord, type Implementation } from '../core/primitives.ts';
import { ADAPTER_INFO } from '../core/translate/context.ts';
import { HEADER } from '../core/translate/headers.ts';
import { createEmitter, type Emitter } from '../util/events.ts';
import { LegacyHttpClientTransport, type LegacyHttpMode } from '../transport/legacyHttpClient.ts';
import { mediaType, readSseMessages } from '../transport/sse.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, readBounded } from '../transport/messageBound.ts';
import { StdioChildTransport, type StdioChildOptions } from '../transport/stdioChild.ts';
import { eraOfDiscoverAnswer, type DiscoverAnswer, type EraVerdict } from '../core/verdict.ts';
import { processVerdictCache, type Verdict, type VerdictCache } from './verdictCache.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { startupTimer, waitingReason } from './startupTimer.ts';

export type { Verdict } from './verdictCache.ts';

/** A server to probe: a command to run over stdio, or an HTTP endpoint. */
export type ProbeTarget = StdioChildOptions | HttpTarget;

/** An MCP endpoint over HTTP. */
export interface HttpTarget {
  readonly url: string | URL;
  /** Extra headers on every request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly fetch?: typeof globalThis.fetch;
}

/** `modern` or `legacy` skips the probe for good; `auto` (default) probes. */
export type EraPin = 'modern' | 'legacy' | 'auto';

/** Where a verdict came from. */
export type VerdictSource = 'probe' | 'cache' | 'prior' | 'pin';

/** The steps of a probe, as events: `probe`, `fallback`, `verdict`, `reprobe`. */
export type ProbeEvents = {
  /** A probe request is about to be sent (`server/discover`, or the legacy `initialize` over HTTP). */
  probe: { target: string; method: string; attempt: number; version: string };
  /** The probe moved on to an older transport or era. */
  fallback: { target: string; from: 'modern' | 'streamable'; to: 'legacy' | 'sse'; reason: string };
  /** The verdict, with how many round trips it cost (`ProbeResult.roundTrips`: 0 when it was known already). */
  verdict: { target: string; verdict: Verdict; source: VerdictSource; roundTrips: number };
  /** A verdict known beforehand proved wrong; the target is probed again. */
  reprobe: { target: string; was: Verdict; reason: string };
  /** The probe is waiting, and for what (a server that has not said a word yet). */
  waiting: { target: string; waitedMs: number; reason: string };
};

/** Options of {@link probe}. */
export interface ProbeOptions {
  /** Skip the probe: `'modern'` or `'legacy'` for good. Default `'auto'`. */
  readonly pin?: EraPin;
  /** A verdict known beforehand (say, from an earlier run): used without probing, and re-probed if it proves wrong. */
  readonly prior?: Verdict;
  /** Where verdicts are kept (default one cache per process); `false` keeps none. */
  readonly cache?: VerdictCache | false;
  /** How long a verdict stays in the cache (default 10 minutes). */
  readonly ttlMs?: number;
  /**
   * How long to wait for an answer to the probe (default 3 s). On stdio, silence from a server that
   * has spoken means legacy; over HTTP it is an error.
   */
  readonly timeoutMs?: number;
  /**
   * stdio: how long a server that has not said a word yet is waited for (default 60 s): it is
   * still starting, which is no era; past this the probe fails (the server did not start).
   */
  readonly startTimeoutMs?: number;
  /** Who is asking, in the probe's `_meta` (default the adapter). */
  readonly clientInfo?: Implementation;
  /** The modern versions to offer, newest preferred (default every modern version this library speaks). */
  readonly versions?: readonly ModernVersion[];
  /** Ignore the cache and probe (the verdict found is cached). */
  readonly force?: boolean;
  readonly events?: Emitter<ProbeEvents>;
  readonly signal?: AbortSignal;
  /** stdio: keep the probed process running and return it (its owner must close it). */
  readonly keepProcess?: boolean;
}

/** The outcome of {@link probe}. */
export interface ProbeResult {
  readonly verdict: Verdict;
  readonly source: VerdictSource;
  /**
   * How many `server/discover` requests the probe sent to learn the era: 1, or 2 after a `-32022`
   * naming a version to ask in; 0 when the verdict was known already (cache, prior, pin). The same
   * on every transport: the `initialize` that follows a legacy verdict is not counted (over stdio it
   * is the caller's, on the probed process; over HTTP the one that tells Streamable HTTP from
   * HTTP+SSE is a `probe` event of its own).
   */
  readonly roundTrips: number;
  /** stdio with `keepProcess`: the running process the probe spoke to, when it is still alive. */
  readonly process?: StdioChildTransport;
}

const DEFAULT_TTL_MS = DEFAULTS.verdictTtlMs;
const DEFAULT_TIMEOUT_MS = DEFAULTS.probeTimeoutMs;
let probeIds = 0;

export function isHttpTarget(target: ProbeTarget): target is HttpTarget {
  return 'url' in target;
}

/** The cache key and human-readable name of a target: the command line, or the endpoint without query. */
export function targetKey(target: ProbeTarget): string {
  if (isHttpTarget(target)) {
    const url = new URL(target.url);
    return `http ${url.origin}${url.pathname}`;
  }
  return `stdio ${JSON.stringify([target.command, ...(target.args ?? []), target.cwd ?? ''])}`;
}

export function describeTarget(target: ProbeTarget): string {
  return isHttpTarget(target) ? new URL(target.url).href : [target.command, ...(target.args ?? [])].join(' ');
}

function discoverRequest(id: RequestId, version: string, options: ProbeOptions): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'server/discover',
    params: {
      _meta: {
        [MetaKey.protocolVersion]: version,
        [MetaKey.clientInfo]: options.clientInfo ?? ADAPTER_INFO,
        [MetaKey.clientCapabilities]: {},
      },
    },
  };
}

/** The legacy `initialize` a probe sends (the newest legacy version, no capabilities). */
function legacyInitializeRequest(id: RequestId, options: ProbeOptions): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: LATEST_LEGACY_VERSION, capabilities: {}, clientInfo: options.clientInfo ?? ADAPTER_INFO },
  };
}

/**
 * Finds out which era a server speaks. stdio: `server/discover` on a spawned process (a
 * DiscoverResult sharing a version → modern; `-32022` naming a shared version → one retry; any other
 * error, an answer to `initialize`, the process exiting, or silence for `timeoutMs` after it has
 * spoken → legacy; a process that has said nothing yet is waited for, up to `startTimeoutMs`, and
 * also sent `initialize`, so a server that ignores `server/discover` is known by its answer). HTTP: see the module header;
 * 401/403, 5xx, redirects and network or TLS errors throw instead of falling back.
 */
export async function probe(target: ProbeTarget, options: ProbeOptions = {}): Promise<ProbeResult> {
  const name = describeTarget(target);
  const key = targetKey(target);
  const events = options.events;
  const cache = options.cache === false ? undefined : (options.cache ?? processVerdictCache);
  const known = (verdict: Verdict, source: VerdictSource): ProbeResult => {
    events?.emit('verdict', { target: name, verdict, source, roundTrips: 0 });
    return { verdict, source, roundTrips: 0 };
  };
  const versions = options.versions ?? MODERN_VERSIONS;
  if (options.pin === 'modern') return known({ era: 'modern', version: versions[0]! }, 'pin');
  if (options.pin === 'legacy') return known({ era: 'legacy' }, 'pin');
  if (!options.force) {
    const cached = cache?.get(key);
    if (cached) return known(cached, 'cache');
    if (options.prior) return known(options.prior, 'prior');
  }
  const found = isHttpTarget(target) ? await probeHttp(target, name, options, versions) : await probeStdio(target, name, options, versions);
  cache?.set(key, found.verdict, options.ttlMs ?? DEFAULT_TTL_MS);
  events?.emit('verdict', { target: name, verdict: found.verdict, source: 'probe', roundTrips: found.roundTrips });
  return found;
}

// ── stdio ───────────────────────────────────────────────────────────────────

type Heard =
  | { kind: 'answer'; message: JsonRpcMessage; to: 'discover' | 'initialize' }
  | { kind: 'exit' }
  | { kind: 'timeout' }
  | { kind: 'silent' }
  | { kind: 'aborted' };

/** What the stdio probe heard, as the era verdict reads it. */
function heardAnswer(heard: Exclude<Heard, { kind: 'aborted' }>, timeoutMs: number, startMs: number): DiscoverAnswer {
  switch (heard.kind) {
    case 'silent':
      return { kind: 'silence', spoken: false, ms: startMs };
    case 'timeout':
      return { kind: 'silence', spoken: true, ms: timeoutMs };
    case 'exit':
      return { kind: 'exit' };
    case 'answer': {
      if (heard.to === 'initialize') return { kind: 'other', what: 'the server answered initialize, and not server/discover' };
      const c = classify(heard.message);
      if (c.ok && c.value.kind === 'result') return { kind: 'result', result: c.value.message.result };
      if (c.ok && c.value.kind === 'error') return { kind: 'error', error: c.value.message.error };
      return { kind: 'other', what: 'the answer to server/discover is not JSON-RPC' };
    }
  }
}

async function probeStdio(
  target: StdioChildOptions,
  name: string,
  options: ProbeOptions,
  versions: readonly ModernVersion[],
): Promise<ProbeResult> {
  const child = new StdioChildTransport(target);
  let exited = false;
  let waiting: { ids: Map<RequestId, 'discover' | 'initialize'>; settle: (heard: Heard) => void } | undefined;
  child.onexit = () => {
    exited = true;
    waiting?.settle({ kind: 'exit' });
  };
  child.onmessage = (message) => {
    const to = waiting && 'id' in message && !('method' in message) ? waiting.ids.get(message.id as RequestId) : undefined;
    // `initialize` refused says nothing of the era (a modern server refuses it): server/discover's answer will.
    if (to === 'initialize' && 'error' in message) return;
    if (to) waiting!.settle({ kind: 'answer', message, to });
  };
  child.onerror = () => {};
  await child.start();
  const started = Date.now();
  // A process started ahead may have exited before the probe came to it.
  if (!child.running) exited = true;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const startMs = Math.max(timeoutMs, options.startTimeoutMs ?? DEFAULTS.probeStartMs);
  /** Whether the probe sent `initialize` too (to a server silent past the bound): its process is then not handed on. */
  let initializeSent = false;
  /**
   * Asks `request` and waits for its answer. A server silent past `timeoutMs` that has not said a
   * word yet is still starting, not a verdict: it is also sent `initialize` (whichever it answers
   * tells its era; a legacy server that ignores `server/discover` answers that) and waited for,
   * saying so, until it speaks or `startMs` have passed since it was started.
   */
  const ask = (request: JsonRpcRequest): Promise<Heard> =>
    new Promise<Heard>((resolve) => {
      if (exited) return resolve({ kind: 'exit' });
      const cancel = startupTimer(
        child,
        { timeoutMs, startMs, startedAt: started },
        {
          waiting: (waited) => {
            if (!initializeSent) {
              initializeSent = true;
              const id = `mcp-dual-era-probe-${++probeIds}`;
              waiting?.ids.set(id, 'initialize');
              options.events?.emit('probe', { target: name, method: 'initialize', attempt: 1, version: LATEST_LEGACY_VERSION });
              child.send(legacyInitializeRequest(id, options)).catch(() => settle({ kind: 'exit' }));
            }
            options.events?.emit('waiting', {
              target: name,
              waitedMs: waited,
              reason: waitingReason(waited, startMs, ', its first answer tells its era'),
            });
          },
          expired: (silent) => settle({ kind: silent ? 'silent' : 'timeout' }),
        },
      );
      const onAbort = () => settle({ kind: 'aborted' });
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const settle = (heard: Heard) => {
        cancel();
        options.signal?.removeEventListener('abort', onAbort);
        waiting = undefined;
        resolve(heard);
      };
      waiting = { ids: new Map([[request.id, 'discover']]), settle };
      child.send(request).catch(() => settle({ kind: 'exit' }));
    });

  let version = versions[0]!;
  let retried = false;
  let roundTrips = 0;
  let reading: EraVerdict;
  try {
    for (;;) {
      const id = `mcp-dual-era-probe-${++probeIds}`;
      options.events?.emit('probe', { target: name, method: 'server/discover', attempt: roundTrips + 1, version });
      const heard = await ask(discoverRequest(id, version, options));
      roundTrips++;
      if (heard.kind === 'aborted') throw new AdapterError('cancelled', 'the probe was cancelled');
      reading = eraOfDiscoverAnswer(heardAnswer(heard, timeoutMs, startMs), { sent: version, ours: versions, retried });
      if (reading.era === 'unknown') throw new AdapterError('upstream-error', reading.reason);
      if (reading.era !== 'retry') break;
      retried = true;
      version = reading.version;
    }
  } catch (e) {
    await child.close().catch(() => {});
    throw e;
  }
  // Whatever the process says about the probe from now on (a late answer) is dropped.
  child.onmessage = undefined;
  waiting = undefined;
  const verdict: Verdict =
    reading.era === 'modern'
      ? { era: 'modern', version: reading.version, ...(reading.discover ? { discover: reading.discover } : {}) }
      : { era: 'legacy' };
  if (reading.era === 'legacy' || reading.era === 'unshared')
    options.events?.emit('fallback', { target: name, from: 'modern', to: 'legacy', reason: reading.reason });
  // A legacy server the probe sent `initialize` is not handed on: its session would begin twice.
  if (!options.keepProcess || exited || (initializeSent && verdict.era === 'legacy')) {
    await child.close().catch(() => {});
    return { verdict, source: 'probe', roundTrips };
  }
  return { verdict, source: 'probe', roundTrips, process: child };
}

// ── HTTP ────────────────────────────────────────────────────────────────────

function refuse(detail: string, cause?: unknown): AdapterError {
  return new AdapterError('upstream-error', detail, cause === undefined ? {} : { cause });
}

/** The first JSON-RPC response in a body (JSON or SSE), and whether the body was readable JSON-RPC at all. */
async function readAnswer(res: Response, id: RequestId): Promise<JsonRpcMessage | undefined> {
  if (mediaType(res) === 'text/event-stream' && res.body) {
    let found: JsonRpcMessage | undefined;
    const reading = new AbortController();
    await Promise.race([
      readSseMessages(
        res.body,
        (m) => {
          if (!found && isRecord(m) && ('result' in m || 'error' in m) && (m['id'] === id || m['id'] === null)) {
            found = m as JsonRpcMessage;
            reading.abort();
          }
        },
        { maxEventBytes: DEFAULT_MAX_MESSAGE_BYTES },
      ).catch(() => {}),
      new Promise((r) => reading.signal.addEventListener('abort', r, { once: true })),
    ]);
    await res.body.cancel().catch(() => {});
    return found;
  }
  // An answer past the bound is no answer the probe can use (the probe then says what it got).
  const body = await readBounded(res, DEFAULT_MAX_MESSAGE_BYTES).catch(() => undefined);
  const text = body?.ok ? body.value : '';
  if (text.trim() === '') return undefined;
  const parsed = parseMessage(text);
  if (!parsed.ok || (parsed.value.kind !== 'result' && parsed.value.kind !== 'error')) return undefined;
  return parsed.value.message;
}

async function probeHttp(
  target: HttpTarget,
  name: string,
  options: ProbeOptions,
  versions: readonly ModernVersion[],
): Promise<ProbeResult> {
  const url = new URL(target.url);
  const fetcher = target.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const newSignal = () =>
    options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  const silent = (e: unknown): AdapterError => {
    if (options.signal?.aborted) return new AdapterError('cancelled', 'the probe was cancelled');
    const detail =
      e instanceof Error && e.name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : `${e instanceof Error ? e.message : String(e)}${e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : ''}`;
    return refuse(`could not probe ${url.href}: ${detail}`, e);
  };
  let version = versions[0]!;
  let retried = false;
  let roundTrips = 0;
  let reading: EraVerdict;
  for (;;) {
    const id = `mcp-dual-era-probe-${++probeIds}`;
    const headers = new Headers(target.headers);
    headers.set('content-type', 'application/json');
    headers.set('accept', 'application/json, text/event-stream');
    headers.set(HEADER.protocolVersion, version);
    headers.set(HEADER.method, 'server/discover');
    options.events?.emit('probe', { target: name, method: 'server/discover', attempt: roundTrips + 1, version });
    let res: Response;
    const signal = newSignal();
    try {
      res = await fetcher(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(discoverRequest(id, version, options)),
        redirect: 'manual',
        signal,
      });
    } catch (e) {
      throw silent(e);
    }
    roundTrips++;
    const status = res.status;
    const redirected = res.type === 'opaqueredirect';
    let answer: JsonRpcMessage | undefined;
    if (redirected || (status >= 300 && status < 400) || status === 401 || status === 403 || status >= 500)
      await res.body?.cancel().catch(() => {});
    else {
      try {
        answer = await readAnswer(res, id);
      } catch {
        answer = undefined;
      }
      // A body that did not come in time is silence, not a legacy answer.
      if (answer === undefined && signal.aborted) throw silent(signal.reason);
    }
    const c = answer ? classify(answer) : undefined;
    const heard: DiscoverAnswer =
      c?.ok && c.value.kind === 'result'
        ? { kind: 'result', result: c.value.message.result, status }
        : c?.ok && c.value.kind === 'error'
          ? { kind: 'error', error: c.value.message.error, status }
          : { kind: 'status', status: redirected ? 302 : status };
    reading = eraOfDiscoverAnswer(heard, { sent: version, ours: versions, retried });
    if (reading.era === 'unknown') {
      const location = res.headers.get('location');
      throw refuse(`${url.href} answered the probe with ${reading.reason}${location ? ` (to ${location})` : ''}`);
    }
    if (reading.era !== 'retry') break;
    retried = true;
    version = reading.version;
  }
  if (reading.era === 'modern')
    return {
      verdict: { era: 'modern', version: reading.version, ...(reading.discover ? { discover: reading.discover } : {}) },
      source: 'probe',
      roundTrips,
    };
  options.events?.emit('fallback', { target: name, from: 'modern', to: 'legacy', reason: reading.reason });
  // A JSON-RPC error to the POST (not a modern one) is a legacy server answering on Streamable
  // HTTP: that is all an `initialize` would tell. Without one, an `initialize` finds the transport.
  if (reading.era === 'legacy' && reading.streamable)
    return { verdict: { era: 'legacy', http: 'streamable' }, source: 'probe', roundTrips };
  const legacy = await legacyHttpMode(target, name, options);
  if (legacy.mode === 'sse')
    options.events?.emit('fallback', {
      target: name,
      from: 'streamable',
      to: 'sse',
      reason: legacy.reason ?? 'the Streamable HTTP initialize was refused',
    });
  return { verdict: { era: 'legacy', http: legacy.mode }, source: 'probe', roundTrips };
}

/**
 * A legacy `initialize` through the legacy HTTP client (Streamable HTTP first, then HTTP+SSE), to
 * learn which transport answers; the session it opens is closed again (DELETE).
 */
async function legacyHttpMode(target: HttpTarget, name: string, options: ProbeOptions): Promise<{ mode: LegacyHttpMode; reason?: string }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const transport = new LegacyHttpClientTransport({
    url: target.url,
    mode: 'auto',
    requestTimeoutMs: timeoutMs,
    ...(target.headers ? { headers: target.headers } : {}),
    ...(target.fetch ? { fetch: target.fetch } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const id = `mcp-dual-era-probe-${++probeIds}`;
  const answered = new Promise<JsonRpcMessage>((resolve) => {
    transport.onmessage = (message) => {
      if ('id' in message && message.id === id && !('method' in message)) resolve(message);
    };
  });
  transport.onerror = () => {};
  options.events?.emit('probe', { target: name, method: 'initialize', attempt: 1, version: LATEST_LEGACY_VERSION });
  try {
    await transport.start();
    await transport.send(legacyInitializeRequest(id, options));
    const answer = await answered;
    if ('error' in answer && answer.error)
      throw refuse(`${new URL(target.url).href} is neither a modern nor a legacy MCP endpoint: ${answer.error.message}`, answer.error);
    const mode = transport.mode ?? 'streamable';
    return { mode, ...(mode === 'sse' ? { reason: 'the Streamable HTTP initialize was refused; the endpoint speaks HTTP+SSE' } : {}) };
  } finally {
    await transport.close().catch(() => {});
  }
}

/** A typed emitter for probe events. */
export function createProbeEvents(): Emitter<ProbeEvents> {
  return createEmitter<ProbeEvents>();
}
