/**
 * Interop with fastmcp 4.20 (a third-party legacy server framework, over stdio) behind
 * `wrapLegacyServer`: fastmcp asks for its client's roots only when the client declared
 * `roots.listChanged`, so the upstream sessions declare it, and the roots reach its tools: the
 * wrap's own roots, or a modern client's, asked as an MRTR round.
 */
import { resolve } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stdioBackend } from '../../lib/session/backend.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { Cancellation } from '../../lib/util/signals.ts';
import { modernRequest } from '../helpers/messages.ts';
import { textOf } from '../helpers/everything.ts';

const TSX = resolve(import.meta.dirname, '../../node_modules/.bin/tsx');
const FASTMCP_ROOTS = resolve(import.meta.dirname, '../../fixtures/servers/fastmcpRootsStdio.ts');
const CONFIGURED = [{ uri: 'file:///srv/configured', name: 'configured' }];
const CLIENTS = [{ uri: 'file:///home/ada/project', name: 'project' }];

function fastmcpWrap(roots?: typeof CONFIGURED): LegacyServerWrap {
  return wrapLegacyServer({ upstream: stdioBackend({ command: TSX, args: [FASTMCP_ROOTS] }), ...(roots ? { roots } : {}) });
}

const roots = suite('wrapLegacyServer and fastmcp roots');

roots('should give fastmcp the wrap roots: it asks once the session declares roots.listChanged', async () => {
  const wrap = fastmcpWrap(CONFIGURED);
  try {
    const answer = await wrap.serveModern(modernRequest('tools/call', { name: 'workspace', arguments: {} }), {
      principal: 'ada',
      signal: new Cancellation(),
      notify: () => {},
    });
    const message = answer!.message as { result?: { content: Array<{ type: string; text: string }> } };
    assert.equal(JSON.parse(message.result!.content[0]!.text), ['file:///srv/configured']);
    assert.equal(
      wrap.pool.sessions()[0]!.key.capabilities['roots'],
      { listChanged: true },
      'declared upstream although the client declared no roots',
    );
  } finally {
    await wrap.close();
  }
});

roots('should not declare roots upstream when neither the wrap nor the client has any', async () => {
  const wrap = fastmcpWrap();
  try {
    const answer = await wrap.serveModern(modernRequest('tools/call', { name: 'workspace', arguments: {} }), {
      principal: 'ada',
      signal: new Cancellation(),
      notify: () => {},
    });
    const message = answer!.message as { result?: { content: Array<{ type: string; text: string }> } };
    assert.equal(JSON.parse(message.result!.content[0]!.text), []);
    assert.is(wrap.pool.sessions()[0]!.key.capabilities['roots'], undefined);
  } finally {
    await wrap.close();
  }
});

/** fastmcp's `workspace` tool called by a modern client with roots of its own, over HTTP: the roots it saw, and how often the client was asked. */
async function workspaceThrough(wrap: LegacyServerWrap): Promise<{ roots: string[]; asked: number }> {
  const http = await serveNodeHttp(wrap, { port: 0 });
  const client = new ModernClient(
    { name: 'modern-spec', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { roots: {} } },
  );
  let asked = 0;
  client.setRequestHandler('roots/list', async () => {
    asked++;
    return { roots: CLIENTS };
  });
  try {
    await client.connect(new ModernHttpTransport(new URL(`${http.origin}/mcp`)) as never);
    const result = await client.callTool({ name: 'workspace', arguments: {} });
    return { roots: JSON.parse(textOf(result)) as string[], asked };
  } finally {
    await client.close();
    await http.close();
    await wrap.close();
  }
}

roots("should let a modern client's tool call that needs roots get the client's own, as an input round", async () => {
  assert.equal(await workspaceThrough(fastmcpWrap()), { roots: ['file:///home/ada/project'], asked: 1 });
});

roots("should give fastmcp the wrap roots over a modern client's own: the operator's answer wins", async () => {
  assert.equal(await workspaceThrough(fastmcpWrap(CONFIGURED)), { roots: ['file:///srv/configured'], asked: 0 });
});

roots.run();
