/**
 * The upstream call of one modern request, bound to its session: the server's `roots/list`
 * answered with the wrap's own roots when it has some, the roots each session holds kept track
 * of (and given again before a call whose caller may not have given them), each run a span of its
 * own, and the session's reservation spent on the first run.
 */
import { ErrorCode } from '../../core/errors.ts';
import type { RequestId } from '../../core/jsonrpc.ts';
import type { JsonObject } from '../../core/primitives.ts';
import type { RequestTelemetry } from '../../observe/requestTelemetry.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';
import type { RootsHolders } from './rootsHolders.ts';

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

/** How a call keeps track of the roots the server holds (see `ModernDispatchOptions.holders`). */
export interface RootsTracking {
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
export function bindCall(
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
    // Each run upstream is a span of its own, in the trace of the request that bound the call (none
    // when the request's span is not recorded: its outcome is then handed back as it comes).
    const traced = telemetry?.span.recording ? telemetry.upstream(method, params) : undefined;
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
