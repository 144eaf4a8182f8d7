/**
 * The cells of the compatibility matrix (client era × server era × transport) and the ways each is
 * run: natively, through each remedy mcp-dual-era offers where the eras cannot meet on their own,
 * and, for those cells, the unwrapped attempt that is refused. `linkFor` builds what the client
 * connects to for a route, starting the wrap it needs.
 */
import { resolve } from 'node:path';
import { httpBackend } from '../../../lib/session/backend.ts';
import { serveNodeHttp } from '../../../lib/transport/nodeHttp.ts';
import { StdioChildTransport } from '../../../lib/transport/stdioChild.ts';
import { VerdictCache } from '../../../lib/probe/verdictCache.ts';
import { wrapLegacyClient } from '../../../lib/wrap/legacyClient/wrapLegacyClient.ts';
import { wrapLegacyServer } from '../../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { wrapModernClient } from '../../../lib/wrap/modernClient/wrapModernClient.ts';
import { wrapModernServer } from '../../../lib/wrap/modernServer/wrapModernServer.ts';
import { ROOT } from '../../helpers/everything.ts';
import type { ClientEra, Link } from './clients.ts';
import type { Command, ServerEra, ServerUnderTest, TransportKind } from './servers.ts';

export const CLIENT_ERAS: readonly ClientEra[] = ['modern', 'dual', 'legacy'];
export const SERVER_ERAS: readonly ServerEra[] = ['modern', 'dual', 'legacy'];
export const TRANSPORTS: readonly TransportKind[] = ['stdio', 'http'];

/** How the client reaches the server: directly, or through one of the wraps. */
export type Route = 'native' | 'wrapLegacyServer' | 'wrapModernClient' | 'wrapLegacyClient' | 'wrapModernServer';

export interface Variant {
  readonly client: ClientEra;
  readonly server: ServerEra;
  readonly transport: TransportKind;
  readonly route: Route;
  /** `refused`: the unwrapped attempt at a cell that needs a wrap, which must fail to connect. */
  readonly expect: 'pass' | 'refused';
  /** The dual-era server over HTTP on `createMcpHandler`'s default: legacy requests served statelessly. */
  readonly stateless?: true;
}

/** The remedies for the cells the eras cannot meet in alone; every other cell is native. */
export function remedies(client: ClientEra, server: ServerEra): readonly Route[] {
  if (client === 'modern' && server === 'legacy') return ['wrapLegacyServer', 'wrapModernClient'];
  if (client === 'legacy' && server === 'modern') return ['wrapLegacyClient', 'wrapModernServer'];
  return [];
}

/** Every variant of every cell, in report order. */
export function allVariants(transports: readonly TransportKind[] = TRANSPORTS): Variant[] {
  const out: Variant[] = [];
  for (const client of CLIENT_ERAS) {
    for (const server of SERVER_ERAS) {
      for (const transport of transports) {
        const fixes = remedies(client, server);
        if (fixes.length === 0) out.push({ client, server, transport, route: 'native', expect: 'pass' });
        if (client === 'legacy' && server === 'dual' && transport === 'http') {
          // The v2 SDK's default answers each legacy request statelessly; talking modern to it restores what that loses.
          for (const route of ['native', 'wrapLegacyClient', 'wrapModernServer'] as const)
            out.push({ client, server, transport, route, expect: 'pass', stateless: true });
        }
        if (fixes.length > 0) {
          out.push({ client, server, transport, route: 'native', expect: 'refused' });
          for (const route of fixes) out.push({ client, server, transport, route, expect: 'pass' });
        }
      }
    }
  }
  return out;
}

/** A stable name for a variant: `modern×legacy/http/wrapLegacyServer`, `legacy×dual(stateless)/http/native`. */
export function variantId(v: Variant): string {
  return `${v.client}×${v.server}${v.stateless ? '(stateless)' : ''}/${v.transport}/${v.route}`;
}

/** `mcp-dual-era serve …` run by this Node with tsx, in front of `upstream`'s command line. */
function serveCommand(flags: readonly string[], upstream: Command): Extract<Link, { kind: 'stdio' }> {
  return {
    kind: 'stdio',
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      resolve(ROOT, 'lib/cli/main.ts'),
      'serve',
      ...flags,
      '--stdio',
      '--quiet',
      '--',
      upstream.command,
      ...upstream.args,
    ],
    cwd: ROOT,
    env: upstream.env,
  };
}

/** What the client connects to on `route`, and what to close afterwards (the client closes first). */
export async function linkFor(route: Route, server: ServerUnderTest): Promise<{ link: Link; close(): Promise<void> }> {
  const none = async () => {};
  if (server.transport === 'stdio') {
    const { command } = server;
    const child = { ...command, stderr: 'ignore' as const };
    switch (route) {
      case 'native':
        return { link: { kind: 'stdio', ...command }, close: none };
      case 'wrapLegacyServer':
        return { link: serveCommand([], command), close: none };
      case 'wrapModernServer':
        return { link: serveCommand(['--modern'], command), close: none };
      case 'wrapModernClient':
        return { link: { kind: 'transport', make: () => wrapModernClient(child, { cache: new VerdictCache() }) }, close: none };
      case 'wrapLegacyClient':
        return { link: { kind: 'transport', make: () => wrapLegacyClient(new StdioChildTransport(child)) }, close: none };
    }
  }
  const { url } = server;
  switch (route) {
    case 'native':
      return { link: { kind: 'http', url }, close: none };
    case 'wrapModernClient':
      return { link: { kind: 'transport', make: () => wrapModernClient({ url }, { cache: new VerdictCache() }) }, close: none };
    case 'wrapLegacyClient':
      return { link: { kind: 'transport', make: () => wrapLegacyClient(url) }, close: none };
    case 'wrapLegacyServer':
    case 'wrapModernServer': {
      const wrap = route === 'wrapLegacyServer' ? wrapLegacyServer({ upstream: httpBackend({ url }) }) : wrapModernServer(url);
      const front = await serveNodeHttp(wrap, { port: 0 });
      return {
        link: { kind: 'http', url: `${front.origin}/mcp` },
        async close() {
          await wrap.close();
          await front.close();
        },
      };
    }
  }
}
