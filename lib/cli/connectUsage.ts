/** The usage text and the options of `mcp-dual-era connect`, apart so `--help` loads nothing else. */
export const CONNECT_USAGE = `  mcp-dual-era connect [options] <url>                   bridge a stdio host to an HTTP server
  mcp-dual-era connect [options] -- <command> [args…]    bridge a stdio host to a stdio server

  Whatever era the host speaks on our stdin and whatever era the server speaks, the two work
  together (legacy host → modern-only server, modern host → legacy server, same era relayed). A
  modern host that falls back to initialize on the same pipe is served as a legacy host.

Connect options:
  --header 'Name: value'  an HTTP header on every upstream request (repeatable; e.g. Authorization)
  --host-era <era>        legacy, modern or auto (default: from the host's first request)
  --server-era <era>      modern, legacy or auto (default: probe the server; modern hosts only)
  --timeout <ms>          how long the probe waits for an answer (default 3000)
  --cwd <dir>             working directory of the command
  --env KEY=VALUE         added to the environment of the command (repeatable; it starts from ours)
  --clean-env             start the command's environment from a basic one (PATH, HOME, USER,
                          LOGNAME, SHELL, TERM, LANG, LC_ALL, TMPDIR) instead of ours
  --roots <uri>           modern host, legacy server: a root for the server's roots/list outside
                          any call (repeatable; a modern host cannot be asked then)
  --verbose               every message on both sides, in both eras, on stderr
  --quiet                 nothing on stderr but errors
  Exit codes: 0 the host's input ended or a signal, 1 the server could not be started, reached
  or went away, 2 usage.
`;

/** The options `connect` takes (for `node:util`'s `parseArgs`). */
export const CONNECT_OPTIONS = {
  header: { type: 'string', multiple: true },
  'host-era': { type: 'string' },
  'server-era': { type: 'string' },
  timeout: { type: 'string' },
  cwd: { type: 'string' },
  env: { type: 'string', multiple: true },
  'clean-env': { type: 'boolean' },
  roots: { type: 'string', multiple: true },
  verbose: { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
