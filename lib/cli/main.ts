#!/usr/bin/env node
/**
 * The `mcp-dual-era` command. This entry point answers `--version` and `--help`; the serving and
 * bridging commands are documented in the README as they land.
 */
import { readFileSync } from 'node:fs';
import { LEGACY_VERSIONS, MODERN_VERSIONS } from '../core/era.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

const HELP = `${pkg.name} ${pkg.version}
Makes the two eras of the Model Context Protocol work together.

  legacy revisions: ${LEGACY_VERSIONS.join(', ')}
  modern revisions: ${MODERN_VERSIONS.join(', ')}

Usage:
  ${pkg.name} --version   print the version
  ${pkg.name} --help      print this help
`;

const args = process.argv.slice(2);
if (args.includes('--version') || args.includes('-v')) process.stdout.write(`${pkg.version}\n`);
else if (args.length === 0 || args.includes('--help') || args.includes('-h')) process.stdout.write(HELP);
else {
  process.stderr.write(`${pkg.name}: unknown command ${JSON.stringify(args[0])}\n\n${HELP}`);
  process.exitCode = 2;
}
