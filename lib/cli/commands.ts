/**
 * What `mcp-dual-era <command> …` runs: the commands by name, each loaded when used, `--version`,
 * `--help`, and the exit code of it all (0 done, 1 a failure, 2 a usage error). The executable
 * itself is lib/cli/main.ts.
 */
import { LEGACY_VERSIONS, MODERN_VERSIONS } from '../core/era.ts';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../core/version.ts';
import { CONNECT_USAGE } from './connectUsage.ts';
import { EXPLAIN_USAGE } from './explainUsage.ts';
import { MIGRATE_USAGE } from './migrateUsage.ts';
import { helpHint } from './options.ts';
import { PROBE_USAGE } from './probeUsage.ts';
import { SERVE_USAGE } from './serveUsage.ts';

const pkg = { name: PACKAGE_NAME, version: PACKAGE_VERSION };

/** The commands, each with what it does in a line, as the top of the help lists them. */
const SUMMARIES: ReadonlyArray<readonly [string, string]> = [
  ['serve', 'front a server of either era for clients of both (HTTP or stdio)'],
  ['connect', 'bridge a stdio host of either era to a server of either era'],
  ['probe', 'tell which era a server speaks, and what it offers'],
  ['explain', 'show a recorded exchange as the other era would have it'],
  ['migrate', 'move SDK v1 server code onto both eras'],
];

/** Each command's usage, as `help <command>` prints it. */
const USAGES: Readonly<Record<string, string>> = {
  serve: SERVE_USAGE,
  connect: `Usage:\n${CONNECT_USAGE}`,
  probe: `Usage:\n${PROBE_USAGE}`,
  explain: EXPLAIN_USAGE,
  migrate: `Usage:\n${MIGRATE_USAGE}`,
};

const HELP = `${pkg.name} ${pkg.version}
Makes the two eras of the Model Context Protocol work together.

Usage: ${pkg.name} <command> [options]

Commands:
${SUMMARIES.map(([name, what]) => `  ${name.padEnd(9)} ${what}`).join('\n')}
  help      this help, or a command's: ${pkg.name} help <command> (or ${pkg.name} <command> --help)

  ${pkg.name} --version   print the version

Eras:
  legacy revisions: ${LEGACY_VERSIONS.join(', ')}
  modern revisions: ${MODERN_VERSIONS.join(', ')}
`;

// Each command is loaded when used, and loads what it needs only once its arguments are read:
// a host that starts `connect` or `serve --stdio` waits for our first answer, and `migrate` brings
// the TypeScript compiler.
const COMMANDS: Record<string, (argv: readonly string[]) => Promise<number>> = {
  serve: async (argv) => (await import('./serve.ts')).serve(argv),
  explain: async (argv) => (await import('./explain.ts')).explain(argv),
  probe: async (argv) => (await import('./probe.ts')).probeCommand(argv),
  connect: async (argv) => (await import('./connect.ts')).connect(argv),
  migrate: async (argv) => (await import('./migrate.ts')).migrateCommand(argv),
};

/** Runs `mcp-dual-era <args…>`; resolves with the exit code. */
export async function runCli(
  args: readonly string[],
  commands: Readonly<Record<string, (argv: readonly string[]) => Promise<number>>> = COMMANDS,
): Promise<number> {
  const command = args[0] !== undefined ? commands[args[0]] : undefined;
  if (command) {
    try {
      return await command(args.slice(1));
    } catch (e) {
      // A usage error is answered by the command itself (exit 2); anything thrown is a failure.
      process.stderr.write(`mcp-dual-era ${args[0]}: ${e instanceof Error ? e.message : String(e)}\n`);
      return 1;
    }
  }
  if (args.includes('--version') || args.includes('-v')) {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  if (args[0] === 'help' && args[1] !== undefined) {
    const usage = USAGES[args[1]];
    if (usage === undefined) return unknown(args[1]);
    process.stdout.write(usage);
    return 0;
  }
  if (args.length === 0 || args[0] === 'help' || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  return unknown(args[0]!);
}

/** An unknown command: said in a line, with where the commands are listed (exit 2). */
function unknown(command: string): number {
  process.stderr.write(
    `${pkg.name}: unknown command ${JSON.stringify(command)} (the commands: ${SUMMARIES.map(([name]) => name).join(', ')})\n${helpHint()}\n`,
  );
  return 2;
}
