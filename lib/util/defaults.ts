/**
 * Every default bound and timeout of the library, by name, in one place: the wraps, the fronts,
 * the pool and the CLI's `--limit` table all read them from here. Plain numbers; what each bounds
 * is documented where it is an option.
 */

const MINUTE = 60_000;

/** The defaults. */
export const DEFAULTS = {
  /** Upstream sessions in all. */
  sessions: 64,
  /** Upstream sessions one principal may have (and per capability set). */
  sessionsPerCaller: 16,
  /** Upstream sessions kept for callers with none busy. */
  sessionReserve: 8,
  /** How long a request waits for an upstream session (or its turn to open one) before it is refused. */
  sessionWaitMs: 10_000,
  /** Idle time before an upstream session is closed. */
  sessionIdleMs: 5 * MINUTE,
  /** Attempts at opening an upstream session before its failure is final. */
  openAttempts: 3,
  /** Deadline for one upstream call, input rounds of a bridged call included. */
  requestTimeoutMs: 5 * MINUTE,
  /** How long a parked call waits for its MRTR retry before it is released. */
  parkTimeoutMs: 5 * MINUTE,
  /** Calls one principal may have parked. */
  parkedPerCaller: 16,
  /** Calls parked in all. */
  parked: 10_000,
  /** How long a round waits for more pushes of the same turn of a server that does not answer its barrier `ping`. */
  collectMs: 15,
  /** How long a round waits for a server that answers its barriers to answer one (the answer, not this, ends the round). */
  barrierWaitMs: 2000,
  /** How long a replay-mode `requestState` may be brought back. */
  replayStateTtlMs: 10 * MINUTE,
  /** Tasks one principal may have running at once on a wrapped legacy server. */
  tasksPerCaller: 16,
  /** Tasks a wrapped legacy server's wrap keeps in all (running, or finished and not expired). */
  tasks: 1024,
  /** The longest a task is kept, whatever ttl its server gave it. */
  taskKeptMs: 60 * MINUTE,
  /** How long a draining wrap waits for its tasks to end and their ends to be read by their callers. */
  taskDrainMs: 30_000,
  /** `subscriptions/listen` streams one principal may have open. */
  listensPerCaller: 16,
  /** Legacy client sessions in all. */
  legacySessions: 32,
  /** Legacy client sessions one principal may have. */
  legacySessionsPerCaller: 16,
  /** Idle time before a legacy client session is closed. */
  legacyIdleMs: 15 * MINUTE,
  /** How long a caller the gate has served stays known to it. */
  acquaintanceTtlMs: 15 * MINUTE,
  /** The largest accepted request body. */
  bodyBytes: 4 * 1024 * 1024,
  /** The largest accepted message from a peer. */
  messageBytes: 16 * 1024 * 1024,
  /** HTTP connections open at once. */
  connections: 512,
  /** How long a client may take to send its request headers. */
  headersTimeoutMs: 20_000,
  /** How long a client may take to send a whole request. */
  httpRequestTimeoutMs: 60_000,
  /** SSE keep-alive comment interval. */
  keepAliveMs: 15_000,
  /** After the input ends, how long calls in flight may take before they are cancelled. */
  drainGraceMs: 30_000,
  /** How long a push that names no call waits for the one call it can belong to before it is answered as unrelated. */
  pushAmbiguityMs: 10_000,
  /** How long an upstream may take to answer `initialize`. */
  initializeTimeoutMs: 30_000,
  /** How long a probe waits for its answer. */
  probeTimeoutMs: 3000,
  /**
   * How long a probe waits for a stdio server that has said nothing at all yet (fetched by npx, a
   * container booting): silence is not an era, so it waits for a first word this long.
   */
  probeStartMs: 60_000,
  /** How long a probe's verdict is cached. */
  verdictTtlMs: 10 * MINUTE,
} as const;
