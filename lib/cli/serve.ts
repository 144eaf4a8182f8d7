/**
 * `mcp-dual-era serve`: run `wrapLegacyServer` in front of a stdio server (`-- command args…`) or a
 * legacy HTTP server (`--upstream URL`), serving Streamable HTTP (default
 * http://127.0.0.1:3000/mcp) or, with `--stdio`, our own stdin/stdout. Shuts down on SIGINT/SIGTERM.
 * The arguments are read before anything heavy is loaded: with `--stdio` the server process is
 * started first and our stdin read at once, so a host's first request does not wait for our start.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MetaKey, MODERN_VERSIONS } from '../core/era.ts';
import { httpBackend, stdioBackend, type Backend } from '../session/backend.ts';
import { Cancellation } from '../signals.ts';
import { Keyring } from '../state/keyring.ts';
import { startAhead } from '../transport/spawnChild.ts';
import type { LegacyServerWrap } from '../wrap/legacyServer/wrapLegacyServer.ts';
import { listenFailure, readEnv, readHttpUrl, readPort, readRoots, serverProcess, splitAtDash, usageError } from './options.ts';
import { SERVE_OPTIONS, SERVE_USAGE } from './serveUsage.ts';
import { listenerLimits, readLimits } from './limits.ts';
import { stderrTrace, tracingFetch, tracingHandler, tracingInput, tracingOutput, upstreamTrace, type Trace } from './trace.ts';

/** What a program that runs `serve` itself (`npm start`) is told. */
export interface ServeHooks {
  /** The HTTP endpoint is listening (and its upstream answered) at `url`. */
  readonly onListening?: (url: string) => void;
}

/** Runs the serve command; resolves when it has shut down. */
export async function serve(argv: readonly string[], hooks: ServeHooks = {}): Promise<number> {
  const { own, command } = splitAtDash(argv);
  const usage = usageError('serve');
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      options: SERVE_OPTIONS,
      strict: true,
    });
  } catch (e) {
    return usage(`${e instanceof Error ? e.message : String(e)}\n\n${SERVE_USAGE}`);
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const say = (text: string) => values.quiet || process.stderr.write(`${text}\n`);
  const trace: Trace | undefined = values.verbose ? stderrTrace() : undefined;
  const port = readPort(values.port);
  if (!port.ok) return usage(port.message);
  const env = readEnv(values.env);
  if (!env.ok) return usage(env.message);
  if (values.upstream !== undefined) {
    const url = readHttpUrl(values.upstream, '--upstream');
    if (!url.ok) return usage(url.message);
    if (command.length > 0) return usage('name either --upstream <url> or a command after --, not both');
  } else if (command.length === 0) {
    return usage(`name the upstream server (-- <command> or --upstream <url>)\n\n${SERVE_USAGE}`);
  }
  const bodyLimit = values['body-limit'] === undefined ? undefined : Number(values['body-limit']);
  if (bodyLimit !== undefined && (!Number.isInteger(bodyLimit) || bodyLimit < 1)) return usage(`--body-limit must be a whole number of bytes, not ${values['body-limit']}`);
  const read = readLimits([...(bodyLimit !== undefined ? [`body-bytes=${bodyLimit}`] : []), ...(values.limit ?? [])], values.modern ? { modern: true } : {});
  if (!read.ok) return usage(read.message);
  const limits = read.value;
  if (values.modern) {
    const { serveModern } = await import('./serveModern.ts');
    return serveModern(command, {
      say,
      env: env.value,
      envPolicy: values,
      limits,
      port: port.value,
      ...(trace ? { trace } : {}),
      ...(values.stdio ? { stdio: true } : {}),
      ...(values.host ? { host: values.host } : {}),
      ...(values.path ? { path: values.path } : {}),
      ...(values.upstream ? { upstream: values.upstream } : {}),
      ...(values.cwd ? { cwd: values.cwd } : {}),
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    });
  }
  if (values.mrtr !== undefined && values.mrtr !== 'suspend' && values.mrtr !== 'replay') return usage(`--mrtr is suspend or replay, not ${values.mrtr}`);
  const ttl = values['cache-ttl'] === undefined ? 0 : Number(values['cache-ttl']);
  if (!Number.isInteger(ttl) || ttl < 0) return usage(`--cache-ttl must be a whole number of milliseconds, not ${values['cache-ttl']}`);
  const scope = values['cache-scope'] ?? 'private';
  if (scope !== 'private' && scope !== 'public') return usage(`--cache-scope is private or public, not ${scope}`);
  const spares = values.spares === undefined ? (values.stdio ? 0 : 1) : Number(values.spares);
  if (!Number.isInteger(spares) || spares < 0 || spares > 16) return usage(`--spares must be a whole number from 0 to 16, not ${values.spares}`);
  const roots = readRoots(values.roots);
  if (!roots.ok) return usage(roots.message);
  let keyText: string | undefined;
  if (values['state-key-env']) {
    keyText = process.env[values['state-key-env']];
    if (!keyText) return usage(`the environment variable ${values['state-key-env']} (--state-key-env) is not set`);
  } else if (values['state-key-file']) {
    try {
      keyText = readFileSync(values['state-key-file'], 'utf8').trim();
    } catch (e) {
      return usage(`cannot read --state-key-file ${values['state-key-file']}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  let keyring: Keyring;
  if (keyText) {
    try {
      keyring = new Keyring([Keyring.parse('k1', keyText)]);
    } catch (e) {
      return usage(`the requestState key is not usable: ${e instanceof Error ? e.message : String(e)}`);
    }
  } else {
    keyring = new Keyring();
  }

  // Everything is known to be usable: over stdio the server boots now, while the rest loads.
  let backend: Backend;
  if (values.upstream) backend = httpBackend({ url: values.upstream, maxMessageBytes: limits['message-bytes'], ...(trace ? { fetch: tracingFetch('us', 'server', trace) } : {}) });
  else {
    const child = { ...serverProcess(command, env.value, values.cwd, values), maxMessageBytes: limits['message-bytes'], stderr: 'inherit' as const, shutdownGraceMs: 500, ...(trace ? { trace: upstreamTrace(trace) } : {}) };
    // Over stdio the client waits for our first answer: its server boots now (the command line,
    // lib/cli/main.ts, started it already), and the first session takes the process over.
    if (values.stdio) startAhead(child);
    backend = stdioBackend(child, { spares });
  }
  if (!keyText) say('mcp-dual-era: no requestState key given (--state-key-env or --state-key-file): a random key is used, so retries cannot cross processes');
  const { wrapLegacyServer } = await import('../wrap/legacyServer/wrapLegacyServer.ts');
  const wrap = wrapLegacyServer({
    upstream: backend,
    mrtr: { keyring, replay: values.mrtr === 'replay', maxParkedPerPrincipal: limits['parked-per-caller'], parkTimeoutMs: limits['park-timeout-ms'] },
    roots: roots.value,
    ...(ttl > 0 || scope !== 'private' ? { cache: { default: { ttlMs: ttl, cacheScope: scope } } } : {}),
    sessions: {
      max: limits.sessions,
      perPrincipal: limits['sessions-per-caller'],
      perKey: limits['sessions-per-capabilities'],
      reserve: limits.reserve,
      waitMs: limits['session-wait-ms'],
      idleMs: limits['session-idle-ms'],
      opening: limits['sessions-opening'],
    },
    listens: { perPrincipal: limits['listens-per-caller'] },
    legacySessions: { max: limits['legacy-sessions'], perPrincipal: limits['legacy-sessions-per-caller'], idleMs: limits['legacy-idle-ms'] },
    requestTimeoutMs: limits['request-timeout-ms'],
    http: {
      ...(values.path ? { path: values.path } : {}),
      maxBodyBytes: limits['body-bytes'],
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    },
  });
  // A server that never starts (it exits before it answers initialize, or cannot be spawned) is
  // said once, in its own words: no later request would fare better.
  let opened = false;
  /** Why the server never started; `reason`, why the last session failed to open. */
  let failed: string | undefined;
  let reason: string | undefined;
  wrap.events.on('upstream-opened', () => (opened = true));
  wrap.events.on('upstream-failed', (e) => {
    reason = e.reason;
    if (!opened && !e.started) failed ??= e.reason;
  });
  const sayFailed = (reason: string) => process.stderr.write(`mcp-dual-era serve: the upstream server (${backend.describe}) failed: ${reason}\n`);
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  if (values.stdio) {
    // The client's first request opens the first session (on the process started above); what the
    // server is, is said then. A server that never starts is said once, and we stop (exit 1) once
    // the client has its answer: every later request would only start it to fail again.
    const failedToStart = new Promise<void>((resolve) => wrap.events.on('upstream-failed', () => failed !== undefined && resolve()));
    const opened = (e: { initializeResult: Parameters<typeof describeInit>[0] }) => {
      wrap.events.off('upstream-opened', opened);
      say(`mcp-dual-era: upstream ${describeInit(e.initializeResult)}`);
    };
    wrap.events.on('upstream-opened', opened);
    const { serveStdio } = await import('../fronts/stdioFront.ts');
    const front = serveStdio(wrap, trace ? { input: tracingInput(process.stdin, 'client', 'us', trace), output: tracingOutput(process.stdout, 'us', 'client', trace) } : {});
    say(`mcp-dual-era: serving ${backend.describe} on stdio (modern and legacy clients)`);
    await Promise.race([front.done, stopped, failedToStart]);
    // After a failed start the client still gets the answer to what it asked.
    if (failed === undefined) {
      await front.close();
      return 0;
    }
    sayFailed(failed);
    await front.finish();
    return 1;
  }

  // The port first: a port that is taken is said before any upstream process is started.
  const { serveNodeHttp } = await import('../transport/nodeHttp.ts');
  let server: Awaited<ReturnType<typeof serveNodeHttp>>;
  try {
    server = await serveNodeHttp(trace ? tracingHandler((request) => wrap.fetch(request), 'client', 'us', trace) : wrap, { ...(values.host ? { host: values.host } : {}), port: port.value, ...listenerLimits(limits) });
  } catch (e) {
    process.stderr.write(`mcp-dual-era serve: ${listenFailure(e, port.value, values.host)}\n`);
    await wrap.close();
    return 1;
  }
  // Start the upstream now, so a server that cannot start is reported here, not to the first client.
  const alive = setInterval(() => {}, 1000); // the pool's backoff timers do not keep a process alive
  const upstream = await describeUpstream(wrap).finally(() => clearInterval(alive));
  if (!upstream.ok) {
    sayFailed(reason ?? upstream.error);
    await wrap.close();
    await server.close();
    return 1;
  }
  say(`mcp-dual-era: upstream ${upstream.value}`);
  say(`mcp-dual-era: serving ${backend.describe} at ${server.origin}${values.path ?? '/mcp'} (modern and legacy clients)`);
  hooks.onListening?.(`${server.origin}${values.path ?? '/mcp'}`);
  await stopped;
  say('mcp-dual-era: shutting down');
  await wrap.close();
  await server.close();
  return 0;
}

/** What the server said of itself at `initialize`, for the log. */
function describeInit(init: { serverInfo?: { name: string; version: string }; protocolVersion?: string } | undefined): string {
  const info = init?.serverInfo;
  return `${info ? `${info.name} ${info.version}` : 'a server'} speaks ${init?.protocolVersion ?? 'an unknown revision'} (legacy era); served to modern (${MODERN_VERSIONS.join(', ')}) and legacy clients`;
}

/** Opens a session upstream through the wrap itself and says what the server is. */
async function describeUpstream(wrap: LegacyServerWrap): Promise<{ ok: true; value: string } | { ok: false; error: string }> {
  const version = MODERN_VERSIONS[MODERN_VERSIONS.length - 1]!;
  const answer = await wrap.serveModern(
    { jsonrpc: '2.0', id: 'startup', method: 'server/discover', params: { _meta: { [MetaKey.protocolVersion]: version, [MetaKey.clientCapabilities]: {} } } },
    { principal: 'anonymous', signal: new Cancellation(), notify: () => {} },
  );
  const message = answer?.message;
  if (!message) return { ok: false, error: 'no answer' };
  if ('error' in message) return { ok: false, error: message.error.message };
  return { ok: true, value: describeInit(wrap.pool.sessions()[0]?.session.initializeResult) };
}
