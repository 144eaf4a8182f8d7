#!/usr/bin/env node
/**
 * The `mcp-dual-era` command: `serve` fronts a legacy server for modern and legacy clients;
 * `probe` tells which era a server speaks; `--version` and `--help`.
 */
import { readFileSync } from 'node:fs';
import { LEGACY_VERSIONS, MODERN_VERSIONS } from '../core/era.ts';
import { PROBE_USAGE } from './probeUsage.ts';
import { serve, SERVE_USAGE } from './serve.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

const HELP = `${pkg.name} ${pkg.version}
Makes the two eras of the Model Context Protocol work together.

  legacy revisions: ${LEGACY_VERSIONS.join(', ')}
  modern revisions: ${MODERN_VERSIONS.join(', ')}

${SERVE_USAGE}
${PROBE_USAGE}
  ${pkg.name} --version   print the version
  ${pkg.name} --help      print this help
`;

const args = process.argv.slice(2);
if (args[0] === 'serve') {
  try {
    process.exitCode = await serve(args.slice(1));
  } catch (e) {
    process.stderr.write(`mcp-dual-era serve: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  }
} else if (args[0] === 'probe') {
  try {
    const { probeCommand } = await import('./probe.ts');
    process.exitCode = await probeCommand(args.slice(1));
  } catch (e) {
    process.stderr.write(`mcp-dual-era probe: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  }
} else if (args.includes('--version') || args.includes('-v')) process.stdout.write(`${pkg.version}\n`);
else if (args.length === 0 || args.includes('--help') || args.includes('-h')) process.stdout.write(HELP);
else {
  process.stderr.write(`${pkg.name}: unknown command ${JSON.stringify(args[0])}\n\n${HELP}`);
  process.exitCode = 2;
}
