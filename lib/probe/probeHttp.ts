/**
 * The probe of an HTTP endpoint: a modern `server/discover` POST read by the era verdict, then,
 * for a legacy server, a legacy `initialize` to learn its transport (Streamable HTTP, then
 * HTTP+SSE). 401, 403, redirects, 5xx and network errors throw instead of falling back.
 */
import { LATEST_LEGACY_VERSION, type ModernVersion } from '../core/era.ts';
import { AdapterError } from '../core/errors.ts';
import { classify, parseMessage, type JsonRpcMessage, type RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import { HEADER } from '../core/translate/headers.ts';
import { LegacyHttpClientTransport, type LegacyHttpMode } from '../transport/legacyHttpClient.ts';
import { mediaType, readSseMessages } from '../transport/sse.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, readBounded } from '../transport/messageBound.ts';
import { eraOfDiscoverAnswer, type DiscoverAnswer, type EraVerdict } from '../core/verdict.ts';
import { DEFAULTS } from '../util/defaults.ts';

import { discoverRequest, legacyInitializeRequest, probeId } from './probeRequests.ts';
import type { HttpTarget, ProbeOptions, ProbeResult } from './probeTypes.ts';

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

export async function probeHttp(
  target: HttpTarget,
  name: string,
  options: ProbeOptions,
  versions: readonly ModernVersion[],
): Promise<ProbeResult> {
  const url = new URL(target.url);
  const fetcher = target.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? DEFAULTS.probeTimeoutMs;
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
    const id = probeId();
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
  const timeoutMs = options.timeoutMs ?? DEFAULTS.probeTimeoutMs;
  const transport = new LegacyHttpClientTransport({
    url: target.url,
    mode: 'auto',
    requestTimeoutMs: timeoutMs,
    ...(target.headers ? { headers: target.headers } : {}),
    ...(target.fetch ? { fetch: target.fetch } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const id = probeId();
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
