/**
 * Option values the commands share, each checked the same way everywhere: a list of `Name: value`
 * headers, `KEY=VALUE` environment entries, root URIs, URLs and ports. Each returns what it read, or the
 * message to give the user.
 */

export type Read<T> = { ok: true; value: T } | { ok: false; message: string };

/** `--header 'Name: value'` (repeatable). */
export function readHeaders(list: readonly string[] | undefined): Read<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const h of list ?? []) {
    const colon = h.indexOf(':');
    if (colon < 1) return { ok: false, message: `--header must look like 'Name: value', not ${h}` };
    headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
  }
  return { ok: true, value: headers };
}

/** `--env KEY=VALUE` (repeatable). */
export function readEnv(list: readonly string[] | undefined): Read<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const kv of list ?? []) {
    const eq = kv.indexOf('=');
    if (eq < 1) return { ok: false, message: `--env must look like KEY=VALUE, not ${kv}` };
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return { ok: true, value: env };
}

/** `--roots <uri>` (repeatable). */
export function readRoots(list: readonly string[] | undefined): Read<Array<{ uri: string }>> {
  const roots: Array<{ uri: string }> = [];
  for (const uri of list ?? []) {
    try {
      roots.push({ uri: new URL(uri).href });
    } catch {
      return { ok: false, message: `--roots must be a URI (file:///…), not ${uri}` };
    }
  }
  return { ok: true, value: roots };
}

/** An http or https URL given on the command line. */
export function readHttpUrl(text: string, what: string): Read<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: `${what} is not a URL: ${text}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, message: `${what} must be an http or https URL, not ${text}` };
  return { ok: true, value: url };
}

/** The options of a command that say how its server process gets its environment, as parsed. */
export interface EnvPolicy {
  /** Start from a basic environment (`PATH`, `HOME`, …) instead of ours. */
  readonly 'clean-env'?: boolean | undefined;
  /** The variable holding our requestState key: never passed on. */
  readonly 'state-key-env'?: string | undefined;
}

/**
 * The server process a command starts for `-- <command> [args…]`, with its `--cwd`, `--env`,
 * `--clean-env` and the `--state-key-env` variable withheld: built in one place, so the process started ahead of everything else
 * (lib/cli/early.ts) is the one the command asks for.
 */
export function serverProcess(
  command: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
  policy: EnvPolicy = {},
): { command: string; args: string[]; env: Readonly<Record<string, string>>; cwd?: string; inheritEnv?: 'basic'; withholdEnv?: string[] } {
  const secret = policy['state-key-env'];
  return {
    command: command[0]!,
    args: command.slice(1),
    env,
    ...(cwd ? { cwd } : {}),
    ...(policy['clean-env'] ? { inheritEnv: 'basic' as const } : {}),
    ...(secret ? { withholdEnv: [secret] } : {}),
  };
}

/** `--port <port>`: a whole number from 0 to 65535 (default 3000). */
export function readPort(text: string | undefined): Read<number> {
  if (text === undefined) return { ok: true, value: 3000 };
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) return { ok: false, message: `--port must be a port number from 0 to 65535, not ${text}` };
  return { ok: true, value: port };
}

/** What to tell the user when listening failed (a port in use, an address not of this machine). */
export function listenFailure(error: unknown, port: number, host: string | undefined): string {
  const code = (error as { code?: string }).code;
  if (code === 'EADDRINUSE') return `port ${port} is in use: choose another with --port`;
  if (code === 'EADDRNOTAVAIL') return `cannot bind ${host}: not an address of this machine (--host)`;
  if (code === 'EACCES') return `not allowed to listen on port ${port}: choose one above 1023 with --port`;
  return `cannot listen on ${host ?? '127.0.0.1'}:${port}: ${error instanceof Error ? error.message : String(error)}`;
}

/** A command's own arguments, and the upstream command after `--` (empty without one). */
export function splitAtDash(argv: readonly string[]): { own: string[]; command: string[] } {
  const dash = argv.indexOf('--');
  return dash === -1 ? { own: [...argv], command: [] } : { own: argv.slice(0, dash), command: argv.slice(dash + 1) };
}

/** Reports a usage error of `mcp-dual-era <name>` on stderr; returns the exit code for it (2). */
export function usageError(name: string): (text: string) => number {
  return (text) => {
    process.stderr.write(`mcp-dual-era ${name}: ${text}\n${helpHint(name)}\n`);
    return 2;
  };
}

/** The line under a usage error: where the options are (the error stays on screen, not above the help). */
export function helpHint(command?: string): string {
  return command === undefined ? "Run 'mcp-dual-era help' for the commands." : `Run 'mcp-dual-era ${command} --help' for its options.`;
}
