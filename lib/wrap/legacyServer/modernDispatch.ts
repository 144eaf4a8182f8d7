/**
 * Serves one modern (2026-07-28) request against a legacy server: checks the envelope, picks the
 * upstream session for the caller's principal and declared capabilities, forwards the request with
 * its `_meta` stripped, streams the request's own progress and logs (at or above its `logLevel`),
 * and translates the answer. Pushes the server makes during the call go to the `inputs` broker.
 * A call to a tool the server runs as a task becomes a task of the caller's, or runs as one to its
 * end for a caller without the tasks extension, and `tasks/*` are served from the wrap's tasks
 * (`taskCalls.ts`). The request's envelope and answers are `modernRequest.ts`'s.
 * Transport-neutral: the HTTP and stdio fronts call it.
 */
import { resultResponse, type JsonRpcRequest } from '../../core/jsonrpc.ts';
import { ErrorCode, internalError } from '../../core/errors.ts';
import { limitRefusal } from '../../util/limits.ts';
import type { JsonObject } from '../../core/primitives.ts';
import { requestToLegacy, type Envelope } from '../../core/translate/envelope.ts';
import { initializeResultToDiscover } from '../../core/translate/discover.ts';
import type { InitializeResult } from '../../core/legacy/lifecycle.ts';
import { verifyParamHeaders } from '../../core/translate/headers.ts';
import { isMrtrMethod } from '../../core/modern/methods.ts';
import { streamHooks, targetOf } from '../mrtr/broker.ts';
import { scope } from '../../util/signals.ts';
import type { AcquireOptions } from '../../session/poolOptions.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import { errorAnswer, type Answer, type ModernContext } from '../../fronts/served.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import { performance } from 'node:perf_hooks';
import { rootsHolderOf, WRAP_ROOTS } from './rootsHolders.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';
import { callerKey, ownRoots } from './callerKeys.ts';
import { bindCall } from './upstreamCall.ts';
import { finisher, refusedAnswer, unavailable, type PendingRequest } from './modernRequest.ts';
import { extensionRefusal, runToEnd, serveTaskMethod, startRefusal, taskRouteOf, withTask } from './taskCalls.ts';
import { runsToolTasks } from '../../core/translate/capabilities.ts';

/**
 * Serves a modern request that is not `subscriptions/listen`, its `envelope` read (`envelopeOf`). A request whose session is at hand
 * (and, for `tools/call` over HTTP, whose tool is known) is sent upstream without waiting for
 * anything; one that must wait for a session or for the server's tool list takes the slower path.
 */
export function serveModern(
  request: JsonRpcRequest,
  ctx: ModernContext,
  envelope: Envelope,
  options: ModernDispatchOptions,
): Promise<Answer> {
  if (request.method === 'server/discover') return discover(request, envelope, ctx, options);
  const taskAnswer = serveTaskMethod(request, ctx, envelope, options);
  if (taskAnswer) return taskAnswer;
  const legacy = requestToLegacy(request, { envelope });
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
  if (r.pushable && up.envelope.retry !== undefined) {
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
  const { request, ctx, reservation } = r;
  if (inputSchema !== undefined && ctx.headers) {
    const checked = verifyParamHeaders(request, ctx.headers, { inputSchema });
    if (!checked.ok) {
      if (reservation.reserved) session.unreserve();
      return Promise.resolve(errorAnswer(request.id, { ...checked.error, status: 400 }));
    }
  }
  if (r.options.tasks && request.method === 'tools/call' && runsToolTasks(session.initializeResult?.capabilities))
    return taskRouteOf(r, session).then((route) => {
      const refused =
        route === 'refuse'
          ? extensionRefusal(request, `tools/call of ${String(r.up.request.params?.['name'])}, which the server runs only as a task,`)
          : route === 'start'
            ? startRefusal(r)
            : undefined;
      if (!refused) return send(r, session, route === 'refuse' ? 'plain' : route);
      // Answered without sending it: the session the call was given is given back.
      if (reservation.reserved) {
        reservation.reserved = false;
        session.unreserve();
      }
      return refused;
    });
  return send(r, session, 'plain');
}

/**
 * Sends the call upstream: as it is (`plain`), as a task the caller polls (`start`: the task the
 * server creates is the caller's, `finisher`), or as a task followed to its end (`task`, see `runToEnd`).
 */
function send(r: PendingRequest, session: UpstreamSession, as: 'plain' | 'start' | 'task'): Promise<Answer> {
  const { request, ctx, options, up, reservation } = r;
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
  const params = as === 'plain' ? up.request.params : withTask(up.request.params);
  const bound = bindCall(session, method, params, reservation, local ? options : undefined, ctx.telemetry, roots);
  const call = as === 'task' ? runToEnd(session, bound) : bound;
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
