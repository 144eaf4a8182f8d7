/**
 * `mcp-dual-era serve`: run `wrapLegacyServer` in front of a stdio server (`-- command args…`) or a
 * legacy HTTP server (`--upstream URL`), serving Streamable HTTP (default
 * http://127.0.0.1:3000/mcp) or, with `--stdio`, our own stdin/stdout. Shuts down on SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MetaKey, MODERN_VERSIONS } from '../core/era.ts';
import { httpBackend, stdioBackend, type Backend } from '../session/backend.ts';
import { Cancellation } from '../signals.ts';
import { Keyring } from '../state/keyring.ts';
import { serveNodeHttp } from '../transport/nodeHttp.ts';
import { serveStdio } from '../wrap/stdioFront.ts';
import { wrapLegacyServer } from '../wrap/wrapLegacyServer.ts';
import { readEnv, readHttpUrl, readRoots, splitAtDash, usageError } from './options.ts';
import { serveModern } from './serveModern.ts';
import { stderrTrace, tracingFetch, tracingHandler, tracingInput, tracingOutput, upstreamTrace, type Trace } from './trace.ts';

export const SERVE_USAGE = `Usage:
  mcp-dual-era serve [options] -- <command> [args…]    front a stdio server
  mcp-dual-era serve [options] --upstream <url>         front a legacy HTTP server
  mcp-dual-era serve --modern [options] -- <command>    front a modern-only server for legacy clients
                                                        (or --upstream <url>)

Options:
  --stdio                 serve on our stdin/stdout instead of HTTP
  --host <host>           HTTP bind address (default 127.0.0.1)
  --port <port>           HTTP port (default 3000)
  --path <path>           HTTP endpoint path (default /mcp)
  --allowed-origin <o>    accept this Origin (repeatable; default loopback origins)
  --allowed-host <h>      accept this Host (repeatable; default loopback names)
  --mrtr <mode>           suspend (default: park the call between rounds) or replay (stateless:
                          re-run the call each round; see the README for the caveat)
  --state-key-env <VAR>   requestState key (32 bytes, base64 or hex) from this environment variable
  --state-key-file <f>    requestState key from this file (without either: a random key per
                          process, so retries cannot cross processes or restarts)
  --roots <uri>           a root to answer the server's roots/list outside any call (repeatable)
  --cache-ttl <ms>        ttlMs on cacheable results (default 0: no caching)
  --cache-scope <s>       private (default) or public
  --body-limit <bytes>    largest accepted request body (default 4194304)
  --spares <n>            upstream processes kept started ahead of need, so a new session does
                          not wait for one to boot (default 1 over HTTP, 0 with --stdio)
  --cwd <dir>             working directory of the upstream command
  --env KEY=VALUE         environment of the upstream command (repeatable)
  --verbose               every message on both sides, in both eras, on stderr
  --quiet                 no messages on stderr
  -h, --help              print this help

Exit codes: 0 stopped by SIGINT/SIGTERM or end of input, 1 the upstream or the port failed, 2 usage.
`;

/** Runs the serve command; resolves when it has shut down. */
export async function serve(argv: readonly string[]): Promise<number> {
  const { own, command } = splitAtDash(argv);
  const { values } = parseArgs({
    args: own,
    options: {
      stdio: { type: 'boolean' },
      modern: { type: 'boolean' },
      host: { type: 'string' },
      port: { type: 'string' },
      path: { type: 'string' },
      upstream: { type: 'string' },
      'allowed-origin': { type: 'string', multiple: true },
      'allowed-host': { type: 'string', multiple: true },
      'state-key-env': { type: 'string' },
      'state-key-file': { type: 'string' },
      roots: { type: 'string', multiple: true },
      'cache-ttl': { type: 'string' },
      'cache-scope': { type: 'string' },
      'body-limit': { type: 'string' },
      spares: { type: 'string' },
      mrtr: { type: 'string' },
      cwd: { type: 'string' },
      env: { type: 'string', multiple: true },
      quiet: { type: 'boolean' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  const say = (text: string) => values.quiet || process.stderr.write(`${text}\n`);
  const trace: Trace | undefined = values.verbose ? stderrTrace() : undefined;
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const usage = usageError('serve');
  if (values.modern) {
    const env = readEnv(values.env);
    if (!env.ok) return usage(env.message);
    return serveModern(command, {
      say,
      env: env.value,
      ...(trace ? { trace } : {}),
      ...(values.stdio ? { stdio: true } : {}),
      ...(values.host ? { host: values.host } : {}),
      ...(values.port ? { port: values.port } : {}),
      ...(values.path ? { path: values.path } : {}),
      ...(values.upstream ? { upstream: values.upstream } : {}),
      ...(values.cwd ? { cwd: values.cwd } : {}),
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    });
  }
  let backend: Backend;
  if (values.upstream) {
    const url = readHttpUrl(values.upstream, '--upstream');
    if (!url.ok) return usage(url.message);
    backend = httpBackend({ url: values.upstream, ...(trace ? { fetch: tracingFetch('us', 'server', trace) } : {}) });
  }
  else if (command.length > 0) {
    const spares = values.spares === undefined ? (values.stdio ? 0 : 1) : Number(values.spares);
    if (!Number.isInteger(spares) || spares < 0 || spares > 16) return usage(`--spares must be a whole number from 0 to 16, not ${values.spares}`);
    const env = readEnv(values.env);
    if (!env.ok) return usage(env.message);
    backend = stdioBackend({ command: command[0]!, args: command.slice(1), env: env.value, ...(values.cwd ? { cwd: values.cwd } : {}), stderr: 'inherit', shutdownGraceMs: 500, ...(trace ? { trace: upstreamTrace(trace) } : {}) }, { spares });
  } else {
    process.stderr.write(`mcp-dual-era serve: name the upstream server (-- <command> or --upstream <url>)\n\n${SERVE_USAGE}`);
    return 2;
  }
  if (values.mrtr !== undefined && values.mrtr !== 'suspend' && values.mrtr !== 'replay') return usage(`--mrtr is suspend or replay, not ${values.mrtr}`);
  const port = values.port === undefined ? 3000 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return usage(`--port must be a port number, not ${values.port}`);
  const ttl = values['cache-ttl'] === undefined ? 0 : Number(values['cache-ttl']);
  if (!Number.isInteger(ttl) || ttl < 0) return usage(`--cache-ttl must be a whole number of milliseconds, not ${values['cache-ttl']}`);
  const scope = values['cache-scope'] ?? 'private';
  if (scope !== 'private' && scope !== 'public') return usage(`--cache-scope is private or public, not ${scope}`);
  const bodyLimit = values['body-limit'] === undefined ? undefined : Number(values['body-limit']);
  if (bodyLimit !== undefined && (!Number.isInteger(bodyLimit) || bodyLimit < 1)) return usage(`--body-limit must be a whole number of bytes, not ${values['body-limit']}`);
  const roots = readRoots(values.roots);
  if (!roots.ok) return usage(roots.message);
  let keyring: Keyring;
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
  if (keyText) {
    try {
      keyring = new Keyring([Keyring.parse('k1', keyText)]);
    } catch (e) {
      return usage(`the requestState key is not usable: ${e instanceof Error ? e.message : String(e)}`);
    }
  } else {
    keyring = new Keyring();
    say('mcp-dual-era: no requestState key given (--state-key-env or --state-key-file): a random key is used, so retries cannot cross processes');
  }
  const wrap = wrapLegacyServer({
    upstream: backend,
    mrtr: { keyring, replay: values.mrtr === 'replay' },
    roots: roots.value,
    ...(ttl > 0 || scope !== 'private' ? { cache: { default: { ttlMs: ttl, cacheScope: scope } } } : {}),
    http: {
      ...(values.path ? { path: values.path } : {}),
      ...(bodyLimit !== undefined ? { maxBodyBytes: bodyLimit } : {}),
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    },
  });
  // Start the upstream now, so a server that cannot start is reported here, not to the first client.
  const alive = setInterval(() => {}, 1000); // the pool's backoff timers do not keep a process alive
  const upstream = await describeUpstream(wrap).finally(() => clearInterval(alive));
  if (!upstream.ok) {
    process.stderr.write(`mcp-dual-era serve: the upstream server (${backend.describe}) failed: ${upstream.error}\n`);
    await wrap.close();
    return 1;
  }
  say(`mcp-dual-era: upstream ${upstream.value}`);
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  if (values.stdio) {
    const front = serveStdio(wrap, trace ? { input: tracingInput(process.stdin, 'client', 'us', trace), output: tracingOutput(process.stdout, 'us', 'client', trace) } : {});
    say(`mcp-dual-era: serving ${backend.describe} on stdio (modern and legacy clients)`);
    await Promise.race([front.done, stopped]);
    await front.close();
    return 0;
  }
  let server: Awaited<ReturnType<typeof serveNodeHttp>>;
  try {
    server = await serveNodeHttp(trace ? tracingHandler((request) => wrap.fetch(request), 'client', 'us', trace) : wrap, { ...(values.host ? { host: values.host } : {}), port });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === 'EADDRINUSE' ? `port ${port} is in use: choose another with --port` : code === 'EADDRNOTAVAIL' ? `cannot bind ${values.host}: not an address of this machine` : e instanceof Error ? e.message : String(e);
    process.stderr.write(`mcp-dual-era serve: ${why}\n`);
    await wrap.close();
    return 1;
  }
  say(`mcp-dual-era: serving ${backend.describe} at ${server.origin}${values.path ?? '/mcp'} (modern and legacy clients)`);
  await stopped;
  say('mcp-dual-era: shutting down');
  await wrap.close();
  await server.close();
  return 0;
}

/** Opens a session upstream through the wrap itself and says what the server is. */
async function describeUpstream(wrap: ReturnType<typeof wrapLegacyServer>): Promise<{ ok: true; value: string } | { ok: false; error: string }> {
  const version = MODERN_VERSIONS[MODERN_VERSIONS.length - 1]!;
  const answer = await wrap.serveModern(
    { jsonrpc: '2.0', id: 'startup', method: 'server/discover', params: { _meta: { [MetaKey.protocolVersion]: version, [MetaKey.clientCapabilities]: {} } } },
    { principal: 'anonymous', signal: new Cancellation(), notify: () => {} },
  );
  const message = answer?.message;
  if (!message) return { ok: false, error: 'no answer' };
  // The failure line names the upstream already: what follows is the upstream's own account.
  if ('error' in message) return { ok: false, error: message.error.message.replace(/^Internal error: (the upstream server is unavailable: )?/, '') };
  const init = wrap.pool.sessions()[0]?.session.initializeResult;
  const info = init?.serverInfo;
  return { ok: true, value: `${info ? `${info.name} ${info.version}` : 'a server'} speaks ${init?.protocolVersion ?? 'an unknown revision'} (legacy era); served to modern (${MODERN_VERSIONS.join(', ')}) and legacy clients` };
}
