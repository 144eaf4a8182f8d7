/**
 * `serve --modern` in front of a modern-only server: a modern client's requests are the server's
 * own business, and pass through as they are (its `server/discover`, lists, calls, and the
 * `input_required` rounds the server itself asks), over HTTP and over stdio, beside the legacy
 * clients the command exists for. The modern-only fixture (v2 SDK) behind the built command; a v2
 * SDK client pinned to 2026-07-28, and a v1 SDK client on the same endpoint.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { builtCli } from '../../helpers/built.ts';
import { ROOT, textOf } from '../../helpers/everything.ts';
import { PINNED } from '../../helpers/modernClient.ts';
import { servingUrl } from '../../helpers/servingUrl.ts';

const FIXTURE = [process.execPath, '--import', 'tsx', resolve(ROOT, 'fixtures/servers/modernStdioMain.ts')];

/** A modern client that answers the server's elicitation with a name. */
function modernClient(): { client: Client; asked: string[] } {
  const client = new Client({ name: 'pass-through-spec', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  return { client, asked };
}

/** What a modern client sees of the fixture: its own name, its tools, a call, and a call with a round. */
async function assertServed(client: Client, asked: string[]): Promise<void> {
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.is(client.getServerVersion()?.name, 'modern-fixture', 'the server describes itself');
  const tools = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(tools.includes('echo') && tools.includes('ask_name'), tools.join(', '));
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'through serve --modern' } })), 'through serve --modern');
  assert.is(textOf(await client.callTool({ name: 'ask_name', arguments: {} })), 'Hello, Ada! (state intact)');
  assert.equal(asked, ['What is your name?'], 'the server’s own round reached the client');
}

const pass = suite('serve --modern: a modern client’s requests pass through to the modern server');
let serving: ChildProcess | undefined;
pass.after(() => {
  serving?.kill('SIGKILL');
});

pass('should serve a modern client over HTTP, beside a legacy client', async () => {
  serving = spawn(process.execPath, [builtCli(), 'serve', '--modern', '--port', '0', '--', ...FIXTURE], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await servingUrl(serving).url;
  const discover = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'server/discover',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'server/discover',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'curl', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const discovered = (await discover.json()) as { id: number; result?: { supportedVersions: string[] } };
  assert.is(discover.status, 200, JSON.stringify(discovered));
  assert.is(discovered.id, 7);
  assert.ok(discovered.result?.supportedVersions.includes('2026-07-28'), JSON.stringify(discovered));
  const { client, asked } = modernClient();
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const legacy = new LegacyClient({ name: 'legacy-beside', version: '1.0.0' });
  const legacyTransport = new LegacyHttpTransport(new URL(url));
  try {
    await client.connect(transport as never);
    await assertServed(client, asked);
    await legacy.connect(legacyTransport);
    assert.is(textOf(await legacy.callTool({ name: 'echo', arguments: { text: 'a legacy client too' } })), 'a legacy client too');
  } finally {
    await client.close();
    await legacy.close();
  }
});

pass('should serve a modern client over stdio', async () => {
  const { client, asked } = modernClient();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [builtCli(), 'serve', '--modern', '--stdio', '--quiet', '--', ...FIXTURE],
    cwd: ROOT,
    stderr: 'ignore',
  });
  try {
    await client.connect(transport as never, { timeout: 30_000 });
    await assertServed(client, asked);
  } finally {
    await client.close();
  }
});

pass.run();
