/**
 * `inspectServer(target)`: what a server is, beyond its era verdict — the versions it speaks,
 * whether a modern server also takes legacy clients (dual-era), its server info and capabilities,
 * how many tools, prompts and resources it offers, what the probe cost, and so which clients can
 * use it directly and which need mcp-dual-era. Opens a connection of its own (or two, to try a
 * legacy handshake on a modern server) and closes everything before it returns.
 */
import { isLegacyVersion, LATEST_LEGACY_VERSION, MetaKey } from '../core/era.ts';
import { ErrorCode, AdapterError } from '../core/errors.ts';
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import { isRecord, type JsonObject } from '../core/primitives.ts';
import { ADAPTER_INFO } from '../core/translate/context.ts';
import { LegacyHttpClientTransport, type LegacyHttpMode } from '../transport/legacyHttpClient.ts';
import { ModernHttpClientTransport } from '../transport/modernHttpClient.ts';
import { StdioChildTransport } from '../transport/stdioChild.ts';
import type { Transport } from '../transport/transport.ts';
import { describeTarget, probe } from './probe.ts';
import { isHttpTarget, type HttpTarget, type ProbeOptions, type ProbeTarget } from './probeTypes.ts';
import { DEFAULTS } from '../util/defaults.ts';
import { startupTimer, waitingReason } from './startupTimer.ts';
import { readPages } from '../util/readPages.ts';

/** The three kinds of server the compatibility matrix knows. */
export type ServerKind = 'modern-only' | 'dual-era' | 'legacy';

/** How a client of one era reaches the server. */
export interface Reach {
  readonly direct: boolean;
  /** What to run when it cannot reach the server directly. */
  readonly through?: string;
}

/** What {@link inspectServer} found. */
export interface ServerReport {
  readonly target: string;
  readonly transport: 'stdio' | 'streamable-http' | 'http+sse';
  readonly kind: ServerKind;
  /** The revisions it answered with: the modern ones it lists, and the legacy one `initialize` agreed on. */
  readonly versions: { readonly modern: readonly string[]; readonly legacy?: string };
  readonly serverInfo?: { readonly name: string; readonly version: string; readonly title?: string };
  readonly capabilities: JsonObject;
  readonly instructions?: string;
  /** Counted over every page; absent when the server does not offer the feature. */
  readonly counts: { readonly tools?: number; readonly prompts?: number; readonly resources?: number };
  /**
   * What it cost: the probe's time and its `server/discover` requests (`ProbeResult.roundTrips`, the
   * same count over stdio and HTTP), then the inspection's time (initialize and the lists).
   */
  readonly timing: { readonly probeMs: number; readonly roundTrips: number; readonly inspectMs: number };
  /** Which clients can use it directly, and what the others need. */
  readonly clients: { readonly 'modern-only': Reach; readonly 'dual-era': Reach; readonly legacy: Reach };
}

/** Options of {@link inspectServer}: the probe's timeout (also each request's), the client info it presents, its events. */
export interface InspectOptions extends Pick<ProbeOptions, 'timeoutMs' | 'clientInfo' | 'events'> {}

/** Requests and answers over a transport, with server-sent requests answered as a client that offers nothing. */
class Rpc {
  readonly #transport: Transport;
  readonly #timeoutMs: number;
  readonly #waiting = new Map<RequestId, (message: JsonRpcMessage | undefined) => void>();
  readonly #born = Date.now();
  readonly #onWaiting: ((reason: string) => void) | undefined;
  #next = 0;

  /** `onWaiting` is told, as it waits, that a server process has not said a word yet. */
  constructor(transport: Transport, timeoutMs: number, onWaiting?: (reason: string) => void) {
    this.#transport = transport;
    this.#timeoutMs = timeoutMs;
    this.#onWaiting = onWaiting;
    transport.onmessage = (message) => this.#receive(message);
    transport.onerror = () => {};
    transport.onclose = () => {
      for (const settle of this.#waiting.values()) settle(undefined);
    };
  }

  #receive(message: JsonRpcMessage): void {
    if ('method' in message) {
      if (!('id' in message)) return;
      const result = message.method === 'roots/list' ? { roots: [] } : message.method === 'ping' ? {} : undefined;
      const answer = result
        ? { jsonrpc: '2.0' as const, id: message.id, result }
        : { jsonrpc: '2.0' as const, id: message.id, error: { code: ErrorCode.MethodNotFound, message: 'Method not found' } };
      void this.#transport.send(answer).catch(() => {});
      return;
    }
    if ('id' in message && message.id !== null && message.id !== undefined) this.#waiting.get(message.id)?.(message);
  }

  /** The result of a request; an AdapterError for an error answer, silence or a closed connection. */
  request(method: string, params: JsonObject = {}): Promise<JsonObject> {
    const id = `inspect-${++this.#next}`;
    return new Promise<JsonObject>((resolve, reject) => {
      // A server process that has not said a word yet is still starting: it is waited for (up to
      // `probeStartMs` from its start), and that is said; silence after it spoke is no answer.
      const cancel = startupTimer(
        this.#transport,
        { timeoutMs: this.#timeoutMs, startMs: DEFAULTS.probeStartMs, startedAt: this.#born },
        {
          waiting: (waited) => this.#onWaiting?.(waitingReason(waited, DEFAULTS.probeStartMs, ` to answer ${method}`)),
          expired: () => settle(undefined),
        },
      );
      const settle = (message: JsonRpcMessage | undefined) => {
        cancel();
        this.#waiting.delete(id);
        if (message && 'result' in message) resolve(message.result as JsonObject);
        else
          reject(
            new AdapterError(
              'protocol',
              message && 'error' in message ? `${method}: ${message.error.message} (${message.error.code})` : `${method}: no answer`,
            ),
          );
      };
      this.#waiting.set(id, settle);
      this.#transport.send({ jsonrpc: '2.0', id, method, params }).catch(() => settle(undefined));
    });
  }

  notify(method: string): Promise<void> {
    return this.#transport.send({ jsonrpc: '2.0', method });
  }
}

/** How many items a list method returns over all its pages (at most `MAX_PAGES`). */
async function count(ask: (params: JsonObject) => Promise<JsonObject>, key: string): Promise<number> {
  let total = 0;
  await readPages(
    async (cursor) => ({ result: await ask(cursor === undefined ? {} : { cursor }) }),
    (result) => {
      const items = result[key];
      total += Array.isArray(items) ? items.length : 0;
    },
  );
  return total;
}

/** Counts tools, prompts and resources the capabilities announce. */
async function counts(
  capabilities: JsonObject,
  ask: (method: string, params: JsonObject) => Promise<JsonObject>,
): Promise<ServerReport['counts']> {
  const out: { tools?: number; prompts?: number; resources?: number } = {};
  if (isRecord(capabilities['tools'])) out.tools = await count((p) => ask('tools/list', p), 'tools');
  if (isRecord(capabilities['prompts'])) out.prompts = await count((p) => ask('prompts/list', p), 'prompts');
  if (isRecord(capabilities['resources'])) out.resources = await count((p) => ask('resources/list', p), 'resources');
  return out;
}

function serverInfoOf(value: unknown): ServerReport['serverInfo'] {
  if (!isRecord(value) || typeof value['name'] !== 'string' || typeof value['version'] !== 'string') return undefined;
  return { name: value['name'], version: value['version'], ...(typeof value['title'] === 'string' ? { title: value['title'] } : {}) };
}

/** What a client of each era needs to use a server of this kind. */
export function reachFor(kind: ServerKind, target: ProbeTarget): ServerReport['clients'] {
  const upstream = isHttpTarget(target) ? `--upstream ${describeTarget(target)}` : `-- ${describeTarget(target)}`;
  const connect = isHttpTarget(target) ? `connect ${describeTarget(target)}` : `connect -- ${describeTarget(target)}`;
  return {
    'modern-only':
      kind === 'legacy'
        ? { direct: false, through: `mcp-dual-era serve ${upstream} (or ${connect} on the host's side)` }
        : { direct: true },
    'dual-era': { direct: true },
    legacy:
      kind === 'modern-only'
        ? { direct: false, through: `mcp-dual-era serve --modern ${upstream} (or ${connect} on the host's side)` }
        : { direct: true },
  };
}

/**
 * Inspects a server (a stdio command or an HTTP endpoint): its era and kind, versions, info,
 * capabilities, offer, and who can use it. It probes afresh (never from the verdict cache), opens
 * its own connections and closes them before it returns. It rejects when the server cannot be
 * reached, refuses the probe or leaves a request unanswered for `timeoutMs`.
 */
export async function inspectServer(target: ProbeTarget, options: InspectOptions = {}): Promise<ServerReport> {
  const timeoutMs = options.timeoutMs ?? DEFAULTS.probeTimeoutMs;
  const clientInfo = options.clientInfo ?? ADAPTER_INFO;
  const started = performance.now();
  const probed = await probe(target, {
    cache: false,
    keepProcess: true,
    timeoutMs,
    clientInfo,
    ...(options.events ? { events: options.events } : {}),
  });
  const probeMs = performance.now() - started;
  const verdict = probed.verdict;
  const onWaiting = (reason: string) => options.events?.emit('waiting', { target: describeTarget(target), waitedMs: 0, reason });
  const http = isHttpTarget(target);
  const closing: Array<Transport> = [];
  try {
    let report: Omit<ServerReport, 'timing' | 'clients' | 'target'>;
    if (verdict.era === 'modern') {
      const transport: Transport = http ? new ModernHttpClientTransport({ url: target.url, ...httpOptions(target) }) : probed.process!;
      closing.push(transport);
      if (http) await transport.start();
      const rpc = new Rpc(transport, timeoutMs, onWaiting);
      const meta = { [MetaKey.protocolVersion]: verdict.version, [MetaKey.clientInfo]: clientInfo, [MetaKey.clientCapabilities]: {} };
      const ask = (method: string, params: JsonObject) => rpc.request(method, { ...params, _meta: meta });
      const discover = verdict.discover ?? (await ask('server/discover', {}));
      const capabilities = isRecord(discover['capabilities']) ? (discover['capabilities'] as JsonObject) : {};
      const meta2 = isRecord(discover['_meta']) ? discover['_meta'] : {};
      const legacy = await legacyHandshake(target, timeoutMs, clientInfo, onWaiting);
      report = {
        transport: http ? 'streamable-http' : 'stdio',
        kind: legacy ? 'dual-era' : 'modern-only',
        versions: {
          modern: Array.isArray(discover['supportedVersions']) ? discover['supportedVersions'].map(String) : [verdict.version],
          ...(legacy ? { legacy } : {}),
        },
        ...withInfo(serverInfoOf(meta2[MetaKey.serverInfo] ?? discover['serverInfo'])),
        capabilities,
        ...(typeof discover['instructions'] === 'string' ? { instructions: discover['instructions'] } : {}),
        counts: await counts(capabilities, ask),
      };
    } else {
      const transport: Transport = http
        ? new LegacyHttpClientTransport({ url: target.url, mode: verdict.http ?? 'auto', ...httpOptions(target) })
        : (probed.process ?? new StdioChildTransport(target));
      closing.push(transport);
      if (http || !probed.process) await transport.start();
      const rpc = new Rpc(transport, timeoutMs, onWaiting);
      const init = await rpc.request('initialize', { protocolVersion: LATEST_LEGACY_VERSION, capabilities: {}, clientInfo });
      await rpc.notify('notifications/initialized');
      const capabilities = isRecord(init['capabilities']) ? (init['capabilities'] as JsonObject) : {};
      const mode: LegacyHttpMode | undefined = transport instanceof LegacyHttpClientTransport ? transport.mode : undefined;
      report = {
        transport: http ? (mode === 'sse' ? 'http+sse' : 'streamable-http') : 'stdio',
        kind: 'legacy',
        versions: { modern: [], ...(typeof init['protocolVersion'] === 'string' ? { legacy: init['protocolVersion'] } : {}) },
        ...withInfo(serverInfoOf(init['serverInfo'])),
        capabilities,
        ...(typeof init['instructions'] === 'string' ? { instructions: init['instructions'] } : {}),
        counts: await counts(capabilities, (method, params) => rpc.request(method, params)),
      };
    }
    return {
      target: describeTarget(target),
      ...report,
      timing: { probeMs: Math.round(probeMs), roundTrips: probed.roundTrips, inspectMs: Math.round(performance.now() - started - probeMs) },
      clients: reachFor(report.kind, target),
    };
  } finally {
    await Promise.all(closing.map((t) => t.close().catch(() => {})));
    if (probed.process && !closing.includes(probed.process)) await probed.process.close().catch(() => {});
  }
}

/** The headers and fetch of an HTTP target, for any of our HTTP clients. */
function httpOptions(target: HttpTarget): { headers?: Readonly<Record<string, string>>; fetch?: typeof fetch } {
  return { ...(target.headers ? { headers: target.headers } : {}), ...(target.fetch ? { fetch: target.fetch } : {}) };
}

function withInfo(info: ServerReport['serverInfo']): { serverInfo?: NonNullable<ServerReport['serverInfo']> } {
  return info ? { serverInfo: info } : {};
}

/** Whether a modern server also takes a legacy `initialize`: the version it agreed on, if so. */
async function legacyHandshake(
  target: ProbeTarget,
  timeoutMs: number,
  clientInfo: NonNullable<InspectOptions['clientInfo']>,
  onWaiting?: (reason: string) => void,
): Promise<string | undefined> {
  const transport: Transport = isHttpTarget(target)
    ? new LegacyHttpClientTransport({ url: target.url, mode: 'streamable', ...httpOptions(target) })
    : new StdioChildTransport({ ...target, stderr: 'ignore' });
  try {
    await transport.start();
    const rpc = new Rpc(transport, timeoutMs, onWaiting);
    const init = await rpc.request('initialize', { protocolVersion: LATEST_LEGACY_VERSION, capabilities: {}, clientInfo });
    return isLegacyVersion(init['protocolVersion']) ? init['protocolVersion'] : undefined;
  } catch {
    return undefined;
  } finally {
    await transport.close().catch(() => {});
  }
}
