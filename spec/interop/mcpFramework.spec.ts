/**
 * Interop with mcp-framework 0.2 (a third-party legacy server framework) over its own Streamable
 * HTTP transport, which sends a server-initiated request to every open session: fronted by
 * `wrapLegacyServer({ upstream: httpBackend({ url }) })` and by `mcp-dual-era serve --upstream`,
 * its tool's elicitation reaches the modern client that called it, as one input round, even with
 * other upstream sessions open; and never the client of another principal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { httpBackend } from '../../lib/session/backend.ts';
import { Cancellation } from '../../lib/util/signals.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { listeningPort, LOOPBACK_PRELOAD, textOf } from '../helpers/everything.ts';
import { modernRequest } from '../helpers/messages.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');
const CLI = resolve(ROOT, 'lib/cli/main.ts');
const FRAMEWORK = resolve(ROOT, 'fixtures/servers/mcpFrameworkHttp.ts');
const ELICITING = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };

/** A port free right now (mcp-framework reads 0 as "the default port", so one is chosen for it). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

let framework: ChildProcess;
let url: string;
const s = suite('mcp-framework over its Streamable HTTP transport, fronted by the wrap');
async function startFramework(): Promise<void> {
  framework = spawn(TSX, ['--import', LOOPBACK_PRELOAD, FRAMEWORK], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(await freePort()) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  url = `http://127.0.0.1:${await listeningPort(framework, 'mcp-framework')}/mcp`;
}
async function stopFramework(): Promise<void> {
  if (framework.exitCode === null) {
    framework.kill('SIGTERM');
    await new Promise((r) => framework.once('exit', r));
  }
}
s.before(startFramework);
s.after(stopFramework);

/** The text of a tool result: mcp-framework sends a string result JSON-encoded. */
function said(result: unknown): unknown {
  return JSON.parse(textOf(result));
}

/** A modern client (pinned to 2026-07-28) that answers elicitations with `name`. */
async function elicitingClient(endpoint: string, name: string): Promise<{ client: ModernClient; asked: string[] }> {
  const client = new ModernClient(
    { name: 'modern-spec', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
  );
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { name } };
  });
  await client.connect(new ModernHttpTransport(new URL(endpoint)) as never);
  return { client, asked };
}

s("should give the tool's elicitation to the client that called it, though an idle session got a copy", async () => {
  const wrap = wrapLegacyServer({ upstream: httpBackend({ url }) });
  const http = await serveNodeHttp(wrap, { port: 0 });
  const unrelated: string[] = [];
  wrap.events.on('unrelated-push', ({ method }) => unrelated.push(method));
  try {
    // The session serve opens at startup to describe the upstream: open, idle, and sent every push.
    const described = await wrap.serveModern(modernRequest('server/discover'), {
      principal: 'anonymous',
      signal: new Cancellation(),
      notify: () => {},
    });
    assert.ok(described && 'result' in described.message);
    const { client, asked } = await elicitingClient(`${http.origin}/mcp`, 'Ada');
    try {
      assert.is(wrap.pool.size, 2, 'the idle session and the caller’s');
      assert.is(said(await client.callTool({ name: 'ask_name', arguments: {} })), 'Hello, Ada!');
      assert.equal(asked, ['What is your name?']);
      assert.equal(unrelated, [], 'no copy was answered as outside any call');
    } finally {
      await client.close();
    }
  } finally {
    await http.close();
    await wrap.close();
  }
});

s('should not give one principal the push of a call of another', async () => {
  const wrap = wrapLegacyServer({ upstream: httpBackend({ url }) });
  try {
    const ctx = (principal: string) => ({ principal, signal: new Cancellation(), notify: () => {} });
    // Two principals' calls in flight when the (broadcast) pushes come: neither can be told apart.
    const [ada, bob] = await Promise.all([
      wrap.serveModern(modernRequest('tools/call', { name: 'slow_ask', arguments: {} }, ELICITING, 1), ctx('ada')),
      wrap.serveModern(modernRequest('tools/call', { name: 'slow_ask', arguments: {} }, ELICITING, 2), ctx('bob')),
    ]);
    for (const answer of [ada, bob]) {
      const result = (answer!.message as { result?: { resultType?: string; content?: unknown } }).result;
      assert.is.not(result?.resultType, 'input_required', JSON.stringify(answer!.message));
    }
  } finally {
    await wrap.close();
  }
});
s.run();

const cli = suite('mcp-framework fronted by mcp-dual-era serve --upstream');
cli.before(startFramework);
cli("should give the tool's elicitation to the modern client that called it", async () => {
  const serve = spawn(TSX, [CLI, 'serve', '--upstream', url, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    let err = '';
    const endpoint = await new Promise<string>((resolveUrl, reject) => {
      serve.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /serving .* at (http:\/\/\S+)/.exec(err);
        if (m) resolveUrl(m[1]!);
      });
      serve.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    const { client, asked } = await elicitingClient(endpoint, 'Grace');
    try {
      assert.is(said(await client.callTool({ name: 'ask_name', arguments: {} })), 'Hello, Grace!');
      assert.equal(asked, ['What is your name?']);
    } finally {
      await client.close();
    }
  } finally {
    serve.kill('SIGTERM');
    await new Promise((r) => (serve.exitCode !== null ? r(null) : serve.once('exit', r)));
  }
});
cli.after(stopFramework);
cli.run();
