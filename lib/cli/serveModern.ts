/**
 * `mcp-dual-era serve --modern`: run `wrapModernServer` in front of a modern-only server (a stdio
 * command or a Streamable HTTP URL), serving legacy clients over sessionful Streamable HTTP or,
 * with `--stdio`, one legacy session on our own stdin/stdout. Shuts down on SIGINT/SIGTERM.
 */
import { serveNodeHttp } from '../transport/nodeHttp.ts';
import { wrapModernServer, type ModernBackend } from '../wrap/modernServer/wrapModernServer.ts';
import { listenerLimits, type Limits } from './limits.ts';
import { listenFailure, serverProcess, type EnvPolicy } from './options.ts';
import type { Log } from './log.ts';
import { tracingFetch, tracingHandler, tracingInput, tracingOutput, upstreamTrace } from './trace.ts';

export interface ServeModernOptions {
  readonly stdio?: boolean;
  readonly host?: string;
  readonly port: number;
  readonly path?: string;
  readonly upstream?: string;
  readonly allowedOrigins?: readonly string[];
  readonly allowedHosts?: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** `--clean-env` and our own variables withheld from the command. */
  readonly envPolicy?: EnvPolicy;
  readonly limits: Limits;
  /** What the command says, its `--verbose` trace (every message on both sides), where the upstream's stderr goes. */
  readonly log: Log;
}

/** Serves a modern-only server to legacy clients until a signal or the end of stdin. */
export async function serveModern(command: readonly string[], options: ServeModernOptions): Promise<number> {
  let backend: ModernBackend;
  const trace = options.log.trace;
  const limits = options.limits;
  if (options.upstream)
    backend = {
      url: options.upstream,
      maxMessageBytes: limits['message-bytes'],
      ...(trace ? { fetch: tracingFetch('us', 'server', trace) } : {}),
    };
  else if (command.length > 0) {
    backend = {
      ...serverProcess(command, options.env ?? {}, options.cwd, options.envPolicy),
      maxMessageBytes: limits['message-bytes'],
      stderr: options.log.serverStderr,
      shutdownGraceMs: 500,
      ...(trace ? { trace: upstreamTrace(trace) } : {}),
    };
  } else {
    options.log.error('mcp-dual-era serve --modern: name the upstream server (-- <command> or --upstream <url>)');
    return 2;
  }
  const describe = options.upstream ?? command.join(' ');
  const wrap = wrapModernServer(backend, {
    ...(options.path ? { path: options.path } : {}),
    limits: { maxBodyBytes: limits['body-bytes'] },
    sessions: { max: limits['legacy-sessions'], perPrincipal: limits['legacy-sessions-per-caller'], idleMs: limits['legacy-idle-ms'] },
    origins: {
      ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    },
  });
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  process.once('SIGINT', () => stop());
  process.once('SIGTERM', () => stop());
  if (options.stdio) {
    const front = wrap.serveStdio(
      trace
        ? { input: tracingInput(process.stdin, 'client', 'us', trace), output: tracingOutput(process.stdout, 'us', 'client', trace) }
        : {},
    );
    options.log.info(`mcp-dual-era: serving the modern server ${describe} to a legacy client on stdio`);
    await Promise.race([front.done, stopped]);
    await front.close();
    return 0;
  }
  let server: Awaited<ReturnType<typeof serveNodeHttp>>;
  try {
    server = await serveNodeHttp(trace ? tracingHandler((request) => wrap.fetch(request), 'client', 'us', trace) : wrap, {
      ...(options.host ? { host: options.host } : {}),
      port: options.port,
      ...listenerLimits(limits),
    });
  } catch (e) {
    options.log.error(`mcp-dual-era serve --modern: ${listenFailure(e, options.port, options.host)}`);
    await wrap.close();
    return 1;
  }
  options.log.info(`mcp-dual-era: serving the modern server ${describe} to legacy clients at ${server.origin}${options.path ?? '/mcp'}`);
  await stopped;
  options.log.info('mcp-dual-era: shutting down');
  await wrap.close();
  await server.close();
  return 0;
}
