/** The usage text and the options of `mcp-dual-era connect`, apart so `--help` loads nothing else. */
export const CONNECT_USAGE = `  mcp-dual-era connect [options] <url>                   bridge a stdio host to an HTTP server
  mcp-dual-era connect [options] -- <command> [args…]    bridge a stdio host to a stdio server

  Whatever era the host speaks on our stdin and whatever era the server speaks, the two work
  together (legacy host → modern-only server, modern host → legacy server, same era relayed). A
  modern host that falls back to initialize on the same pipe is served as a legacy host.

Connect options:
  --header 'Name: value'  an HTTP header on every upstream request (repeatable; e.g. Authorization)
  --oauth                 sign in to an HTTP server that wants OAuth: at its first 401 the sign-in
                          URL is printed on stderr ("Sign in at: <url>") and opened in the browser,
                          and the host's request waits for the sign-in (up to 5 minutes). Tokens
                          are kept per user and server, sent on every request, refreshed before
                          they expire; a refused refresh asks for a new sign-in. Not with a command
                          or with --header Authorization
  --no-browser            with --oauth: print the sign-in URL only, do not open a browser
  --oauth-dir <dir>       with --oauth: where credentials are kept, a folder per server, only the
                          user may read (default $XDG_CONFIG_HOME/mcp-dual-era/oauth, else
                          ~/.config/mcp-dual-era/oauth)
  --callback-port <port>  with --oauth: the 127.0.0.1 port the browser returns to (default the one
                          used before, else a free one)
  --client-metadata-url <url>
                          with --oauth: the https URL where this client's metadata document is
                          published; an authorization server that takes client ID metadata
                          documents uses it as the client ID (nothing is registered). Its
                          redirect_uris must name http://127.0.0.1/callback
  --client-id <id>        with --oauth: a client registered beforehand with the authorization
                          server (nothing is registered)
  --client-secret-env <VAR>
                          with --client-id: the environment variable holding its secret (a
                          confidential client; never given on the command line)
  --issuer <url>          with --client-id: the authorization server it was registered with; its
                          credentials go to no other
  --grant client-credentials
                          with --oauth and --client-id: no person signs in; the program's own
                          credentials (--client-secret-env, or --private-key-file) get the token
  --private-key-file <pem>
                          with --grant client-credentials: sign a client assertion with this key
                          (private_key_jwt) instead of sending a secret
  --signing-alg <alg>     with --private-key-file: ES256 (default), RS256, PS256, EdDSA, …
  --dpop                  with --oauth: ask for DPoP-bound tokens (RFC 9449); every request then
                          carries a fresh proof made with a key this process holds
  --host-era <era>        legacy, modern or auto (default: from the host's first request)
  --server-era <era>      modern, legacy or auto (default: probe the server; modern hosts only)
  --timeout <ms>          how long the probe waits for an answer (default 3000; with --oauth
                          300000, as a sign-in may happen during the probe)
  --cwd <dir>             working directory of the command
  --env KEY=VALUE         added to the environment of the command (repeatable; it starts from ours)
  --clean-env             start the command's environment from a basic one (PATH, HOME, USER,
                          LOGNAME, SHELL, TERM, LANG, LC_ALL, TMPDIR) instead of ours
  --roots <uri>           modern host, legacy server: a root to answer every roots/list of the
                          server with, over the host's own (repeatable)
  --verbose               every message on both sides, in both eras, on stderr
  --quiet                 nothing on stderr but errors
  Exit codes: 0 the host's input ended or a signal, 1 the server could not be started, reached
  or went away, 2 usage.
`;

/** The options `connect` takes (for `node:util`'s `parseArgs`). */
export const CONNECT_OPTIONS = {
  header: { type: 'string', multiple: true },
  oauth: { type: 'boolean' },
  'no-browser': { type: 'boolean' },
  'oauth-dir': { type: 'string' },
  'callback-port': { type: 'string' },
  'client-metadata-url': { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret-env': { type: 'string' },
  issuer: { type: 'string' },
  grant: { type: 'string' },
  'private-key-file': { type: 'string' },
  'signing-alg': { type: 'string' },
  dpop: { type: 'boolean' },
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
