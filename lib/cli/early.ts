/**
 * The server process of `connect -- <command>` and `serve --stdio -- <command>`, started before
 * anything else of ours loads (lib/cli/main.ts imports this module alone): the host waits for our
 * first answer, and most of that wait is the server's own start. The command, once loaded, asks
 * for the same process (built by the same `serverProcess`) and takes it over
 * (lib/transport/spawnChild.ts). Arguments this cannot read start nothing: the command says what
 * is wrong with them. Over HTTP nothing starts before the port is taken.
 */
import { parseArgs } from 'node:util';
import { startAhead } from '../transport/spawnChild.ts';
import { CONNECT_OPTIONS } from './connectUsage.ts';
import { readEnv, serverProcess, splitAtDash, type EnvPolicy } from './options.ts';
import { SERVE_OPTIONS } from './serveUsage.ts';

/** Starts the server of `mcp-dual-era <args…>` now, when the command is one that a host waits on. */
export function startServerAhead(args: readonly string[]): void {
  const [name, ...rest] = args;
  const { own, command } = splitAtDash(rest);
  if (command.length === 0) return;
  let values: EnvPolicy & { readonly env?: string[] | undefined; readonly cwd?: string | undefined };
  try {
    if (name === 'connect') {
      const parsed = parseArgs({ args: own, options: CONNECT_OPTIONS, allowPositionals: true, strict: true });
      // With --oauth a command is a usage error: nothing to start.
      if (parsed.values.help || parsed.values.oauth || parsed.positionals.length > 0) return;
      values = parsed.values;
    } else if (name === 'serve') {
      const parsed = parseArgs({ args: own, options: SERVE_OPTIONS, strict: true });
      if (parsed.values.help || !parsed.values.stdio || parsed.values.modern || parsed.values.upstream !== undefined) return;
      values = parsed.values;
    } else return;
  } catch {
    return;
  }
  const environment = readEnv(values.env);
  if (environment.ok) startAhead(serverProcess(command, environment.value, values.cwd, values));
}
