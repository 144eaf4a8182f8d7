/**
 * The per-request envelope (translation table rows 1, 3, 5, 19): reading and checking a modern
 * request's `_meta`, stamping a legacy session's identity, capabilities and log level onto a request
 * going modern, and stripping them from one going legacy. `initialize` ⇄ `server/discover` requests.
 */
import * as v from 'valibot';
import {
  LATEST_LEGACY_VERSION,
  LATEST_MODERN_VERSION,
  MODERN_VERSIONS,
  MetaKey,
  isModernVersion,
  type LegacyVersion,
  type ModernVersion,
} from '../era.ts';
import { invalidParams, methodNotFound, unsupportedVersion, type WireError } from '../errors.ts';
import { describe, type JsonRpcRequest } from '../jsonrpc.ts';
import { InitializeParamsSchema, type InitializeParams } from '../legacy/lifecycle.ts';
import type { LegacyClientCapabilities } from '../legacy/capabilities.ts';
import { isRemovedInModern } from '../legacy/methods.ts';
import { isPlainClientCapabilities, ModernClientCapabilitiesSchema, type ModernClientCapabilities } from '../modern/capabilities.ts';
import type { InputResponses } from '../modern/inputs.ts';
import { isMrtrMethod } from '../modern/methods.ts';
import {
  ImplementationSchema,
  isPlainImplementation,
  LoggingLevelSchema,
  extend,
  isRecord,
  omitKeys,
  setMember,
  type Implementation,
  type JsonObject,
  type LoggingLevel,
  type ProgressToken,
} from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';
import { ADAPTER_INFO } from './context.ts';
import { clientCapabilitiesToLegacy, clientCapabilitiesToModern } from './capabilities.ts';

/** What a modern request says about itself, read from its `_meta`. */
export interface Envelope {
  readonly protocolVersion: ModernVersion;
  readonly clientCapabilities: ModernClientCapabilities;
  readonly clientInfo?: Implementation;
  readonly logLevel?: LoggingLevel;
  readonly progressToken?: ProgressToken;
  /**
   * What a retry of a call that may ask for input carries beside `_meta` (`inputResponses`,
   * `requestState`), read with the rest: everything after the envelope reads the retry here.
   */
  readonly retry?: RetryInput;
}

/** A wire error plus the HTTP status a Streamable HTTP edge answers it with. */
export type EnvelopeError = WireError & { readonly status: number };

/** The legacy session a request belongs to, as far as stamping it modern is concerned. */
export interface LegacySessionView {
  readonly clientInfo: Implementation;
  readonly capabilities: LegacyClientCapabilities | JsonObject;
  /** Set by `logging/setLevel`; without it no logs are asked for. */
  readonly logLevel?: LoggingLevel;
}

/** The `_meta` keys that belong to the modern envelope and have no legacy place. */
const ERA_META_KEYS: ReadonlySet<string> = new Set([
  MetaKey.protocolVersion,
  MetaKey.clientInfo,
  MetaKey.clientCapabilities,
  MetaKey.logLevel,
]);

function bad(error: WireError, status = 400): Outcome<never, EnvelopeError> {
  return fail({ ...error, status });
}

/**
 * Reads and checks a modern request's `_meta`: missing or malformed required keys → `-32602`
 * (HTTP 400); an unsupported version → `-32022` with the supported list (HTTP 400).
 */
export function readEnvelope(
  request: JsonRpcRequest,
  options: { supportedVersions?: readonly ModernVersion[] } = {},
): Outcome<Envelope, EnvelopeError> {
  const supported = options.supportedVersions ?? MODERN_VERSIONS;
  const params = request.params;
  if (!isRecord(params)) return bad(invalidParams('a modern request needs params with _meta'));
  const meta = params['_meta'];
  if (!isRecord(meta)) return bad(invalidParams('params._meta is required'));
  const version = meta[MetaKey.protocolVersion];
  if (version === undefined) return bad(invalidParams(`_meta["${MetaKey.protocolVersion}"] is required`));
  if (typeof version !== 'string') return bad(invalidParams(`_meta["${MetaKey.protocolVersion}"] must be a string`));
  if (!isModernVersion(version) || !supported.includes(version)) return bad(unsupportedVersion(version, supported));
  const caps = meta[MetaKey.clientCapabilities];
  if (caps === undefined) return bad(invalidParams(`_meta["${MetaKey.clientCapabilities}"] is required`));
  if (!isPlainClientCapabilities(caps)) {
    const capsCheck = v.safeParse(ModernClientCapabilitiesSchema, caps);
    if (!capsCheck.success) return bad(invalidParams(`_meta["${MetaKey.clientCapabilities}"]: ${describe(capsCheck.issues)}`));
  }
  const envelope: { -readonly [K in keyof Envelope]: Envelope[K] } = {
    protocolVersion: version,
    clientCapabilities: caps as ModernClientCapabilities,
  };
  const info = meta[MetaKey.clientInfo];
  if (info !== undefined) {
    if (!isPlainImplementation(info)) {
      const r = v.safeParse(ImplementationSchema, info);
      if (!r.success) return bad(invalidParams(`_meta["${MetaKey.clientInfo}"]: ${describe(r.issues)}`));
    }
    envelope.clientInfo = info as Implementation;
  }
  const level = meta[MetaKey.logLevel];
  if (level !== undefined) {
    if (!v.is(LoggingLevelSchema, level))
      return bad(invalidParams(`_meta["${MetaKey.logLevel}"]: unknown log level ${JSON.stringify(level)}`), 200);
    envelope.logLevel = level;
  }
  const token = meta[MetaKey.progressToken];
  if (token !== undefined) {
    if (typeof token !== 'string' && typeof token !== 'number')
      return bad(invalidParams('_meta.progressToken must be a string or a number'), 200);
    envelope.progressToken = token;
  }
  if (isMrtrMethod(request.method) && ('inputResponses' in params || 'requestState' in params)) {
    const retry = readRetry(params);
    if (!retry.ok) return retry;
    envelope.retry = retry.value;
  }
  return ok(envelope);
}

/** The MRTR members a retry carries, checked. */
function readRetry(params: JsonObject): Outcome<RetryInput, EnvelopeError> {
  const responses = params['inputResponses'];
  const state = params['requestState'];
  if (responses !== undefined && !isRecord(responses)) return bad(invalidParams('inputResponses must be an object'), 200);
  if (state !== undefined && typeof state !== 'string') return bad(invalidParams('requestState must be a string'), 200);
  const retry: { inputResponses?: InputResponses; requestState?: string } = {};
  if (responses !== undefined) retry.inputResponses = responses as InputResponses;
  if (state !== undefined) retry.requestState = state;
  return ok(retry);
}

/** The MRTR members a retry carries (`Envelope.retry`), taken off the request on its way upstream. */
export interface RetryInput {
  readonly inputResponses?: InputResponses;
  readonly requestState?: string;
}

/** A modern request made legacy, with what was taken off it (a retry's members: `envelope.retry`). */
export interface LegacyRequest {
  readonly request: JsonRpcRequest;
  readonly envelope: Envelope;
}

function stripMeta(meta: JsonObject): JsonObject | undefined {
  const out: JsonObject = {};
  let any = false;
  for (const k in meta) {
    if (ERA_META_KEYS.has(k)) continue;
    setMember(out, k, meta[k]);
    any = true;
  }
  return any ? out : undefined;
}

/**
 * A modern client request → the legacy request to send upstream: the envelope is checked and
 * taken off `_meta` (progress token, trace context and other keys stay); `inputResponses` and
 * `requestState` are taken off pushable methods, and so is a legacy `task` (2026-07-28 has no per-request
 * flag: whether a call runs as a task is the server's to decide). Modern-only methods have no legacy form.
 * `options.envelope`: this request's envelope, already read with `readEnvelope` (not read again).
 */
export function requestToLegacy(
  request: JsonRpcRequest,
  options: { supportedVersions?: readonly ModernVersion[]; envelope?: Envelope } = {},
): Outcome<LegacyRequest, EnvelopeError> {
  const envelope = options.envelope ? ok(options.envelope) : readEnvelope(request, options);
  if (!envelope.ok) return envelope;
  const method = request.method;
  if (method === 'server/discover' || method === 'subscriptions/listen' || method === 'tasks/update') {
    return bad(methodNotFound(method, 'no legacy equivalent; the adapter serves it itself'), 404);
  }
  if (isRemovedInModern(method)) return bad(methodNotFound(method, 'removed in 2026-07-28'), 404);
  const params = request.params as JsonObject;
  const out: JsonObject = {};
  const mrtr = isMrtrMethod(method);
  for (const k in params) {
    if (k === '_meta') {
      const meta = stripMeta(params[k] as JsonObject);
      if (meta) out[k] = meta;
    } else if (!mrtr || (k !== 'inputResponses' && k !== 'requestState' && k !== 'task')) setMember(out, k, params[k]);
  }
  const legacy: JsonRpcRequest = { jsonrpc: '2.0', id: request.id, method };
  for (const _ in out) {
    legacy.params = out;
    break;
  }
  return ok({ request: legacy, envelope: envelope.value });
}

/** The modern `_meta` for a request sent on behalf of a legacy session, merged over the request's own. */
export function sessionMeta(
  session: LegacySessionView,
  own: JsonObject | undefined,
  modernVersion: ModernVersion = LATEST_MODERN_VERSION,
): JsonObject {
  const meta = extend(own, {
    [MetaKey.protocolVersion]: modernVersion,
    [MetaKey.clientInfo]: session.clientInfo,
    [MetaKey.clientCapabilities]: clientCapabilitiesToModern(session.capabilities),
  });
  if (session.logLevel !== undefined) meta[MetaKey.logLevel] = session.logLevel;
  return meta;
}

/**
 * A legacy client request → the modern request to send upstream, stamped with the session's
 * version, identity, capabilities and log level. Legacy-only methods (`ping`, `logging/setLevel`,
 * `resources/subscribe`, …) are answered by the adapter itself: they yield `-32601` here. A legacy
 * `params.task` is dropped (the tasks extension has no per-request flag).
 */
export function requestToModern(
  request: JsonRpcRequest,
  session: LegacySessionView,
  options: { modernVersion?: ModernVersion } = {},
): Outcome<JsonRpcRequest> {
  if (isRemovedInModern(request.method)) return fail(methodNotFound(request.method, 'removed in 2026-07-28; answered by the adapter'));
  let params = isRecord(request.params) ? request.params : {};
  // Legacy task augmentation (`params.task`) has no modern form: the server decides per request.
  if ('task' in params) params = omitKeys(params, ['task']);
  const own = isRecord(params['_meta']) ? params['_meta'] : undefined;
  return ok({
    jsonrpc: '2.0',
    id: request.id,
    method: request.method,
    params: extend(params, { _meta: sessionMeta(session, own, options.modernVersion) }),
  });
}

/** The session view an `initialize` request opens. */
export function sessionFromInitialize(params: InitializeParams, logLevel?: LoggingLevel): LegacySessionView {
  return logLevel === undefined
    ? { clientInfo: params.clientInfo, capabilities: params.capabilities }
    : { clientInfo: params.clientInfo, capabilities: params.capabilities, logLevel };
}

/**
 * A legacy `initialize` request → the modern `server/discover` request an adapter facing a modern
 * server sends in its place (same id; the client's identity and capabilities move into `_meta`).
 */
export function initializeToDiscoverRequest(
  request: JsonRpcRequest,
  options: { modernVersion?: ModernVersion } = {},
): Outcome<JsonRpcRequest> {
  if (request.method !== 'initialize') return fail(invalidParams(`expected initialize, got ${request.method}`));
  const parsed = v.safeParse(InitializeParamsSchema, request.params);
  if (!parsed.success) return fail(invalidParams(`initialize: ${describe(parsed.issues)}`));
  const params = request.params as InitializeParams;
  const own = isRecord(params._meta) ? params._meta : undefined;
  return ok({
    jsonrpc: '2.0',
    id: request.id,
    method: 'server/discover',
    params: { _meta: sessionMeta(sessionFromInitialize(params), own, options.modernVersion) },
  });
}

/** The `initialize` params an adapter sends upstream for a modern envelope. */
export function envelopeToInitializeParams(
  envelope: Pick<Envelope, 'clientCapabilities' | 'clientInfo'>,
  options: { legacyVersion?: LegacyVersion; clientInfo?: Implementation; rootsListChanged?: boolean } = {},
): InitializeParams {
  const capsOptions = options.rootsListChanged === undefined ? {} : { rootsListChanged: options.rootsListChanged };
  return {
    protocolVersion: options.legacyVersion ?? LATEST_LEGACY_VERSION,
    capabilities: clientCapabilitiesToLegacy(envelope.clientCapabilities, capsOptions),
    clientInfo: envelope.clientInfo ?? options.clientInfo ?? ADAPTER_INFO,
  };
}

/**
 * A modern `server/discover` request → the legacy `initialize` request an adapter facing a legacy
 * server sends in its place (same id).
 */
export function discoverToInitializeRequest(
  request: JsonRpcRequest,
  options: { legacyVersion?: LegacyVersion; clientInfo?: Implementation; supportedVersions?: readonly ModernVersion[] } = {},
): Outcome<JsonRpcRequest, EnvelopeError> {
  if (request.method !== 'server/discover') return bad(invalidParams(`expected server/discover, got ${request.method}`));
  const envelope = readEnvelope(request, options.supportedVersions ? { supportedVersions: options.supportedVersions } : {});
  if (!envelope.ok) return envelope;
  const params = envelopeToInitializeParams(envelope.value, options);
  const rest = stripMeta((request.params as JsonObject)['_meta'] as JsonObject);
  return ok({ jsonrpc: '2.0', id: request.id, method: 'initialize', params: rest ? extend(params, { _meta: rest }) : params });
}
