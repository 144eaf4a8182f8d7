/**
 * `mcp-dual-era connect`: a stdio bridge for any host. The host speaks on our stdin/stdout, in
 * whichever era it speaks; the server is an HTTP endpoint or a command, in whichever era it speaks.
 * This reads the arguments and composes the bridge: the stdio front for one host
 * (fronts/stdioBridge.ts: the host's first request tells its era, a modern host may fall back to
 * `initialize`) and the transport it opens for each era of host (`opener`). A server command is
 * started as soon as the arguments are read, while the rest loads.
 * With `--oauth`, every request to an HTTP server goes through `authorizedFetch` and the provider
 * the sign-in options describe (oauthOptions.ts): the sign-in starts at the server's first 401, and
 * the host's request waits for it.
 */
import { parseArgs } from 'node:util';
import { oauthProvider } from './oauthOptions.ts';
import { authorizedFetch, SIGN_IN_TIMEOUT_MS } from '../auth/authorizedFetch.ts';
import type { Era } from '../core/era.ts';
import { StdioBridge, type OpenUpstream } from '../fronts/stdioBridge.ts';
import { startAhead } from '../transport/spawnChild.ts';
import { StdioChildTransport, type StdioChildOptions } from '../transport/stdioChild.ts';
import type { HttpTarget } from '../probe/probeTypes.ts';
import { CONNECT_OPTIONS, CONNECT_USAGE } from './connectUsage.ts';
import { readEnv, readHeaders, readHttpUrl, readRoots, serverProcess, splitAtDash, usageError } from './options.ts';
import { stderrTrace, tracingFetch, upstreamTrace } from './trace.ts';

type Upstream = { url: string; headers: Record<string, string>; fetch?: typeof fetch } | { command: StdioChildOptions };

/** Runs the connect command; resolves with the exit code when the host or the server is gone. */
export async function connect(
  argv: readonly string[],
  io: { input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream } = {},
): Promise<number> {
  const { own, command } = splitAtDash(argv);
  const usage = usageError('connect');
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      allowPositionals: true,
      options: CONNECT_OPTIONS,
      strict: true,
    });
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`Usage:\n${CONNECT_USAGE}`);
    return 0;
  }
  const hostEra = values['host-era'] ?? 'auto';
  if (hostEra !== 'auto' && hostEra !== 'legacy' && hostEra !== 'modern')
    return usage(`--host-era is legacy, modern or auto, not ${hostEra}`);
  const serverEra = values['server-era'] ?? 'auto';
  if (serverEra !== 'auto' && serverEra !== 'legacy' && serverEra !== 'modern')
    return usage(`--server-era is modern, legacy or auto, not ${serverEra}`);
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1))
    return usage(`--timeout must be a whole number of milliseconds, not ${values.timeout}`);
  const headers = readHeaders(values.header);
  if (!headers.ok) return usage(headers.message);
  const env = readEnv(values.env);
  if (!env.ok) return usage(env.message);
  const roots = readRoots(values.roots);
  if (!roots.ok) return usage(roots.message);
  const trace = values.verbose ? stderrTrace() : undefined;
  const oauth = values.oauth === true;
  if (oauth && Object.keys(headers.value).some((name) => name.toLowerCase() === 'authorization'))
    return usage('--oauth sends its own Authorization header: leave out --header Authorization');
  // Ends a sign-in still waiting when the bridge stops.
  const signIn = new AbortController();
  let upstream: Upstream;
  if (command.length > 0) {
    if (positionals.length > 0) return usage(`name either a URL or a command after --, not both`);
    if (oauth) return usage('--oauth signs in to an HTTP server: give its URL, not a command');
    const stray = await oauthProvider(values, new URL('http://127.0.0.1/'));
    if (!stray.ok) return usage(stray.message);
    upstream = {
      command: {
        ...serverProcess(command, env.value, values.cwd, values),
        stderr: 'inherit',
        shutdownGraceMs: 300,
        ...(trace ? { trace: upstreamTrace(trace) } : {}),
      },
    };
  } else if (positionals.length === 1) {
    const url = readHttpUrl(positionals[0]!, 'the server');
    if (!url.ok) return usage(`${url.message} (a command goes after --)`);
    let fetch: typeof globalThis.fetch | undefined;
    const provider = await oauthProvider(values, url.value);
    if (!provider.ok) return usage(provider.message);
    if (provider.value) fetch = authorizedFetch(provider.value, url.value, { signal: signIn.signal });
    // Traced outside the authorization: each message once, and never a token request or its answer.
    if (trace) fetch = tracingFetch('us', 'server', trace, fetch);
    upstream = { url: url.value.href, headers: headers.value, ...(fetch ? { fetch } : {}) };
  } else if (positionals.length > 1) {
    return usage(`one URL only (a command and its arguments go after --): ${positionals.join(' ')}`);
  } else {
    return usage('name the server (<url> or -- <command> [args…])');
  }

  const say = (text: string) => values.quiet || process.stderr.write(`mcp-dual-era connect: ${text}\n`);
  // The server boots while the rest of us loads and the host sends its first request (the host
  // waits for our first answer: the AI SDK, modern first, one second before it falls back). The
  // command line (lib/cli/main.ts) started it already; the first transport takes it over.
  if ('command' in upstream) startAhead(upstream.command);
  const bridge = new StdioBridge({
    open: opener(upstream, {
      ...(serverEra !== 'auto' ? { serverEra } : {}),
      // A sign-in may happen during the probe: it waits as long as a sign-in may, unless told otherwise.
      ...(timeout !== undefined ? { timeoutMs: timeout } : oauth ? { timeoutMs: SIGN_IN_TIMEOUT_MS } : {}),
      roots: roots.value,
    }),
    where: 'url' in upstream ? upstream.url : [upstream.command.command, ...(upstream.command.args ?? [])].join(' '),
    say,
    ...(trace ? { trace } : {}),
    ...(hostEra !== 'auto' ? { hostEra } : {}),
    ...(serverEra !== 'auto' ? { serverEra } : {}),
  });
  return bridge.run(io.input ?? process.stdin, io.output ?? process.stdout).finally(() => signIn.abort());
}

/** How a modern host's transport reaches the server. */
interface ModernOptions {
  readonly serverEra?: Era;
  readonly timeoutMs?: number;
  /** For a legacy server: the roots it gets when it asks outside any call. */
  readonly roots: ReadonlyArray<{ uri: string }>;
}

/**
 * The upstream transport for each era of host: a legacy host's goes through `wrapLegacyClient` (a
 * modern-only server is reached through translation, a legacy or dual-era one is relayed
 * unchanged), a modern host's through `wrapModernClient` (a legacy server is translated, a modern
 * one gets the messages untouched).
 */
function opener(upstream: Upstream, modern: ModernOptions): OpenUpstream {
  const http = (u: Extract<Upstream, { url: string }>) => ({ url: u.url, headers: u.headers, ...(u.fetch ? { fetch: u.fetch } : {}) });
  return async (era, hooks) => {
    if (era === 'legacy') {
      const { wrapLegacyClient } = await import('../wrap/legacyClient/wrapLegacyClient.ts');
      let child: StdioChildTransport | undefined;
      const bridge = wrapLegacyClient('url' in upstream ? http(upstream) : (child = new StdioChildTransport(upstream.command)));
      // The server cannot be reached: the bridge stops (exit 1, the upstream failed), as it does for a modern host.
      bridge.events.on('unreachable', ({ reason }) => hooks.unreachable(reason));
      return { transport: bridge, ...(child ? { child } : {}) };
    }
    const { wrapModernClient } = await import('../wrap/modernClient/wrapModernClient.ts');
    const target: HttpTarget | StdioChildOptions = 'url' in upstream ? http(upstream) : upstream.command;
    const transport = wrapModernClient(target, {
      ...(modern.serverEra ? { pin: modern.serverEra } : {}),
      ...(modern.timeoutMs !== undefined ? { timeoutMs: modern.timeoutMs } : {}),
      cache: false,
      legacy: { roots: modern.roots },
    });
    transport.events.on('waiting', (e) => hooks.say(e.reason));
    transport.events.on('verdict', (e) =>
      hooks.say(
        `the server speaks the ${e.verdict.era} era${e.verdict.era === 'modern' ? ` (${e.verdict.version}): messages pass unchanged` : ': messages are translated'}`,
      ),
    );
    return { transport };
  };
}
