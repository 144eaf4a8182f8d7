/**
 * `mcp-dual-era serve`: run `wrapLegacyServer` in front of a stdio server (`-- command args…`) or a
 * legacy HTTP server (`--upstream URL`), serving Streamable HTTP (default
 * http://127.0.0.1:3000/mcp) or, with `--stdio`, our own stdin/stdout. Shuts down on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { httpBackend, stdioBackend, type Backend } from '../session/backend.ts';
import { Keyring } from '../state/keyring.ts';
import { serveNodeHttp } from '../transport/nodeHttp.ts';
import { serveStdio } from '../wrap/stdioFront.ts';
import { wrapLegacyServer } from '../wrap/wrapLegacyServer.ts';
import { serveModern } from './serveModern.ts';

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
  --cwd <dir>             working directory of the upstream command
  --env KEY=VALUE         environment of the upstream command (repeatable)
  --quiet                 no messages on stderr
`;

/** Runs the serve command; resolves when it has shut down. */
export async function serve(argv: readonly string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? [...argv] : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
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
      mrtr: { type: 'string' },
      cwd: { type: 'string' },
      env: { type: 'string', multiple: true },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  const say = (text: string) => values.quiet || process.stderr.write(`${text}\n`);
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  if (values.modern) {
    const env = Object.fromEntries((values.env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    return serveModern(command, {
      say,
      env,
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
  if (values.upstream) backend = httpBackend({ url: values.upstream });
  else if (command.length > 0) {
    const env = Object.fromEntries((values.env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    backend = stdioBackend({ command: command[0]!, args: command.slice(1), env, ...(values.cwd ? { cwd: values.cwd } : {}), stderr: 'inherit', shutdownGraceMs: 500 });
  } else {
    process.stderr.write(`mcp-dual-era serve: name the upstream server (-- <command> or --upstream <url>)\n\n${SERVE_USAGE}`);
    return 2;
  }
  if (values.mrtr !== undefined && values.mrtr !== 'suspend' && values.mrtr !== 'replay') {
    process.stderr.write(`mcp-dual-era serve: --mrtr is suspend or replay, not ${values.mrtr}\n`);
    return 2;
  }
  let keyring: Keyring;
  const keyText = values['state-key-env'] ? process.env[values['state-key-env']] : undefined;
  if (keyText) keyring = new Keyring([Keyring.parse('k1', keyText)]);
  else {
    keyring = new Keyring();
    say('mcp-dual-era: no requestState key given (--state-key-env): a random key is used, so retries cannot cross processes');
  }
  const wrap = wrapLegacyServer({
    upstream: backend,
    mrtr: { keyring, replay: values.mrtr === 'replay' },
    http: {
      ...(values.path ? { path: values.path } : {}),
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    },
  });
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  if (values.stdio) {
    const front = serveStdio(wrap);
    say(`mcp-dual-era: serving ${backend.describe} on stdio (modern and legacy clients)`);
    await Promise.race([front.done, stopped]);
    await front.close();
    return 0;
  }
  const server = await serveNodeHttp(wrap, { ...(values.host ? { host: values.host } : {}), port: values.port ? Number(values.port) : 3000 });
  say(`mcp-dual-era: serving ${backend.describe} at ${server.origin}${values.path ?? '/mcp'} (modern and legacy clients)`);
  await stopped;
  say('mcp-dual-era: shutting down');
  await wrap.close();
  await server.close();
  return 0;
}
