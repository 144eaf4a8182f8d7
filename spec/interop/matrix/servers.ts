/**
 * The three server eras of the matrix, each one fixture with the same operations, over stdio (a
 * command a client or a wrap spawns) or Streamable HTTP (listening on a loopback port now):
 * modern-only (v2 SDK, `legacy: 'reject'`), dual-era (the same v2 server serving both eras) and
 * legacy (v1 SDK, pushing its requests mid-call).
 */
import { resolve } from 'node:path';
import { createDualEraHandler, createStatelessDualEraHandler, DUAL_ERA_INFO } from '../../../fixtures/servers/dualEraHttp.ts';
import { startLegacyHttp } from '../../../fixtures/servers/legacyHttp.ts';
import { createModernHandler } from '../../../fixtures/servers/modernHttp.ts';
import { MARKER, ROOT } from '../../helpers/everything.ts';
import { startModernHttp } from '../../helpers/modernFixture.ts';

export type ServerEra = 'modern' | 'dual' | 'legacy';
export type TransportKind = 'stdio' | 'http';

/** A command line to spawn, with the marker that finds its processes afterwards. */
export interface Command {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
}

/** A server of one era on one transport, ready for a client or a wrap. */
export type ServerUnderTest = { readonly era: ServerEra; readonly name: string; close(): Promise<void> } & (
  | { readonly transport: 'stdio'; readonly command: Command }
  | { readonly transport: 'http'; readonly url: string }
);

/** Who answers, per era: the identity the client should see. */
export const SERVER_NAMES: Record<ServerEra, string> = { modern: 'modern-fixture', dual: DUAL_ERA_INFO.name, legacy: 'legacy-fixture' };

const FIXTURE_ARGS: Record<ServerEra, readonly string[]> = {
  modern: ['fixtures/servers/modernStdioMain.ts'],
  dual: ['fixtures/servers/modernStdioMain.ts', '--dual-era'],
  legacy: ['fixtures/servers/legacyStdio.ts'],
};

/** The command that runs the fixture of `era` on its stdio (tsx under this Node). */
export function fixtureCommand(era: ServerEra, marker: string): Command {
  const [file, ...rest] = FIXTURE_ARGS[era];
  return { command: process.execPath, args: ['--import', 'tsx', resolve(ROOT, file!), ...rest], cwd: ROOT, env: { [MARKER]: marker } };
}

/**
 * Starts (HTTP) or describes (stdio) the fixture of `era`. The dual-era server over HTTP serves
 * legacy clients sessionfully, or with `stateless` on `createMcpHandler`'s default legacy leg.
 */
export async function startServer(era: ServerEra, transport: TransportKind, marker: string, stateless = false): Promise<ServerUnderTest> {
  const name = SERVER_NAMES[era];
  if (transport === 'stdio') return { era, name, transport, command: fixtureCommand(era, marker), close: async () => {} };
  const running =
    era === 'legacy'
      ? await startLegacyHttp()
      : await startModernHttp(
          era === 'modern' ? createModernHandler() : stateless ? createStatelessDualEraHandler() : createDualEraHandler(),
        );
  return { era, name, transport, url: running.url, close: running.close };
}
