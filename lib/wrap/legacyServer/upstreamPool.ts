/**
 * The upstream side of `wrapLegacyServer`: the backend its `upstream` option names, and the pool of
 * sessions modern calls are served through, with what the pool does with what the server says
 * outside a call (pushes no call is waiting for, notifications) and whom it tells of its sessions'
 * lives (the wrap's events and metrics, what the server said of itself at `initialize`, and whether
 * it runs tools as tasks).
 */
import { runsToolTasks } from '../../core/translate/capabilities.ts';
import type { ToolTasks } from './toolTasks.ts';
import type { Emitter } from '../../util/events.ts';
import { AdapterError, ErrorCode } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import { canonicalJson } from '../../core/primitives.ts';
import type { InitializeResult } from '../../core/legacy/lifecycle.ts';
import { inProcessBackend, type Backend, type ConnectableServer } from '../../session/backend.ts';
import { SessionPool } from '../../session/pool.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { RpcOutcome } from '../../session/callHooks.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { Openings } from '../../session/gate.ts';
import type { ServeMetrics } from '../../observe/serveMetrics.ts';
import type { ListenHub } from './listen.ts';
import { WRAP_ROOTS, type RootsHolders } from './rootsHolders.ts';
import type { ToolIndex } from './toolIndex.ts';
import type { Catalog } from './catalog.ts';
import { SHARED_PRINCIPAL } from './callerKeys.ts';
import type { WrapEvents, WrapLegacyServerOptions } from './wrapOptions.ts';

/** The backend the wrap's `upstream` option names: a backend as it is, an in-process server wrapped as one. */
export function toBackend(upstream: WrapLegacyServerOptions['upstream']): Backend {
  if (
    typeof upstream === 'object' &&
    upstream !== null &&
    'kind' in upstream &&
    'connect' in upstream &&
    typeof (upstream as Backend).describe === 'string'
  )
    return upstream as Backend;
  return inProcessBackend(upstream as ConnectableServer);
}

/** Most capability sets whose server description is kept for `server/discover`. */
const DESCRIBED = 64;

/**
 * What the server said at `initialize` to a session of each capability set and client info, the
 * newest kept: `server/discover` needs no session of the caller's own. Nothing here varies the
 * server's answer by caller (every session of a backend reaches the same server as the same client).
 */
export class Described {
  readonly #results = new Map<string, InitializeResult>();

  static #text(key: SessionKey): string {
    return `${key.capabilitiesText ?? canonicalJson(key.capabilities)}\u0000${key.clientInfo.name}\u0000${key.clientInfo.version}`;
  }

  note(key: SessionKey, result: InitializeResult): void {
    const text = Described.#text(key);
    this.#results.delete(text);
    this.#results.set(text, result);
    if (this.#results.size > DESCRIBED) this.#results.delete(this.#results.keys().next().value!);
  }

  get(key: SessionKey): InitializeResult | undefined {
    return this.#results.get(Described.#text(key));
  }
}

/** Whom the pool tells what the server says outside a call, and of its sessions opened, closed or failed. */
export interface PoolListeners {
  readonly events: Emitter<WrapEvents>;
  readonly metrics: ServeMetrics | undefined;
  /** Forgets a session's tools when they change. */
  readonly tools: ToolIndex;
  /** Learns which lists changed. */
  readonly catalog: Catalog;
  /** Hands every notification on to the listens it concerns. */
  readonly hub: ListenHub;
  readonly holders: RootsHolders;
  readonly described: Described;
  /** Learns that the server runs tools as tasks. */
  readonly tasks: ToolTasks;
}

/** The answer to a push the server makes outside any call: no client is there to ask. */
function answerUnrelated(
  options: WrapLegacyServerOptions,
  { events, holders }: PoolListeners,
): (key: SessionKey, push: JsonRpcRequest, session: UpstreamSession) => Promise<RpcOutcome> {
  return async (key, push, session) => {
    events.emit('unrelated-push', { method: push.method });
    switch (push.method) {
      case 'roots/list':
        // The client's own roots come with its calls: outside one they are not known, and an empty
        // list would be taken for the truth (a server that caches it would never ask in a call).
        if (!options.roots?.length && key.capabilities['roots'] !== undefined)
          return {
            error: {
              code: ErrorCode.InternalError,
              message: "The client's roots are known only during a request: ask for them while serving one",
            },
          };
        if (key.capabilities['roots'] !== undefined) holders.note(key, session, WRAP_ROOTS);
        return { result: { roots: (options.roots ?? []).map((r) => ({ ...r })) } };
      case 'elicitation/create':
        // Nobody saw it: `decline` would say the user refused.
        return { result: { action: 'cancel' } };
      default:
        return {
          error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${push.method} cannot reach a client outside a request` },
        };
    }
  };
}

/** The wrap's pool of upstream sessions on `backend`, and the turns in which they (and legacy sessions' pipes) are opened. */
export function openPool(
  backend: Backend,
  options: WrapLegacyServerOptions,
  listeners: PoolListeners,
): { openings: Openings; pool: SessionPool } {
  const { events, metrics, tools, catalog, hub, described, tasks } = listeners;
  const openings = new Openings(backend, options.sessions?.opening !== undefined ? { size: options.sessions.opening } : {});
  const pool = new SessionPool(backend, {
    opening: openings,
    ...(options.sessions?.max !== undefined ? { maxSessions: options.sessions.max } : {}),
    ...(options.sessions?.idleMs !== undefined ? { idleMs: options.sessions.idleMs } : {}),
    ...(options.sessions?.perKey !== undefined ? { maxPerKey: options.sessions.perKey } : {}),
    ...(options.sessions?.perPrincipal !== undefined ? { maxPerPrincipal: options.sessions.perPrincipal } : {}),
    ...(options.sessions?.reserve !== undefined ? { reserve: options.sessions.reserve } : {}),
    ...(options.sessions?.waitMs !== undefined ? { waitMs: options.sessions.waitMs } : {}),
    ...(options.shareSessions ? { sharedPrincipal: SHARED_PRINCIPAL } : {}),
    onUnrelatedPush: answerUnrelated(options, listeners),
    // A server that asks for roots once, right after `initialized` (fastmcp), asks while the
    // session is opened for a client that declared roots: the client's next call answers it.
    // With roots of the wrap's own, those answer at once.
    awaitsCall: (key, push) => push.method === 'roots/list' && key.capabilities['roots'] !== undefined && !options.roots?.length,
    onNotification: (key, session, method, params) => {
      if (method === 'notifications/tools/list_changed') tools.invalidate(session);
      if (method === 'notifications/tasks/status') tasks.heard(session, params);
      if (method.endsWith('/list_changed')) catalog.changed(`${method.slice('notifications/'.length, -'/list_changed'.length)}/list`);
      hub.dispatch(key, session, method, params);
    },
    onSessionClosed: (key, reason) => {
      metrics?.upstreamClosed();
      events.emit('upstream-closed', { key, reason });
    },
    onSessionOpened: (key, session) => {
      metrics?.upstreamOpened();
      described.note(key, session.initializeResult!);
      if (runsToolTasks(session.initializeResult?.capabilities)) tasks.offer();
      events.emit('upstream-opened', { key, initializeResult: session.initializeResult! });
    },
    onOpenFailed: (_key, error) => {
      const started = !(error instanceof AdapterError && error.code === 'upstream-exited');
      metrics?.upstreamFailed(started);
      events.emit('upstream-failed', { reason: error instanceof Error ? error.message : String(error), started });
    },
  });
  return { openings, pool };
}
