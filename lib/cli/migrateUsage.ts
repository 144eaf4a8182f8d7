/** The usage text of `mcp-dual-era migrate`, apart so `--help` loads nothing else. */
export const MIGRATE_USAGE = `  mcp-dual-era migrate [options] <paths…>              move SDK v1 code onto both eras (files or directories)

Migrate options:
  --mode wrap             (default) keep every handler, rewire servers onto wrapLegacyServer and
                          clients onto wrapLegacyClient, so they serve and reach both eras
  --mode native           rewrite push-style handlers of v2 SDK code into the 2026-07-28 idiom
                          (inputRequired, the request's envelope and logger)
  --write                 apply the changes (default: a dry run printing a unified diff)
  --json                  print the report as JSON (no diff)
  What cannot be rewritten safely is marked in place: grep '@mcp-dual-era'.
  Exit codes: 0 done, 1 a path could not be read or a file was left as it was, 2 usage.
`;
