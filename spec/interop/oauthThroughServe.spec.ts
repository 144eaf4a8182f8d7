/**
 * `serve --upstream <url> --pass-authorization` in front of an OAuth-protected legacy server (the
 * v1 SDK's auth router and bearer middleware, tokens issued for the front's URL): a v2 client
 * pinned to 2026-07-28 and a v1 client both sign in through the front as they would at the server
 * itself (the 401, the metadata, registration, PKCE), call tools and answer elicitation rounds;
 * an expired token is refreshed and the call goes on; a parked call's retry with another caller's
 * token is refused; a configuration that would pass tokens to another resource is refused.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startAuthServer, type AuthServer } from '../../fixtures/servers/oauth/authServer.ts';
import { startProtectedLegacyServer, type ProtectedLegacyServer } from '../../fixtures/servers/oauth/protectedLegacyHttp.ts';
import { TestOAuthProvider, signIn } from '../helpers/oauthTestProvider.ts';
import { freePort } from '../helpers/nginx.ts';
import { PINNED } from '../helpers/modernClient.ts';
import { modernPost } from '../helpers/modernHttp.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'lib/cli/main.ts');

interface World {
  auth: AuthServer;
  upstream: ProtectedLegacyServer;
  serve: ChildProcess;
  /** The front's endpoint: the resource tokens are issued for. */
  url: URL;
}

/** Runs the command to its end, this process serving meanwhile. */
function runCli(args: readonly string[]): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((done) =>
    child.once('exit', (status) => {
      clearTimeout(timer);
      done({ status, stderr });
    }),
  );
}

function startServe(args: readonly string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolveUrl, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const m = /serving .* at (http:\/\/\S+)/.exec(err);
      if (m) resolveUrl({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

async function startWorld(): Promise<World> {
  const auth = await startAuthServer();
  const port = await freePort();
  const front = new URL(`http://127.0.0.1:${port}/mcp`);
  const upstream = await startProtectedLegacyServer({ auth, resourceUrl: front });
  const { child } = await startServe(['--port', String(port), '--upstream', upstream.url.href, '--pass-authorization']);
  return { auth, upstream, serve: child, url: front };
}

async function stopWorld(world: World | undefined): Promise<void> {
  if (!world) return;
  world.serve.kill('SIGKILL');
  await world.upstream.close();
  await world.auth.close();
}

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

/** A v2 client pinned to 2026-07-28, answering elicitation, signed in through the front. */
async function v2SignedIn(url: URL, provider: TestOAuthProvider): Promise<{ client: V2Client; asked: string[] }> {
  const asked: string[] = [];
  return signIn(() => {
    const client = new V2Client({ name: 'oauth-v2-spec', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { ok: true } };
    });
    const transport = new V2Transport(url, { authProvider: provider });
    return { transport, connect: async () => (await client.connect(transport), { client, asked }) };
  }, provider);
}

/** A v1 (1.32.2) client, answering elicitation, signed in through the front. */
async function v1SignedIn(url: URL, provider: TestOAuthProvider): Promise<{ client: V1Client; asked: string[]; transport: V1Transport }> {
  const asked: string[] = [];
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  return signIn(() => {
    const client = new V1Client({ name: 'oauth-v1-spec', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { ok: true } };
    });
    const transport = new V1Transport(url, { authProvider: provider });
    return { transport, connect: async () => (await client.connect(transport), { client, asked, transport }) };
  }, provider);
}

const front = suite<{ world?: World }>('serve --pass-authorization: signing in through the front');
front.before(async (ctx) => {
  ctx.world = await startWorld();
});
front.after(async (ctx) => stopWorld(ctx.world));

front('should answer a request without credentials with the upstream 401, its challenge pointing at the front', async ({ world }) => {
  const answer = await fetch(world!.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
    }),
  });
  assert.is(answer.status, 401);
  const challenge = answer.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer /);
  assert.match(challenge, `resource_metadata="http://127.0.0.1:${world!.url.port}/.well-known/oauth-protected-resource/mcp"`);
  assert.not.match(challenge, world!.upstream.url.host);
  const body = (await answer.json()) as { id: unknown; error: { data: { httpStatus: number } } };
  assert.is(body.id, 1);
  assert.is(body.error.data.httpStatus, 401);
});

front('should send a refused token upstream once, not once per attempt at opening a session', async ({ world }) => {
  const token = `made-up-${Date.now()}`;
  const answer = await modernPost(world!.url, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { principal: token });
  assert.is(answer.status, 401, JSON.stringify(answer.message));
  assert.is(world!.upstream.posts(token), 1, 'the server saw the refused token once');
});

front('should answer the protected-resource metadata on the front, naming the front as the resource', async ({ world }) => {
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const res = await fetch(new URL(path, world!.url));
    assert.is(res.status, 200, path);
    const doc = (await res.json()) as { resource: string; authorization_servers: string[] };
    assert.is(doc.resource, world!.url.href);
    assert.equal(
      doc.authorization_servers.map((s: string) => new URL(s).href),
      [world!.auth.issuer.href],
    );
  }
  const elsewhere = await fetch(new URL('/.well-known/oauth-protected-resource/other', world!.url));
  assert.is(elsewhere.status, 404);
});

front('should let a v2 client pinned to 2026-07-28 sign in, call tools and answer an elicitation round', async ({ world }) => {
  const provider = new TestOAuthProvider();
  const { client, asked } = await v2SignedIn(world!.url, provider);
  try {
    assert.is(provider.redirects, 1);
    const clientId = (await provider.clientInformation())!.client_id;
    assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'through the front' } })), 'through the front');
    assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Ship it?' } })), 'confirmed: true');
    assert.equal(asked, ['Ship it?']);
    // The upstream saw the client's own token: the front passed it on.
    assert.ok(world!.upstream.seenTokens().includes((await provider.tokens())!.access_token));
  } finally {
    await client.close();
  }
});

front('should let a v1 client sign in through the same endpoint, call tools and answer an elicitation', async ({ world }) => {
  const provider = new TestOAuthProvider();
  const { client, asked } = await v1SignedIn(world!.url, provider);
  try {
    assert.is(provider.redirects, 1);
    const clientId = (await provider.clientInformation())!.client_id;
    assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
    assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Deploy?' } })), 'confirmed: true');
    assert.equal(asked, ['Deploy?']);
  } finally {
    await client.close();
  }
});

front(
  'should refresh an expired token for a v2 client: the next call gets the 401, the client refreshes, the call goes on',
  async ({ world }) => {
    const provider = new TestOAuthProvider();
    const { client } = await v2SignedIn(world!.url, provider);
    try {
      const before = (await provider.tokens())!.access_token;
      const refreshes = world!.auth.refreshes();
      world!.auth.revokeAll();
      assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after expiry' } })), 'after expiry');
      assert.is(world!.auth.refreshes(), refreshes + 1);
      assert.is.not((await provider.tokens())!.access_token, before);
      assert.is(provider.redirects, 1, 'refreshed, not signed in again');
      assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Again?' } })), 'confirmed: true');
    } finally {
      await client.close();
    }
  },
);

front('should refresh an expired token for a v1 client, which goes on in the same session', async ({ world }) => {
  const provider = new TestOAuthProvider();
  const { client, transport } = await v1SignedIn(world!.url, provider);
  try {
    const session = transport.sessionId;
    const refreshes = world!.auth.refreshes();
    world!.auth.revokeAll();
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'v1 after expiry' } })), 'v1 after expiry');
    assert.is(world!.auth.refreshes(), refreshes + 1);
    assert.is(provider.redirects, 1);
    assert.is(transport.sessionId, session);
    assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Still?' } })), 'confirmed: true');
  } finally {
    await client.close();
  }
});

front(
  "should keep a legacy session its opener's: another caller's valid token with its id gets 404 on POST, GET and DELETE",
  async ({ world }) => {
    const alice = await v1SignedIn(world!.url, new TestOAuthProvider());
    const bobProvider = new TestOAuthProvider();
    const bob = await v1SignedIn(world!.url, bobProvider);
    try {
      const session = alice.transport.sessionId!;
      const bobToken = (await bobProvider.tokens())!.access_token;
      const headers = {
        authorization: `Bearer ${bobToken}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      };
      const call = await fetch(world!.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'as alice' } } }),
      });
      assert.is(call.status, 404, `a call on another's session: ${await call.text()}`);
      const listen = await fetch(world!.url, { method: 'GET', headers });
      assert.is(listen.status, 404, "another's GET stream");
      await listen.body?.cancel();
      const closed = await fetch(world!.url, { method: 'DELETE', headers });
      assert.is(closed.status, 404, "another's DELETE");
      assert.is(
        textOf(await alice.client.callTool({ name: 'echo', arguments: { text: 'still mine' } })),
        'still mine',
        'the session is still its opener’s',
      );
      assert.is(alice.transport.sessionId, session);
      assert.is(textOf(await bob.client.callTool({ name: 'echo', arguments: { text: 'my own' } })), 'my own');
    } finally {
      await alice.client.close();
      await bob.client.close();
    }
  },
);

front("should refuse a parked call's retry that carries another caller's token", async ({ world }) => {
  const alice = new TestOAuthProvider();
  const bob = new TestOAuthProvider();
  const a = await v2SignedIn(world!.url, alice);
  const b = await v2SignedIn(world!.url, bob);
  try {
    const aliceToken = (await alice.tokens())!.access_token;
    const bobToken = (await bob.tokens())!.access_token;
    const capabilities = { elicitation: { form: {} } };
    const first = await modernPost(
      world!.url,
      'tools/call',
      { name: 'confirm', arguments: { question: 'Whose?' } },
      { principal: aliceToken, capabilities },
    );
    assert.is(first.status, 200);
    assert.is(first.message.result?.resultType, 'input_required');
    const key = Object.keys(first.message.result.inputRequests)[0]!;
    const retry = {
      name: 'confirm',
      arguments: { question: 'Whose?' },
      requestState: first.message.result.requestState,
      inputResponses: { [key]: { action: 'accept', content: { ok: true } } },
    };
    const stolen = await modernPost(world!.url, 'tools/call', retry, { principal: bobToken, capabilities, id: 2 });
    assert.ok(stolen.message.error, JSON.stringify(stolen.message));
    assert.is(stolen.message.error.code, -32602);
    assert.match(stolen.message.error.message, /caller|principal/i);
  } finally {
    await a.client.close();
    await b.client.close();
  }
});

front.run();

const refusals = suite('serve --pass-authorization: configurations that would pass a token on are refused');

refusals('should refuse to start when the upstream is another resource than the front (token passthrough)', async () => {
  const auth = await startAuthServer();
  const upstream = await startProtectedLegacyServer({ auth });
  try {
    const port = await freePort();
    // Run without blocking: the upstream it asks lives in this process.
    const run = await runCli([
      'serve',
      '--port',
      String(port),
      '--upstream',
      upstream.url.href,
      '--pass-authorization',
      '--public-url',
      'http://127.0.0.1:9/elsewhere',
    ]);
    assert.is(run.status, 2, run.stderr);
    assert.match(run.stderr, 'token passthrough');
    assert.match(run.stderr, upstream.url.href.replace(/\/$/, ''));
    assert.equal(upstream.seenTokens(), [], 'no token was sent upstream');
  } finally {
    await upstream.close();
    await auth.close();
  }
});

refusals('should refuse --pass-authorization without an HTTP upstream, or on stdio', () => {
  const command = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'serve', '--pass-authorization', '--', 'node', '-e', ''], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.is(command.status, 2);
  assert.match(command.stderr, '--pass-authorization');
  assert.match(command.stderr, '--upstream');
  const stdio = spawnSync(
    process.execPath,
    ['--import', 'tsx', CLI, 'serve', '--stdio', '--pass-authorization', '--upstream', 'http://127.0.0.1:9/mcp'],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  assert.is(stdio.status, 2);
  assert.match(stdio.stderr, '--stdio');
});

refusals.run();
