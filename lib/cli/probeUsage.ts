/** The usage text of `mcp-dual-era probe`, apart so `--help` loads nothing else. */
export const PROBE_USAGE = `  mcp-dual-era probe [options] -- <command> [args…]    the era of a stdio server
  mcp-dual-era probe [options] --url <url>              the era of an HTTP endpoint

Probe options:
  --header 'Name: value'  an HTTP header on every request (repeatable; e.g. Authorization)
  --timeout <ms>          how long to wait for an answer (default 3000)
  --cwd <dir>             working directory of the command
`;
