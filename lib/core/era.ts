/**
 * Protocol revisions and the two eras: which versions exist, which era a version string or a
 * message belongs to, and legacy version negotiation. Unknown dated strings are classified,
 * never thrown on.
 */
import { isRecord, shown } from './primitives.ts';
import { ErrorCode, isRecognisedModernError } from './errors.ts';

/** Legacy revisions, oldest first. They negotiate through `initialize`. */
export const LEGACY_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;
/** Modern revisions, oldest first. They travel on every request in `_meta`. */
export const MODERN_VERSIONS = ['2026-07-28'] as const;

/** A revision of the legacy era (`initialize` handshake, sessions, server-initiated requests). */
export type LegacyVersion = (typeof LEGACY_VERSIONS)[number];
/** A revision of the modern era (stateless, per-request `_meta`, `server/discover`, MRTR). */
export type ModernVersion = (typeof MODERN_VERSIONS)[number];
/** Any revision this package speaks, of either era. */
export type KnownVersion = LegacyVersion | ModernVersion;
/** The two eras of the Model Context Protocol. */
export type Era = 'legacy' | 'modern';

/** The newest legacy revision: what a legacy session is opened with when the peer does not ask for another. */
export const LATEST_LEGACY_VERSION: LegacyVersion = '2025-11-25';
/** The newest modern revision: what modern requests are stamped with. */
export const LATEST_MODERN_VERSION: ModernVersion = '2026-07-28';
/** The first day of the modern era: dated versions from here on are modern. */
export const MODERN_ERA_START = '2026-07-28';

/** The `_meta` keys reserved by the protocol, by role. */
export const MetaKey = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  relatedTask: 'io.modelcontextprotocol/related-task',
  progressToken: 'progressToken',
} as const;

/** W3C trace-context keys that travel unprefixed in `_meta`. */
export const TRACE_META_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

const DATED = /^(\d{4})-(\d{2})-(\d{2})$/;

/** What a protocol version string is. */
export type VersionInfo =
  | { readonly kind: 'known'; readonly version: KnownVersion; readonly era: Era }
  | { readonly kind: 'unknown-dated'; readonly version: string; readonly era: Era }
  | { readonly kind: 'unrecognised'; readonly version: string };

/**
 * Classifies a version string. A dated string we do not know is placed in the era its date falls
 * in (it is still unsupported); anything else (drafts, `1.0.0`, non-strings) is unrecognised.
 */
export function classifyVersion(version: unknown): VersionInfo {
  if (typeof version !== 'string') return { kind: 'unrecognised', version: shown(version) };
  if ((LEGACY_VERSIONS as readonly string[]).includes(version)) return { kind: 'known', version: version as LegacyVersion, era: 'legacy' };
  if ((MODERN_VERSIONS as readonly string[]).includes(version)) return { kind: 'known', version: version as ModernVersion, era: 'modern' };
  const m = DATED.exec(version);
  if (m && Number(m[2]) >= 1 && Number(m[2]) <= 12 && Number(m[3]) >= 1 && Number(m[3]) <= 31) {
    return { kind: 'unknown-dated', version, era: version >= MODERN_ERA_START ? 'modern' : 'legacy' };
  }
  return { kind: 'unrecognised', version };
}

/** True for a version of the legacy era that this library speaks. */
export function isLegacyVersion(version: unknown): version is LegacyVersion {
  return typeof version === 'string' && (LEGACY_VERSIONS as readonly string[]).includes(version);
}

/** True for a version of the modern era that this library speaks. */
export function isModernVersion(version: unknown): version is ModernVersion {
  return typeof version === 'string' && (MODERN_VERSIONS as readonly string[]).includes(version);
}

/**
 * Legacy `initialize` negotiation from the server's side: the client's version if supported,
 * otherwise the newest supported one (2025-11-25 lifecycle rules). A modern version offered through
 * `initialize` is answered with the newest legacy version.
 */
export function negotiateLegacyVersion(requested: unknown, supported: readonly LegacyVersion[] = LEGACY_VERSIONS): LegacyVersion {
  if (isLegacyVersion(requested) && supported.includes(requested)) return requested;
  return newest(supported) ?? LATEST_LEGACY_VERSION;
}

/** The newest version of a list (versions are dated, so they sort as strings). */
export function newest<T extends string>(versions: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const v of versions) if (best === undefined || v > best) best = v;
  return best;
}

/** Picks the newest modern version both sides support, if any. */
export function pickModernVersion(theirs: readonly unknown[], ours: readonly ModernVersion[] = MODERN_VERSIONS): ModernVersion | undefined {
  return newest(ours.filter((v) => theirs.includes(v)));
}

/** Which era a message claims on its face. `unclaimed` when both eras could have sent it. */
export type ClaimedEra = Era | 'unclaimed';

const LEGACY_ONLY_METHODS = new Set([
  'initialize',
  'notifications/initialized',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'notifications/roots/list_changed',
  'notifications/elicitation/complete',
  'notifications/tasks/status',
  'tasks/result',
  'tasks/list',
]);
const MODERN_ONLY_METHODS = new Set([
  'server/discover',
  'subscriptions/listen',
  'notifications/subscriptions/acknowledged',
  'tasks/update',
]);

/**
 * The era a message claims. A request claims modern only through
 * `params._meta["io.modelcontextprotocol/protocolVersion"]`; any other request claims legacy.
 * Notifications claim an era only through an era-specific method or a subscription tag; results
 * through `resultType`; errors through era-specific codes (a modern one as `server/discover`'s
 * verdict recognises it, core/verdict.ts).
 */
export function claimedEra(message: unknown): ClaimedEra {
  if (!isRecord(message)) return 'unclaimed';
  const params = isRecord(message['params']) ? message['params'] : undefined;
  const meta = params && isRecord(params['_meta']) ? params['_meta'] : undefined;
  if (typeof message['method'] === 'string') {
    const method = message['method'];
    const isRequest = 'id' in message;
    if (isRequest) return meta && MetaKey.protocolVersion in meta ? 'modern' : 'legacy';
    if (meta && MetaKey.subscriptionId in meta) return 'modern';
    if (LEGACY_ONLY_METHODS.has(method)) return 'legacy';
    if (MODERN_ONLY_METHODS.has(method)) return 'modern';
    return 'unclaimed';
  }
  if (isRecord(message['result'])) return typeof message['result']['resultType'] === 'string' ? 'modern' : 'unclaimed';
  if (isRecord(message['error']) && typeof message['error']['code'] === 'number') {
    const code = message['error']['code'];
    if (isRecognisedModernError(message['error'] as { code: number; data?: unknown })) return 'modern';
    if (code === ErrorCode.ResourceNotFound || code === ErrorCode.UrlElicitationRequired) return 'legacy';
  }
  return 'unclaimed';
}
