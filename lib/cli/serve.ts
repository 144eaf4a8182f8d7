/**
 * `mcp-dual-era serve`: reads the arguments every mode shares and runs the mode they name: in front
 * of a legacy server (`serveLegacy.ts`) or, with `--modern`, of a modern-only one (`serveModern.ts`).
 * The arguments are read before anything heavy is loaded: with `--stdio` the server process is
 * started first and our stdin read at once, so a host's first request does not wait for our start.
 */
import { readEnv, readHttpUrl, readPort, splitAtDash, usageError } from './options.ts';
import { parseServeArgs, SERVE_USAGE } from './serveUsage.ts';
import { readLimits } from './limits.ts';
import { createLog, readLogFormat } from './log.ts';
import { serveLegacy } from './serveLegacy.ts';
import type { ServeHooks } from './serveLegacySettings.ts';

export type { ServeHooks };

/** Runs the serve command; resolves when it has shut down. */
export async function serve(argv: readonly string[], hooks: ServeHooks = {}): Promise<number> {
  const { own, command } = splitAtDash(argv);
  const usage = usageError('serve');
  let parsed;
  try {
    parsed = parseServeArgs(own);
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const format = readLogFormat(values['log-format']);
  if (!format.ok) return usage(format.message);
  const log = await createLog({ format: format.value, quiet: values.quiet, verbose: values.verbose });
  const port = readPort(values.port);
  if (!port.ok) return usage(port.message);
  const env = readEnv(values.env);
  if (!env.ok) return usage(env.message);
  if (values.upstream !== undefined) {
    const url = readHttpUrl(values.upstream, '--upstream');
    if (!url.ok) return usage(url.message);
    if (command.length > 0) return usage('name either --upstream <url> or a command after --, not both');
  } else if (command.length === 0) {
    return usage('name the upstream server (-- <command> or --upstream <url>)');
  }
  const bodyLimit = values['body-limit'] === undefined ? undefined : Number(values['body-limit']);
  if (bodyLimit !== undefined && (!Number.isInteger(bodyLimit) || bodyLimit < 1))
    return usage(`--body-limit must be a whole number of bytes, not ${values['body-limit']}`);
  const read = readLimits(
    [...(bodyLimit !== undefined ? [`body-bytes=${bodyLimit}`] : []), ...(values.limit ?? [])],
    values.modern ? { modern: true } : {},
  );
  if (!read.ok) return usage(read.message);
  const limits = read.value;
  if (values['pass-authorization']) {
    if (!values.upstream)
      return usage("--pass-authorization passes callers' credentials to an upstream HTTP server: it goes with --upstream <url>");
    if (values.stdio) return usage("--pass-authorization serves over HTTP (callers' Authorization headers): it does not go with --stdio");
    if (values.modern) return usage('--pass-authorization fronts a legacy server (without --modern)');
  }
  if (values['share-sessions']) {
    if (values['pass-authorization'])
      return usage("--share-sessions does not go with --pass-authorization: each caller's token travels on a session of its own");
    if (values.modern) return usage('--share-sessions fronts a legacy server (without --modern)');
  }
  if (values['tasks-without-extension'] !== undefined && values.modern)
    return usage('--tasks-without-extension fronts a legacy server that runs tools as tasks (without --modern)');
  if (values.metrics) {
    if (values.stdio) return usage('--metrics serves GET /metrics on the HTTP endpoint: it does not go with --stdio');
    if (values.modern) return usage('--metrics fronts a legacy server (without --modern)');
  }
  if (values['public-url'] !== undefined) {
    const publicUrl = readHttpUrl(values['public-url'], '--public-url');
    if (!publicUrl.ok) return usage(publicUrl.message);
  }
  if (values.modern) {
    const { serveModern } = await import('./serveModern.ts');
    return serveModern(command, {
      log,
      env: env.value,
      envPolicy: values,
      limits,
      port: port.value,
      ...(values.stdio ? { stdio: true } : {}),
      ...(values.host ? { host: values.host } : {}),
      ...(values.path ? { path: values.path } : {}),
      ...(values.upstream ? { upstream: values.upstream } : {}),
      ...(values.cwd ? { cwd: values.cwd } : {}),
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    });
  }
  return serveLegacy({ command, values, env: env.value, limits, limitsGiven: read.given, port: port.value, log, usage, hooks });
}
