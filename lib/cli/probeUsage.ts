/** The usage text of `mcp-dual-era probe`, apart so `--help` loads nothing else. */
export const PROBE_USAGE = `  mcp-dual-era probe [options] <url>                     what an HTTP server is
  mcp-dual-era probe [options] -- <command> [args…]      what a stdio server is

  Its era (modern-only, dual-era or legacy), the versions it speaks, server info, capabilities,
  how many tools, prompts and resources it offers, what the probe cost, and which clients can use
  it directly and which need mcp-dual-era.

Probe options:
  --url <url>             the HTTP server to probe (the same as <url>)
  --json                  one JSON object on stdout, for scripts
  --steps                 also show each probe step (the requests tried, the fallbacks)
  --header 'Name: value'  an HTTP header on every request (repeatable; e.g. Authorization)
  --timeout <ms>          how long to wait for each answer (default 3000)
  --cwd <dir>             working directory of the command
  --env KEY=VALUE         environment of the command (repeatable)
  Exit codes: 0 the server answered, 1 it could not be reached or refused, 2 usage.
`;
