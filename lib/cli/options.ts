/**
 * Option values the commands share, each checked the same way everywhere: a list of `Name: value`
 * headers, `KEY=VALUE` environment entries and root URIs. Each returns what it read, or the
 * message to give the user.
 */

type Read<T> = { ok: true; value: T } | { ok: false; message: string };

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
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, message: `${what} must be an http or https URL, not ${text}` };
  return { ok: true, value: url };
}

/** A command's own arguments, and the upstream command after `--` (empty without one). */
export function splitAtDash(argv: readonly string[]): { own: string[]; command: string[] } {
  const dash = argv.indexOf('--');
  return dash === -1 ? { own: [...argv], command: [] } : { own: argv.slice(0, dash), command: argv.slice(dash + 1) };
}

/** Reports a usage error of `mcp-dual-era <name>` on stderr; returns the exit code for it (2). */
export function usageError(name: string): (text: string) => number {
  return (text) => {
    process.stderr.write(`mcp-dual-era ${name}: ${text}\n`);
    return 2;
  };
}
