/**
 * `mcp-dual-era serve` in front of a legacy server: `wrapLegacyServer` on a stdio command
 * (`-- command args…`) or a legacy HTTP URL (`--upstream`), served on Streamable HTTP (default
 * http://127.0.0.1:3000/mcp) or, with `--stdio`, our own stdin/stdout, until SIGINT/SIGTERM.
 * Reading the arguments common to every mode is `serve.ts`'s; this file reads the rest and runs.
 */
import { MetaKey, MODERN_VERSIONS } from '../core/era.ts';
import { type Backend } from '../session/backend.ts';
import { Cancellation } from '../util/signals.ts';
import type { LegacyServerWrap, WrapStats } from '../wrap/legacyServer/wrapLegacyServer.ts';
import { listenerLimits } from './limits.ts';
import { listenFailure } from './options.ts';
import { Server as NetServer } from 'node:net';
import type { Fleet } from '../fleet/fleet.ts';
import { redactedUrl } from '../fleet/fleetKeys.ts';
import { type StateKey } from './stateKey.ts';
import type { Log } from './log.ts';
import { tracingHandler, tracingInput, tracingOutput } from './trace.ts';
import { legacyBackend, readSettings, wrapOptions, type LegacySettings, type ServeContext } from './serveLegacySettings.ts';

/**
 * Whether the server ever started: one that never does (it exits before it answers initialize, or
 * cannot be spawned) is said once, in its own words; no later request would fare better.
 */
class UpstreamWatch {
  #opened = false;
  /** Why the server never started. */
  failed: string | undefined;
  /** Why the last session failed to open. */
  reason: string | undefined;
  /** Resolves once the server is known never to have started. */
  readonly neverStarted: Promise<void>;

  constructor(wrap: LegacyServerWrap) {
    let resolve!: () => void;
    this.neverStarted = new Promise((r) => (resolve = r));
    wrap.events.on('upstream-opened', () => (this.#opened = true));
    wrap.events.on('upstream-failed', (e) => {
      this.reason = e.reason;
      if (!this.#opened && !e.started) this.failed ??= e.reason;
      if (this.failed !== undefined) resolve();
    });
  }
}

/** Runs the legacy mode of `serve`; resolves with the exit code once shut down. */
export async function serveLegacy(context: ServeContext): Promise<number> {
  const settings = readSettings(context.values);
  if (!settings.ok) return context.usage(settings.message);
  const fleet = settings.value.fleet ? await enterFleet(settings.value.fleet, settings.value.key, context.log) : undefined;
  if (fleet === null) return 1;
  const backend = legacyBackend(context, settings.value.spares);
  if (!settings.value.key.given && !fleet)
    context.log.info(
      'mcp-dual-era: no requestState key given (--state-key-env or --state-key-file): a random key is used, so retries cannot cross processes',
    );
  const { wrapLegacyServer } = await import('../wrap/legacyServer/wrapLegacyServer.ts');
  const wrap = wrapLegacyServer(wrapOptions(backend, settings.value, context, fleet));
  const watch = new UpstreamWatch(wrap);
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  // In a fleet, SIGTERM drains first: /readyz turns 503 and the directory says so, new work is
  // handed to a ready replica, and what is under way here (the retries of the calls parked here,
  // each released at its park timeout at the latest) is served to its end.
  let drained = false;
  const onDrained = () => {
    drained = true;
    stop();
  };
  process.once('SIGTERM', fleet ? () => void drain(wrap, fleet, context.log).then(onDrained, onSignal) : onSignal);
  if (context.values.stdio) return onStdio(wrap, backend, watch, stopped, context);
  try {
    return await onHttp(
      wrap,
      backend,
      watch,
      stopped,
      context,
      fleet && { fleet, advertise: settings.value.fleet?.advertise, drained: () => drained },
    );
  } finally {
    await fleet?.leave();
  }
}

async function drain(wrap: LegacyServerWrap, fleet: Fleet, log: Log): Promise<void> {
  const stats = wrap.stats();
  log.info(
    `mcp-dual-era: draining: ${stats.parked} parked call(s), ${stats.requests - stats.listens} call(s) in progress and ${stats.tasksOwed} task(s) to finish`,
  );
  await fleet.drain().catch(() => {});
  await wrap.drain();
}

/**
 * Joins the fleet (its keys first: the wrap seals with them); `null`, said on stderr, when its
 * Redis cannot be reached. Which key the fleet seals with is said in the log.
 */
async function enterFleet(settings: NonNullable<LegacySettings['fleet']>, key: StateKey, log: Log): Promise<Fleet | null> {
  const { joinFleet } = await import('../fleet/fleet.ts');
  try {
    const fleet = await joinFleet({
      redis: settings.redis,
      ...(settings.name ? { name: settings.name } : {}),
      ...(key.given ? { keyring: key.keyring } : {}),
    });
    const source = {
      given: 'the key given to this replica (every replica must be given the same)',
      created: "a key this replica wrote to the fleet's Redis, where every replica reads it",
      agreed: 'the key the fleet agreed on in its Redis',
    }[fleet.keySource];
    log.info(
      `mcp-dual-era: fleet ${settings.name ?? 'default'} at ${redactedUrl(settings.redis)}: this replica is ${fleet.id}; requestState is sealed with ${source}`,
    );
    return fleet;
  } catch (e) {
    log.error(`mcp-dual-era serve: cannot join the fleet at ${redactedUrl(settings.redis)}: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  }
}

/** Why the upstream may not be given callers' tokens meant for `resource`, if it may not. */
async function passthroughCheck(backend: Backend, resource: string): Promise<string | undefined> {
  const { ProtectedResource } = await import('../fronts/protectedResource.ts');
  return new ProtectedResource({ upstream: backend.url! }).refusal(resource);
}

function sayFailed(log: Log, backend: Backend, reason: string): void {
  log.error(`mcp-dual-era serve: the upstream server (${backend.describe}) failed: ${reason}`);
}

/**
 * On stdio the client's first request opens the first session (on the process started ahead); what
 * the server is, is said then. A server that never starts is said once, and we stop (exit 1) once
 * the client has its answer: every later request would only start it to fail again.
 */
async function onStdio(
  wrap: LegacyServerWrap,
  backend: Backend,
  watch: UpstreamWatch,
  stopped: Promise<void>,
  context: ServeContext,
): Promise<number> {
  const { log } = context;
  const trace = log.trace;
  const opened = (e: { initializeResult: Parameters<typeof describeInit>[0] }) => {
    wrap.events.off('upstream-opened', opened);
    log.info(`mcp-dual-era: upstream ${describeInit(e.initializeResult)}`);
  };
  wrap.events.on('upstream-opened', opened);
  const { serveStdio } = await import('../fronts/stdioFront.ts');
  const front = serveStdio(
    wrap,
    trace
      ? { input: tracingInput(process.stdin, 'client', 'us', trace), output: tracingOutput(process.stdout, 'us', 'client', trace) }
      : {},
  );
  log.info(`mcp-dual-era: serving ${backend.describe} on stdio (modern and legacy clients)`);
  await Promise.race([front.done, stopped, watch.neverStarted]);
  // After a failed start the client still gets the answer to what it asked.
  if (watch.failed === undefined) {
    await front.close();
    return 0;
  }
  sayFailed(context.log, backend, watch.failed);
  await front.finish();
  return 1;
}

/** How long a drained replica leaves the connections kept idle to it open: longer than the balancer's keep-alive timeout (4 s in the configuration we test with). */
const DRAIN_IDLE_MS = 5000;

/** How long a drained replica waits for its connections to end (requests passing through, the balancer's idle ones) before it exits. */
const DRAIN_PASSING_MS = 30_000;

/** On HTTP the port is taken first (a taken port is said before any server starts), then the upstream is started and described. */
async function onHttp(
  wrap: LegacyServerWrap,
  backend: Backend,
  watch: UpstreamWatch,
  stopped: Promise<void>,
  context: ServeContext,
  joined: { fleet: Fleet; advertise: string | undefined; drained: () => boolean } | undefined,
): Promise<number> {
  const { log, values, limits } = context;
  const trace = log.trace;
  const { serveNodeHttp } = await import('../transport/nodeHttp.ts');
  let server: Awaited<ReturnType<typeof serveNodeHttp>>;
  try {
    server = await serveNodeHttp(trace ? tracingHandler((request) => wrap.fetch(request), 'client', 'us', trace) : wrap, {
      ...(values.host ? { host: values.host } : {}),
      port: context.port,
      ...listenerLimits(limits),
    });
  } catch (e) {
    context.log.error(`mcp-dual-era serve: ${listenFailure(e, context.port, values.host)}`);
    await wrap.close();
    return 1;
  }
  if (joined) {
    // In the directory as soon as it listens: a call parked here at once is found by the others.
    const advertise = joined.advertise ?? server.origin;
    await joined.fleet.register(advertise);
    log.info(`mcp-dual-era: replica ${joined.fleet.id} registered in the fleet, reached at ${advertise}`);
  }
  const url = `${server.origin}${values.path ?? '/mcp'}`;
  if (backend.passesAuthorization) {
    // Callers' tokens go upstream only if it is the resource they were issued for: this endpoint.
    const refused = await passthroughCheck(backend, values['public-url'] ?? url);
    if (refused) {
      context.log.error(`mcp-dual-era serve: --pass-authorization refused: ${refused}`);
      await wrap.close();
      await server.close();
      return 2;
    }
  }
  const alive = setInterval(() => {}, 1000); // the pool's backoff timers do not keep a process alive
  const upstream = await describeUpstream(wrap).finally(() => clearInterval(alive));
  if (!upstream.ok) {
    sayFailed(context.log, backend, watch.reason ?? upstream.error);
    await wrap.close();
    await server.close();
    return 1;
  }
  log.info(`mcp-dual-era: upstream ${upstream.value}`);
  log.info(`mcp-dual-era: serving ${backend.describe} at ${url} (modern and legacy clients)`);
  if (values.metrics) log.info(`mcp-dual-era: metrics at ${server.origin}/metrics`);
  context.hooks.onListening?.(url);
  await stopped;
  if (joined?.drained()) {
    // Drained: no new connection is taken (the balancer's next one is refused before anything is
    // sent, and goes to another replica). The open ones are not cut: what passes through them
    // (work handed to another replica) ends, and the balancer closes those it keeps idle (a
    // request it sends on one meanwhile is served, and the connection closed after it): closing
    // an idle one here could cross a request the balancer is sending on it.
    // Still in the directory, as draining (no new work is sent here), until the process ends:
    // what passes through here goes on to other replicas as hops of a replica they list.
    log.info('mcp-dual-era: drained; no longer taking connections');
    await new Promise<void>((resolve) => {
      const bound = setTimeout(() => {
        server.server.getConnections((_e, n) =>
          log.info(`mcp-dual-era: ${n} connection(s) still open after ${DRAIN_PASSING_MS} ms; closing them`),
        );
        resolve();
      }, DRAIN_PASSING_MS);
      NetServer.prototype.close.call(server.server, () => {
        clearTimeout(bound);
        clearTimeout(idle);
        resolve();
      });
      // Streams that never end by themselves end now; their clients open them again elsewhere.
      wrap.release();
      // The balancer has closed the connections it kept idle by now (its keep-alive timeout is
      // shorter), and the other replicas send nothing new here (it is listed as draining): the
      // idle ones left are closed.
      const idle = setTimeout(() => server.server.closeIdleConnections(), DRAIN_IDLE_MS);
    });
  }
  log.info(shuttingDown(wrap.stats()));
  await wrap.close();
  await server.close();
  return 0;
}

/** What shutting down ends, for the log: each call in progress is answered that the server is shutting down. */
function shuttingDown(stats: WrapStats): string {
  const calls = stats.requests - stats.listens;
  const ended = [
    calls > 0 ? `${calls} call(s) in progress, each answered that the server is shutting down` : '',
    stats.parked > 0 ? `${stats.parked} call(s) waiting for their client's input (released)` : '',
    stats.listens > 0 ? `${stats.listens} listen stream(s)` : '',
    stats.legacySessions > 0 ? `${stats.legacySessions} legacy session(s)` : '',
  ].filter((s) => s !== '');
  return `mcp-dual-era: shutting down${ended.length > 0 ? `: ending ${ended.join('; ')}` : ''}`;
}

/** What the server said of itself at `initialize`, for the log. */
function describeInit(init: { serverInfo?: { name: string; version: string }; protocolVersion?: string } | undefined): string {
  const info = init?.serverInfo;
  return `${info ? `${info.name} ${info.version}` : 'a server'} speaks ${init?.protocolVersion ?? 'an unknown revision'} (legacy era); served to modern (${MODERN_VERSIONS.join(', ')}) and legacy clients`;
}

/** Opens a session upstream through the wrap itself and says what the server is. */
async function describeUpstream(wrap: LegacyServerWrap): Promise<{ ok: true; value: string } | { ok: false; error: string }> {
  const version = MODERN_VERSIONS[MODERN_VERSIONS.length - 1]!;
  // The command's own question: not a client's request (not in /metrics, not traced).
  const answer = await wrap.serveUnobserved(
    {
      jsonrpc: '2.0',
      id: 'startup',
      method: 'server/discover',
      params: { _meta: { [MetaKey.protocolVersion]: version, [MetaKey.clientCapabilities]: {} } },
    },
    { principal: 'anonymous', signal: new Cancellation(), notify: () => {} },
  );
  const message = answer?.message;
  if (!message) return { ok: false, error: 'no answer' };
  // A server that asks its callers to sign in answered: each caller's session opens with its own credentials.
  if (wrap.backend.passesAuthorization && (answer.status === 401 || answer.status === 403))
    return {
      ok: true,
      value: `at ${wrap.backend.describe}, which asks callers to sign in (HTTP ${answer.status}): each caller's credentials are passed to it`,
    };
  if ('error' in message) return { ok: false, error: message.error.message };
  return { ok: true, value: describeInit(wrap.pool.sessions()[0]?.session.initializeResult) };
}
