#!/usr/bin/env node
/**
 * The `mcp-dual-era` command: `serve` fronts a legacy server for modern and legacy clients;
 * `connect` bridges a stdio host of either era to a server of either era; `probe` tells which era a
 * server speaks; `explain` shows a recorded exchange in the other era; `migrate` moves SDK v1 code
 * onto both eras; `--version` and `--help` (lib/cli/commands.ts). A server command of `connect`
 * or `serve --stdio` is started before anything else loads (lib/cli/early.ts).
 * Exit codes: 0 done, 1 a runtime failure (the upstream could not be started or reached), 2 a usage error.
 */
import { startServerAhead } from './early.ts';
import { dropAhead } from '../transport/spawnChild.ts';

const args = process.argv.slice(2);
startServerAhead(args);
const { runCli } = await import('./commands.ts');
process.exitCode = await runCli(args);
// A server started ahead that the command never took (it stopped at a usage error) must not hold us.
dropAhead();
