/**
 * Serves one modern (2026-07-28) request against a legacy server: checks the envelope, picks the
 * upstream session for the caller's principal and declared capabilities, forwards the request with
 * its `_meta` stripped, streams the request's own progress and logs (at or above its `logLevel`),
 * and translates the answer. Pushes the server makes during the call go to the `inputs` broker.
 * Transport-neutral: the HTTP and stdio fronts call it.
 */
import { resultResponse, type JsonRpcRequest, type RequestId } from '../../core/jsonrpc.ts';
import { AdapterError, ErrorCode, internalError } from '../../core/errors.ts';
import { failureOf, upstreamUnavailable } from '../../util/upstreamFailure.ts';
import { limitAnswer, limitRefusal, refusalOf, type LimitRefusal } from '../../util/limits.ts';
import type { ModernVersion } from '../../core/era.ts';
import { canonicalJson, sameJson, type Implementation, type JsonObject } from '../../core/primitives.ts';
import { ADAPTER_INFO, type CacheDefaults } from '../../core/translate/context.ts';
import { clientCapabilitiesToLegacy } from '../../core/translate/capabilities.ts';
import { readEnvelope, requestToLegacy, type Envelope, type LegacyRequest } from '../../core/translate/envelope.ts';
import { initializeResultToDiscover } from '../../core/translate/discover.ts';
import type { InitializeResult } from '../../core/legacy/lifecycle.ts';
import { errorToModern } from '../../core/translate/errors.ts';
import { verifyParamHeaders } from '../../core/translate/headers.ts';
import { isMrtrMethod } from '../../core/modern/methods.ts';
import { streamHooks, targetOf, type InputBroker } from '../mrtr/broker.ts';
import type { ToolIndex } from './toolIndex.ts';
import type { Catalog } from './catalog.ts';
import { scope } from '../../util/signals.ts';
import { resultToModern } from '../../core/translate/results.ts';
import type { AcquireOptions, SessionPool } from '../../session/pool.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import { authRefusalAnswer, errorAnswer, type Answer, type ModernContext } from '../../fronts/served.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import type { RequestTelemetry } from '../../observe/requestTelemetry.ts';
import { performance } from 'node:perf_hooks';
import { rootsHolderOf, WRAP_ROOTS, type RootsHolders } from './rootsHolders.ts';

export interface ModernDispatchOptions {
  readonly pool: SessionPool;
  /** Overrides the server info taken from the upstream's `initialize` result. */
  readonly serverInfo?: Implementation;
  readonly cache?: CacheDefaults;
  readonly supportedVersions?: readonly ModernVersion[];
  /** Deadline for one upstream call. */
  readonly requestTimeoutMs?: number;
  readonly inputs?: InputBroker;
  /** Tool definitions for checking `Mcp-Param-*` headers. */
  readonly tools?: ToolIndex;
  /** Learns what the upstream lists from its list answers. */
  readonly catalog?: Catalog;
  /**
   * What the server said of itself to a session opened with `key`'s capability set and client
   * info (any caller's): `server/discover` is answered from it when the caller has no session of
   * its own, rather than booting one only to describe the server.
   */
  readonly described?: (key: SessionKey) => InitializeResult | undefined;
  /**
   * The wrap's own roots (non-empty): sessions declare `roots` upstream whatever the client
   * declared, and every `roots/list` of the server is answered with these, over the caller's own.
   */
  readonly roots?: ReadonlyArray<{ readonly uri: string; readonly name?: string }>;
  /**
   * Whose roots the server holds on each session: a pushable call whose caller may not have
   * given them gets the session alone and has them asked again before it is sent (see `bindCall`).
   */
  readonly holders?: RootsHolders;
  /**
   * Callers share upstream sessions (`WrapLegacyServerOptions.shareSessions`): keys are filed
   * under `SHARED_PRINCIPAL`, and each caller may have `perCaller` calls that need a session
   * alone (they may push) under way at once; `pushing` counts them.
   */
  readonly shared?: { readonly perCaller: number; readonly pushing: Map<string, number> };
}

/** The principal the keys of callers that share sessions are filed under (no caller's own). */
export const SHARED_PRINCIPAL = '\u0000shared';

interface KnownCapabilities {
  readonly modern: unknown;
  readonly ownRoots: boolean;
  readonly capabilities: JsonObject;
  readonly text: string;
}

/**
 * The capability sets seen last, newest first: clients repeat theirs on every request, so a new
 * request's set is compared with these (no text is built) before it is translated and canonicalised.
 */
const recentCapabilities: KnownCapabilities[] = [];
const RECENT_CAPABILITIES = 16;

/**
 * The pool key for a modern envelope: the principal plus what the request declared, as declared
 * upstream: `roots` with `listChanged` (servers such as fastmcp ask for roots only then), and
 * `roots` whatever the client declared when the wrap has roots of its own (`ownRoots`).
 */
export function keyFor(principal: string, envelope: Envelope, ownRoots = false, authorization?: string): SessionKey {
  const modern = envelope.clientCapabilities;
  let known: KnownCapabilities | undefined;
  for (let i = 0; i < recentCapabilities.length; i++) {
    const candidate = recentCapabilities[i]!;
    if (candidate.ownRoots !== ownRoots || !sameJson(candidate.modern, modern)) continue;
    known = candidate;
    if (i > 0) {
      recentCapabilities.splice(i, 1);
      recentCapabilities.unshift(candidate);
    }
    break;
  }
  if (!known) {
    const capabilities = clientCapabilitiesToLegacy(modern, { rootsListChanged: true, ownRoots }) as JsonObject;
    // What is remembered is a copy: the request's own value stays the caller's.
    known = { modern: structuredClone(modern), ownRoots, capabilities, text: canonicalJson(capabilities) };
    recentCapabilities.unshift(known);
    if (recentCapabilities.length > RECENT_CAPABILITIES) recentCapabilities.pop();
  }
  const key = {
    principal,
    capabilities: known.capabilities,
    capabilitiesText: known.text,
    clientInfo: envelope.clientInfo ?? ADAPTER_INFO,
  };
  return authorization === undefined ? key : { ...key, authorization };
}

/**
 * The pool key of a caller's request: filed under its principal, or under `SHARED_PRINCIPAL` when
 * callers share sessions.
 */
export function callerKey(ctx: ModernContext, envelope: Envelope, options: ModernDispatchOptions): SessionKey {
  return keyFor(options.shared ? SHARED_PRINCIPAL : ctx.principal, envelope, ownRoots(options), passedAuthorization(ctx, options));
}

/** The caller's `Authorization` header, when the wrap's backend passes it upstream. */
export function passedAuthorization(ctx: ModernContext, options: Pick<ModernDispatchOptions, 'pool'>): string | undefined {
  return options.pool.backend.passesAuthorization ? (ctx.headers?.('authorization') ?? undefined) : undefined;
}

/** Whether the wrap has roots of its own (see `ModernDispatchOptions.roots`). */
export function ownRoots(options: Pick<ModernDispatchOptions, 'roots'>): boolean {
  return options.roots !== undefined && options.roots.length > 0;
}

/** The wrap's own roots as a `roots/list` answer. */
function rootsAnswer(options: ModernDispatchOptions): RpcOutcome {
  return { result: { roots: (options.roots ?? []).map((r) => ({ ...r })) } };
}

/**
 * The hooks of a call on a wrap with roots of its own: the server's `roots/list` is answered with
 * those (whatever roots the caller has), the rest goes to `hooks`.
 */
function answeringRoots(hooks: CallHooks, options: ModernDispatchOptions): CallHooks {
  return {
    ...(hooks.signal ? { signal: hooks.signal } : {}),
    ...(hooks.pushable !== undefined ? { pushable: hooks.pushable } : {}),
    ...(hooks.onCancel ? { onCancel: (cancel: () => void) => hooks.onCancel!(cancel) } : {}),
    ...(hooks.onProgress ? { onProgress: (params: JsonObject) => hooks.onProgress!(params) } : {}),
    ...(hooks.onLog ? { onLog: (params: JsonObject) => hooks.onLog!(params) } : {}),
    ...(hooks.onPushCancelled ? { onPushCancelled: (id: RequestId) => hooks.onPushCancelled!(id) } : {}),
    onPush: (push, before) => {
      if (push.method === 'roots/list') return Promise.resolve(rootsAnswer(options));
      return hooks.onPush
        ? hooks.onPush(push, before)
        : Promise.resolve({ error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method}` } });
    },
  };
}

function serverInfoOf(session: UpstreamSession, options: ModernDispatchOptions): Implementation | undefined {
  return options.serverInfo ?? session.initializeResult?.serverInfo;
}

/** `requestToLegacy`'s options for a request whose envelope the front has read. */
function withEnvelope(
  options: ModernDispatchOptions,
  envelope: Envelope,
): { supportedVersions?: readonly ModernVersion[]; envelope: Envelope } {
  return options.supportedVersions ? { supportedVersions: options.supportedVersions, envelope } : { envelope };
}

/** The answer to a request refused by a limit: `-32005` naming it, HTTP 429 or 503 with `Retry-After`. */
export function refusedAnswer(id: JsonRpcRequest['id'] | null, refusal: LimitRefusal): Answer {
  return limitAnswer(refusal, id);
}

/**
 * The answer to a request no upstream session could be had for: the limit that refused it, or the
 * upstream's own error in the message and in `data`.
 */
export function unavailable(request: JsonRpcRequest, e: unknown, ctx?: ModernContext): Answer {
  const refusal = refusalOf(e);
  if (refusal) return refusedAnswer(request.id, refusal);
  const refused = e instanceof AdapterError ? authRefusalAnswer(request.id, e.upstream, ctx?.challenge) : undefined;
  if (refused) return refused;
  return errorAnswer(
    request.id,
    upstreamUnavailable(e instanceof Error ? e.message : String(e), e instanceof AdapterError ? e.upstream : undefined),
  );
}

/** One request on its way: what `serveModern` has read of it before it has a session. */
interface PendingRequest {
  readonly request: JsonRpcRequest;
  readonly ctx: ModernContext;
  readonly options: ModernDispatchOptions;
  readonly up: LegacyRequest;
  readonly key: SessionKey;
  readonly target: string;
  readonly pushable: boolean;
  readonly reservation: { reserved: boolean };
  /**
   * Whose roots the caller gives the server (see `rootsHolderOf`), when its sessions declare
   * `roots` upstream and the wrap keeps track of them.
   */
  readonly holder: string | undefined;
}

/**
 * Serves a modern request that is not `subscriptions/listen`. A request whose session is at hand
 * (and, for `tools/call` over HTTP, whose tool is known) is sent upstream without waiting for
 * anything; one that must wait for a session or for the server's tool list takes the slower path.
 */
export function serveModern(request: JsonRpcRequest, ctx: ModernContext, options: ModernDispatchOptions): Promise<Answer> {
  const versions = options.supportedVersions ? { supportedVersions: options.supportedVersions } : {};
  if (request.method === 'server/discover') {
    const envelope = readEnvelope(request, versions);
    return envelope.ok ? discover(request, envelope.value, ctx, options) : Promise.resolve(errorAnswer(request.id, envelope.error));
  }
  const legacy = requestToLegacy(request, ctx.envelope ? withEnvelope(options, ctx.envelope) : versions);
  if (!legacy.ok) return Promise.resolve(errorAnswer(request.id, legacy.error));
  const up = legacy.value;
  const target = targetOf(request.method, up.request.params);
  const key = callerKey(ctx, up.envelope, options);
  const holder = options.holders && key.capabilities['roots'] !== undefined ? rootsHolderOf(ctx.principal, ownRoots(options)) : undefined;
  const r: PendingRequest = {
    request,
    ctx,
    options,
    up,
    key,
    target,
    pushable: options.inputs !== undefined && isMrtrMethod(request.method),
    reservation: { reserved: false },
    holder,
  };
  // A retry reaches the broker before any session is taken: the call it resumes holds its own.
  if (r.pushable && up.retry !== undefined) {
    const resumed = options.inputs!.resume?.({
      request,
      legacy: up,
      ctx,
      target,
      timeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
      finishOn: (session) => finisher(r, session),
    });
    if (resumed) return resumed;
  }
  return options.shared && needsOwnSession(r) ? serveAlone(r, options.shared) : serveRequest(r);
}

/**
 * A call that needs a session alone, of a caller sharing sessions with others: within the calls of
 * its own under way that may push (so that no caller takes every session for itself).
 */
function serveAlone(r: PendingRequest, shared: NonNullable<ModernDispatchOptions['shared']>): Promise<Answer> {
  const caller = r.ctx.principal;
  const under = shared.pushing.get(caller) ?? 0;
  if (under >= shared.perCaller)
    return Promise.resolve(
      refusedAnswer(
        r.request.id,
        limitRefusal('sessions-per-caller', shared.perCaller, `this caller has ${shared.perCaller} calls under way that may ask for input`),
      ),
    );
  shared.pushing.set(caller, under + 1);
  const done = (): void => {
    const left = (shared.pushing.get(caller) ?? 1) - 1;
    if (left > 0) shared.pushing.set(caller, left);
    else shared.pushing.delete(caller);
  };
  const answer = serveRequest(r);
  answer.then(done, done);
  return answer;
}

/** Serves a request read and keyed: at once on a session at hand, else on the slower path. */
function serveRequest(r: PendingRequest): Promise<Answer> {
  const { request, ctx, options } = r;
  let session: UpstreamSession | undefined;
  try {
    session = options.pool.tryAcquire(r.key, acquiring(r));
  } catch (e) {
    return Promise.resolve(unavailable(request, e, ctx));
  }
  if (session) {
    ctx.telemetry?.session('reused');
    const schema = toolSchemaAtHand(r, session);
    if (schema !== SCHEMA_NOT_LOADED) return dispatch(r, session, schema);
  }
  return serveWaiting(r, session);
}

/** Whether the call wants a session with no other pushable call (see `AcquireOptions.exclusive`). */
function needsOwnSession(r: PendingRequest): boolean {
  if (!r.pushable) return false;
  const inputs = r.options.inputs!;
  return rootsAlone(r) || !(inputs.quiet?.(r.target) ?? !(inputs.pushes?.(r.target) ?? false));
}

/**
 * Whether the call must have its session alone because of roots: a session of its key may hold
 * roots another caller gave, which are asked again for this one before the call is sent, and must
 * not be asked again for another caller while it runs.
 */
function rootsAlone(r: PendingRequest): boolean {
  return r.holder !== undefined && r.options.holders!.mayDiffer(r.key, r.holder);
}

/** How the call takes a session from the pool (a waiting call adds what it waits with). */
function acquiring(r: PendingRequest): AcquireOptions {
  const exclusive = needsOwnSession(r);
  return {
    exclusive,
    ...(exclusive && rootsAlone(r) ? { neverShare: true } : {}),
    open: r.options.inputs?.pushes?.(r.target) ?? false,
    reservation: r.reservation,
    caller: r.ctx.principal,
  };
}

/** The tool's input schema is not loaded yet: the server's tool list must be fetched first. */
const SCHEMA_NOT_LOADED = Symbol('wait');

/** The input schema `Mcp-Param-*` headers are checked against, if known now (`SCHEMA_NOT_LOADED` if it must be fetched). */
function toolSchemaAtHand(r: PendingRequest, session: UpstreamSession): unknown {
  if (r.request.method !== 'tools/call' || !r.ctx.headers || !r.options.tools) return undefined;
  const name = r.up.request.params?.['name'];
  if (typeof name !== 'string') return undefined;
  const loaded = r.options.tools.loaded(session);
  return loaded ? loaded.get(name) : SCHEMA_NOT_LOADED;
}

/** The slower path: waits for a session, or for the server's tool list. */
async function serveWaiting(r: PendingRequest, held: UpstreamSession | undefined): Promise<Answer> {
  let session = held;
  if (!session) {
    const started = r.ctx.telemetry ? performance.now() : 0;
    const opened = { opened: false };
    try {
      session = await r.options.pool.acquire(r.key, {
        ...acquiring(r),
        stillExclusive: () => needsOwnSession(r),
        signal: r.ctx.signal,
        opened,
      });
    } catch (e) {
      return unavailable(r.request, e, r.ctx);
    }
    r.ctx.telemetry?.session(opened.opened ? 'opened' : 'waited', performance.now() - started);
  }
  let schema = toolSchemaAtHand(r, session);
  if (schema === SCHEMA_NOT_LOADED)
    schema = await r.options.tools!.schemaFor(session, r.up.request.params!['name'] as string).catch(() => undefined);
  return dispatch(r, session, schema);
}

/** Sends the request upstream on `session` and resolves with its answer. */
function dispatch(r: PendingRequest, session: UpstreamSession, inputSchema: unknown): Promise<Answer> {
  const { request, ctx, options, up, reservation } = r;
  if (inputSchema !== undefined && ctx.headers) {
    const checked = verifyParamHeaders(request, ctx.headers, { inputSchema });
    if (!checked.ok) {
      if (reservation.reserved) session.unreserve();
      return Promise.resolve(errorAnswer(request.id, { ...checked.error, status: 400 }));
    }
  }
  const method = request.method;
  const finish = finisher(r, session);
  const local = ownRoots(options);
  // The server's `roots/list` is answered with the wrap's own roots when it has some; without, a call that cannot carry rounds refuses it.
  const roots =
    r.holder !== undefined
      ? {
          holders: options.holders!,
          key: r.key,
          holder: r.pushable ? r.holder : WRAP_ROOTS,
          refresh: r.pushable,
          alone: r.pushable && rootsAlone(r),
        }
      : undefined;
  const call = bindCall(session, method, up.request.params, reservation, local ? options : undefined, ctx.telemetry, roots);
  if (!r.pushable) return callPlain(r, call, finish);
  const answer = options.inputs!.run({
    request,
    legacy: up,
    key: r.key,
    session,
    ctx,
    call,
    finish,
    target: r.target,
    timeoutMs: options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
  });
  if (!reservation.reserved) return answer;
  // A call the broker answered without sending it (refused: too many calls parked) gives its reservation back.
  return answer.then((a) => {
    if (reservation.reserved) {
      reservation.reserved = false;
      session.unreserve();
    }
    return a;
  });
}

/** How an upstream outcome on `session` becomes the answer to `r`'s request. */
function finisher(r: PendingRequest, session: UpstreamSession): (outcome: RpcOutcome) => Answer {
  const { request, ctx, options, up } = r;
  const method = request.method;
  const toModern = { serverInfo: serverInfoOf(session, options), cache: options.cache, retry: up.retry !== undefined };
  return (outcome) => {
    if ('error' in outcome)
      return (
        authRefusalAnswer(request.id, failureOf(outcome.error.data), ctx.challenge) ??
        errorAnswer(request.id, errorToModern(outcome.error, { method, ...(up.request.params ? { params: up.request.params } : {}) }))
      );
    options.catalog?.note(method, outcome.result);
    const translated = resultToModern(method, outcome.result, toModern);
    if (!translated.ok) return errorAnswer(request.id, translated.error);
    return { message: resultResponse(request.id, translated.value.result), status: 200 };
  };
}

/** A call no push can become input for (not `tools/call`, `prompts/get` or `resources/read`, or no broker). */
async function callPlain(
  r: PendingRequest,
  call: (hooks: CallHooks) => Promise<RpcOutcome>,
  finish: (outcome: RpcOutcome) => Answer,
): Promise<Answer> {
  const { request, ctx, options } = r;
  const deadline = scope([ctx.signal], options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
  const outcome = await call({
    signal: deadline.signal,
    ...streamHooks({ envelope: r.up.envelope, notify: ctx.notify }),
    // (The server's `roots/list` is answered by the wrap's own roots, when it has some, in `bindCall`.)
    onPush: async (push) => ({
      error: {
        code: ErrorCode.MethodNotFound,
        message: `Method not found: ${push.method} cannot reach a modern client outside tools/call, prompts/get or resources/read`,
      },
    }),
  });
  deadline.dispose();
  if (deadline.timedOut)
    return errorAnswer(
      request.id,
      internalError(`the upstream server did not answer ${request.method} within ${options.requestTimeoutMs ?? 300000} ms`),
    );
  return finish(outcome);
}

async function discover(request: JsonRpcRequest, envelope: Envelope, ctx: ModernContext, options: ModernDispatchOptions): Promise<Answer> {
  const key = callerKey(ctx, envelope, options);
  let init: InitializeResult | undefined;
  try {
    init =
      options.pool.tryAcquire(key)?.initializeResult ??
      options.described?.(key) ??
      (await options.pool.acquire(key, { signal: ctx.signal, caller: ctx.principal })).initializeResult!;
  } catch (e) {
    return unavailable(request, e, ctx);
  }
  const result = initializeResultToDiscover(options.serverInfo ? { ...init, serverInfo: options.serverInfo } : init, {
    ...(options.supportedVersions ? { supportedVersions: options.supportedVersions } : {}),
    ...(options.cache ? { cache: options.cache } : {}),
  });
  if (!result.ok) return errorAnswer(request.id, result.error);
  return { message: resultResponse(request.id, result.value as JsonObject), status: 200 };
}

/** How a call keeps track of the roots the server holds (see `ModernDispatchOptions.holders`). */
interface RootsTracking {
  readonly holders: RootsHolders;
  readonly key: SessionKey;
  /** Whose roots the caller gives. */
  readonly holder: string;
  /** The call can carry rounds: roots another caller gave are asked again before it is sent. */
  readonly refresh: boolean;
  /** The call took its session alone for its roots: it keeps it so while it runs. */
  readonly alone: boolean;
}

/**
 * The hooks of a call whose session declared `roots`: a `roots/list` it answered is noted as the
 * caller's roots; a call that took its session alone for its roots counts as one that may push
 * while it runs, so no call that needs a session alone is given the session meanwhile.
 */
function trackingRoots(hooks: CallHooks, session: UpstreamSession, roots: RootsTracking): CallHooks {
  return {
    ...(hooks.signal ? { signal: hooks.signal } : {}),
    ...(roots.alone ? { pushable: true } : hooks.pushable !== undefined ? { pushable: hooks.pushable } : {}),
    ...(hooks.onCancel ? { onCancel: (cancel: () => void) => hooks.onCancel!(cancel) } : {}),
    ...(hooks.onProgress ? { onProgress: (params: JsonObject) => hooks.onProgress!(params) } : {}),
    ...(hooks.onLog ? { onLog: (params: JsonObject) => hooks.onLog!(params) } : {}),
    ...(hooks.onPushCancelled ? { onPushCancelled: (id: RequestId) => hooks.onPushCancelled!(id) } : {}),
    onPush: async (push, before) => {
      const outcome = hooks.onPush
        ? await hooks.onPush(push, before)
        : { error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method}` } };
      if (push.method === 'roots/list' && 'result' in outcome) roots.holders.note(roots.key, session, roots.holder);
      return outcome;
    },
  };
}

/**
 * Before a call on a session whose server may hold roots another caller gave: the server is told
 * the roots changed (`notifications/roots/list_changed`), and the `roots/list` it asks in answer
 * becomes a round of this call (answered with the caller's roots, or the wrap's own for a caller
 * that declared none), all before the call is sent. Resolves with why the call must not be sent
 * (the roots could not be given), or `undefined`.
 */
async function refreshRoots(session: UpstreamSession, hooks: CallHooks): Promise<RpcOutcome | undefined> {
  const answered = await session.announce('notifications/roots/list_changed', hooks);
  if (hooks.signal?.aborted) return { error: { code: ErrorCode.InternalError, message: 'Request cancelled' } };
  for (const { method, outcome } of answered) {
    if (method !== 'roots/list' || !('error' in outcome)) continue;
    // The server still holds the roots another caller gave: the call is not sent.
    return {
      error: {
        code: ErrorCode.InternalError,
        message: `Internal error: the server holds roots another caller gave, and this caller's could not be given to it (${outcome.error.message})`,
      },
    };
  }
  return undefined;
}

/**
 * The upstream call of a request, closing over nothing else of it (a parked call keeps it).
 * `local`: the wrap's options when the server's `roots/list` is answered with the wrap's own roots.
 * `roots`: how the call keeps track of the roots the server holds, when its session declared them.
 */
function bindCall(
  session: UpstreamSession,
  method: string,
  params: JsonObject | undefined,
  reservation: { reserved: boolean },
  local?: ModernDispatchOptions,
  telemetry?: RequestTelemetry,
  roots?: RootsTracking,
): (hooks: CallHooks) => Promise<RpcOutcome> {
  return (given) => {
    const answering = local ? answeringRoots(given, local) : given;
    const hooks = roots ? trackingRoots(answering, session, roots) : answering;
    // Each run upstream is a span of its own, in the trace of the request that bound the call.
    const traced = telemetry?.upstream(method, params);
    const sent = traced ? traced.params : params;
    const send = (): Promise<RpcOutcome> => {
      // The session's reservation goes to the first run of the call (a re-run takes its chances).
      if (!reservation.reserved) return session.call(method, sent, hooks);
      reservation.reserved = false;
      return session.call(method, sent, hooks, true);
    };
    let outcome: Promise<RpcOutcome>;
    if (roots?.refresh && roots.holders.stale(session, roots.holder)) {
      // The session counts as taken by a call that may push from now on (its reservation, or one
      // made now), through the rounds that may come before the call is sent.
      if (reservation.reserved) reservation.reserved = false;
      else session.reserve();
      outcome = refreshRoots(session, hooks).then((refused) => {
        if (!refused) return session.call(method, sent, hooks, true);
        session.unreserve();
        return refused;
      });
    } else outcome = send();
    if (!traced) return outcome;
    return outcome.then((o) => {
      traced.end(o);
      return o;
    });
  };
}
