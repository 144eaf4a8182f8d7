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
import { PROBE_USAGE } from './probeUsage.ts';
import { SERVE_USAGE } from './serveUsage.ts';

const pkg = { name: PACKAGE_NAME, version: PACKAGE_VERSION };

const HELP = `${pkg.name} ${pkg.version}
Makes the two eras of the Model Context Protocol work together.

  legacy revisions: ${LEGACY_VERSIONS.join(', ')}
  modern revisions: ${MODERN_VERSIONS.join(', ')}

${SERVE_USAGE}
${CONNECT_USAGE}
${PROBE_USAGE}
${EXPLAIN_USAGE}
${MIGRATE_USAGE}
  ${pkg.name} --version   print the version
  ${pkg.name} --help      print this help
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
export async function runCli(args: readonly string[], commands: Readonly<Record<string, (argv: readonly string[]) => Promise<number>>> = COMMANDS): Promise<number> {
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
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  process.stderr.write(`${pkg.name}: unknown command ${JSON.stringify(args[0])}\n\n${HELP}`);
  return 2;
}
