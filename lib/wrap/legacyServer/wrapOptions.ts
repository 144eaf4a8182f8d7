/**
 * What `wrapLegacyServer` is given and gives back: its options (the upstream, sessions, MRTR,
 * listens, roots, the HTTP edge, a fleet), the wrap it returns, its events and its stats.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Emitter } from '../../util/events.ts';
import type { ModernVersion } from '../../core/era.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import type { Implementation } from '../../core/primitives.ts';
import type { CacheDefaults } from '../../core/translate/context.ts';
import type { Backend, ConnectableServer } from '../../session/backend.ts';
import type { SessionPool } from '../../session/pool.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { InitializeResult } from '../../core/legacy/lifecycle.ts';
import type { HttpFrontOptions } from '../../fronts/httpRouter.ts';
import type { LegacySessionLimits } from '../../fronts/legacySessionTable.ts';
import type { InputBroker } from '../mrtr/broker.ts';
import type { Answer, ModernContext, Served, SessionSource } from '../../fronts/served.ts';
import type { Fleet } from '../../fleet/fleet.ts';
import type { MrtrOptions } from '../mrtr/mrtrOptions.ts';
import type { AccessEntry } from '../../observe/requestTelemetry.ts';
import type { ServeMetrics } from '../../observe/serveMetrics.ts';
import type { TaskLimits } from './toolTasks.ts';

/** Options of {@link wrapLegacyServer}: the upstream server and how it is served. */
export interface WrapLegacyServerOptions {
  /** The legacy server: a backend (`stdioBackend`, `httpBackend`, `inProcessBackend`), or an SDK server or factory. */
  readonly upstream: Backend | ConnectableServer | (() => ConnectableServer | Promise<ConnectableServer>);
  /** Server info on modern results; default: the upstream's own. */
  readonly serverInfo?: Implementation;
  /** Caching hints on cacheable results; default none (`ttlMs: 0`, `private`). */
  readonly cache?: CacheDefaults;
  readonly supportedVersions?: readonly ModernVersion[];
  /**
   * The operator's roots: every `roots/list` the server sends, outside a call or during one, is
   * answered with these, over whatever roots the caller has. With roots here, every upstream
   * session declares `roots: { listChanged: true }` (as it does for a client that declared `roots`).
   */
  readonly roots?: ReadonlyArray<{ uri: string; name?: string }>;
  /**
   * Upstream session pool bounds: sessions in all (default 64), per principal and capability set
   * (`perKey`, default 16: pushable calls each get a session of their own, so their pushes are
   * never ambiguous), per principal whatever its capability sets (`perPrincipal`, default 16), the
   * `reserve` kept for callers with no busy session (default 8: parked calls and listens together
   * never hold more than `max - reserve`), how long a request waits for a session before it is
   * refused (`waitMs`, default 10 s), the idle time before one is closed (`idleMs`, default 5
   * minutes), and how many upstream connections are opened at once, legacy sessions' included
   * (`opening`, default half the cores, at least 1: each may boot a server process; the others
   * wait their turn).
   */
  readonly sessions?: {
    readonly max?: number;
    readonly perKey?: number;
    readonly perPrincipal?: number;
    readonly reserve?: number;
    readonly waitMs?: number;
    readonly idleMs?: number;
    readonly opening?: number;
  };
  /**
   * Callers share upstream sessions, for a server that keeps nothing per caller: modern calls of
   * every caller with the same capability set go to the same few sessions (a call that may push
   * gets one alone while it runs, so its pushes reach only its caller; each caller's roots are
   * given to the server again before a call of its that may ask for them), instead of a session
   * (a server process, over stdio) per caller. What the server keeps per session (state set by
   * one caller's tools, its subscriptions, what it was told at `initialize`) is then seen by every
   * caller. Not with a backend that passes each caller's `Authorization` upstream (it would travel on
   * another caller's session). Default false: each principal has sessions of its own.
   */
  readonly shareSessions?: boolean;
  /** `subscriptions/listen` bounds: streams one principal may have open (default 16). */
  readonly listens?: { readonly perPrincipal?: number };
  /**
   * Bounds of the tasks kept for modern callers of a server that runs tools as tasks: running per
   * principal (default 16), kept in all (default 1024), and the longest one is kept (default an hour).
   * And `withoutExtension`: whether a caller without the tasks extension calling a tool the server
   * runs only as a task gets the tool's result, the task run to its end (`'run'`, default), or
   * `-32021` naming the extension (`'refuse'`).
   */
  readonly tasks?: TaskLimits;
  /**
   * Legacy sessions (clients that sent `initialize`, each with an upstream connection of its
   * own): in all (default 32), per principal (default 16), and the idle time after which one is
   * closed (default 15 minutes; its client then gets 404 and initializes again, as the spec says).
   */
  readonly legacySessions?: LegacySessionLimits;
  /** Deadline for one upstream call (default 5 minutes). */
  readonly requestTimeoutMs?: number;
  /** HTTP edge: path (default `/mcp`; `null` serves any path), limits, Origin/Host policy, principal. */
  readonly http?: HttpFrontOptions;
  /** MRTR for the server's own pushes: the suspend-mode options, or a broker of your own. */
  readonly mrtr?: MrtrOptions | InputBroker;
  /**
   * A replica of a fleet (`await joinFleet({ redis })`): requestState is sealed with the fleet's
   * keys and names this replica as the owner of a parked call, replay-mode states are used once
   * fleet-wide, retries and legacy-session requests owned by another replica are forwarded there,
   * and changes the upstream reports reach listens on every replica. Register the replica in the
   * directory (`fleet.register(url)`) once it listens; `serve --fleet` does all of this.
   */
  readonly fleet?: Fleet;
  /**
   * Answer `GET /healthz` (200, with the wrap's `stats()`, in a fleet the replica's id and its
   * forward counts, and `info()`'s members beside `status`) and `GET /readyz` (503 once the wrap
   * drains) on the HTTP front.
   */
  readonly health?: boolean | { readonly info: () => Readonly<Record<string, unknown>> };
  /**
   * Prometheus metrics (`wrap.metrics`), served at `GET /metrics` on the HTTP front: requests by
   * method and outcome, their duration, session waits, upstream sessions opened, closed and
   * failed, what is held now, the fleet's forwards. Off by default. Spans need no option: they
   * are recorded whenever an OpenTelemetry SDK is registered in the process.
   */
  readonly metrics?: boolean;
  /**
   * The access log: told of every modern request served, once it is answered (method, tool,
   * prompt or resource, era, outcome and error code, duration, trace id, a hash of the principal).
   * `serve --log-format json` writes it, one JSON line per request.
   */
  readonly accessLog?: (entry: AccessEntry) => void;
}

/** What a wrap holds right now: counts only, cheap to read (health checks, leak checks). */
export interface WrapStats {
  /** Modern requests being served (a listen counts while its stream is open). */
  readonly requests: number;
  /** Upstream sessions open. */
  readonly sessions: number;
  /** Upstream calls in flight. */
  readonly inFlight: number;
  /** Holds on upstream sessions (a listen or a parked call keeps its session). */
  readonly holds: number;
  /** Calls parked waiting for their MRTR retry (suspend mode with the built-in broker). */
  readonly parked: number;
  /** `subscriptions/listen` streams being served. */
  readonly listens: number;
  /** Legacy HTTP sessions open (clients that sent `initialize`). */
  readonly legacySessions: number;
  /** Tools, prompts and resources remembered as pushing or quiet (only ones the upstream lists). */
  readonly remembered: number;
  /** Tasks kept for modern callers of task-run tools (running, or ended and not yet expired). */
  readonly tasks: number;
  /** Tasks whose callers are still owed something: running, or ended with their end not read yet (what a drain waits for). */
  readonly tasksOwed: number;
}

/** Events of a legacy-server wrap: upstream sessions opened, closed or failed, pushes outside any call. */
export type WrapEvents = {
  /** An upstream session was opened for `key`; `initializeResult` is the server's answer to its `initialize`. */
  'upstream-opened': { key: SessionKey; initializeResult: InitializeResult };
  'upstream-closed': { key: SessionKey; reason: string };
  /**
   * An upstream session could not be opened (after the retries a transient failure gets):
   * `started` false when the server never started (it exited before it answered `initialize`, or
   * could not be spawned), which no retry will mend.
   */
  'upstream-failed': { reason: string; started: boolean };
  'unrelated-push': { method: string };
};

/** A running wrap; served on stdio by `serveStdio(wrap)`, on Node by `serveNodeHttp(wrap)`. */
export interface LegacyServerWrap extends Served {
  /** The Streamable HTTP endpoint as a Web `fetch` handler. */
  fetch(request: Request): Promise<Response>;
  /**
   * The same endpoint as a Node `http` request listener: POSTed JSON is read and answered on Node's
   * own objects (`serveNodeHttp(wrap)` uses it; custom `http.principal` functions get a body-less `Request`).
   */
  node(req: IncomingMessage, res: ServerResponse): void;
  /** Serves one modern request (any transport); `undefined` when the client left a listen. */
  serveModern(request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined>;
  /**
   * `request` served as `serveModern` serves it, but not counted or traced as a client's request:
   * for what the operator's own tooling asks (the command's start-up `server/discover`).
   */
  serveUnobserved(request: JsonRpcRequest, ctx: ModernContext): Promise<Answer | undefined>;
  readonly events: Emitter<WrapEvents>;
  readonly pool: SessionPool;
  /** Legacy HTTP sessions open now (clients that sent `initialize`). */
  readonly legacySessions: number;
  /** Where a legacy client's session is relayed: a connection of its own to the upstream. */
  readonly legacy: SessionSource;
  readonly backend: Backend;
  /** What the wrap holds right now. */
  stats(): WrapStats;
  /** The wrap's Prometheus metrics, with `metrics: true`. */
  readonly metrics: ServeMetrics | undefined;
  /**
   * Stops taking new work (`/readyz` turns 503): in a fleet the HTTP front hands new calls and
   * new legacy sessions to a ready replica; otherwise, and for listens, they get 503. A new
   * request on an open legacy session gets 404 (its client initializes again); retries that
   * continue a parked call and what is under way are still served.
   * Resolves when nothing taken is left: no call parked (resumed to its end, or released when its
   * retry did not come in time), none being served (open listens aside), no legacy session's
   * request in progress.
   */
  drain(): Promise<void>;
  /**
   * Ends the long-lived streams a drained replica still carries (listens, gracefully; legacy
   * sessions' GET streams, its own or passing through to another replica), so their clients open
   * them again on another replica; call it once this one no longer takes connections.
   */
  release(): void;
  /** Answers or cancels everything in flight, ends listens, closes every upstream session. Idempotent. */
  close(): Promise<void>;
}
