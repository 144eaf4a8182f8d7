/** The usage text and the options of `mcp-dual-era serve`, apart so `--help` loads nothing else. */
import { parseArgs } from 'node:util';
import { limitsUsage } from './limits.ts';

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
                          re-run the call each round; see docs/serving.md for the caveat)
  --state-key-env <VAR>   requestState key (32 bytes, base64 or hex) from this environment variable
  --state-key-file <f>    requestState key from this file (without either: a random key per
                          process, so retries cannot cross processes or restarts); for a rotation,
                          one key a line, the new one first: the first seals, all open
  --fleet <redis-url>     join a fleet of replicas through this Redis (redis://127.0.0.1:6379): without
                          a key given, the fleet agrees on one there; replay-mode states are single
                          use fleet-wide (HTTP only)
  --fleet-name <name>     the fleet's name in Redis (default: default)
  --advertise <url>       the address other replicas reach this one at (default: its listen address)
  --pass-authorization    with --upstream: each caller's own Authorization header goes to the
                          upstream (a server protected by OAuth, fronted on its public URL): its
                          401 challenges and protected-resource metadata are shown on this endpoint
  --share-sessions        callers share upstream sessions (a few server processes for everyone,
                          not one per caller): for a server that keeps nothing per caller; a
                          call that may ask for input gets one alone while it runs (see the
                          docs/robustness.md, "Many callers", for what crosses)
  --public-url <url>      the URL clients reach this endpoint at (behind a proxy); with
                          --pass-authorization, the protected resource tokens are issued for
                          (default: the listen address and path)
  --tasks-without-extension <m>
                          a modern client without the tasks extension calling a tool the server
                          runs only as a task: run (default: the task runs to its end and the call
                          answers its result) or refuse (-32021 naming the extension, as the
                          extension's strict reading and its conformance scenario want)
  --roots <uri>           a root to answer every roots/list of the server with, over the client's
                          own (repeatable)
  --cache-ttl <ms>        ttlMs on cacheable results (default 0: no caching)
  --cache-scope <s>       private (default) or public
  --body-limit <bytes>    largest accepted request body (default 4194304; = --limit body-bytes=…)
  --limit <name>=<n>      set one of the limits below (repeatable)
  --spares <n>            upstream processes kept started ahead of need, so a new session does
                          not wait for one to boot (default 1 over HTTP, 0 with --stdio)
  --cwd <dir>             working directory of the upstream command
  --env KEY=VALUE         added to the environment of the upstream command (repeatable); it
                          starts from ours, less the variable --state-key-env names
  --clean-env             start the upstream's environment from a basic one (PATH, HOME, USER,
                          LOGNAME, SHELL, TERM, LANG, LC_ALL, TMPDIR) instead of ours
  --metrics               Prometheus metrics at GET /metrics on the HTTP endpoint's host and port
                          (requests, durations, sessions, parked calls; see docs/operating.md)
  --log-format <f>        human (default) or json: one JSON object a line on stderr, with the
                          trace id on the lines about a traced request
  --verbose               every message on both sides, in both eras, on stderr
  --quiet                 no messages on stderr but errors
  -h, --help              print this help

Limits (--limit <name>=<n>; a request refused by one gets -32005 naming it, and over HTTP 429
or 503 with Retry-After):
${limitsUsage()}

Exit codes: 0 stopped by SIGINT/SIGTERM or end of input, 1 the upstream or the port failed, 2 usage.
`;

/** The options `serve` takes (for `node:util`'s `parseArgs`). */
export const SERVE_OPTIONS = {
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
  fleet: { type: 'string' },
  'fleet-name': { type: 'string' },
  advertise: { type: 'string' },
  'pass-authorization': { type: 'boolean' },
  'share-sessions': { type: 'boolean' },
  'public-url': { type: 'string' },
  'tasks-without-extension': { type: 'string' },
  roots: { type: 'string', multiple: true },
  'cache-ttl': { type: 'string' },
  'cache-scope': { type: 'string' },
  'body-limit': { type: 'string' },
  limit: { type: 'string', multiple: true },
  'clean-env': { type: 'boolean' },
  spares: { type: 'string' },
  mrtr: { type: 'string' },
  cwd: { type: 'string' },
  env: { type: 'string', multiple: true },
  metrics: { type: 'boolean' },
  'log-format': { type: 'string' },
  quiet: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Reads `serve`'s own arguments (those before `--`); throws on an unknown or malformed option. */
export function parseServeArgs(args: readonly string[]) {
  return parseArgs({ args: [...args], options: SERVE_OPTIONS, strict: true });
}

/** `serve`'s options as read. */
export type ServeValues = ReturnType<typeof parseServeArgs>['values'];
