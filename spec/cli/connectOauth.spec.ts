/**
 * `mcp-dual-era connect <url> --oauth` as hosts run it, against OAuth-protected servers: the host's
 * first request waits while the sign-in URL printed on stderr is followed, then tools and elicitation
 * work (v1 host → modern server, pinned modern host → legacy server); tokens are kept 0600, a second
 * run signs in no more, expiry refreshes silently, a refused refresh token asks for a new sign-in,
 * a foreign `resource_metadata` is refused unfetched, and misused options exit 2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OAuthStore, serverFolderName } from '../../lib/auth/oauthStore.ts';
import { SignInProvider } from '../../lib/auth/signInProvider.ts';
import { oauthProvider, type OAuthValues } from '../../lib/cli/oauthOptions.ts';
import { startAuthServer, type AuthServer } from '../../fixtures/servers/oauth/authServer.ts';
import { startProtectedLegacyServer, type ProtectedLegacyServer } from '../../fixtures/servers/oauth/protectedLegacyHttp.ts';
import { startProtectedModernServer, type ProtectedModernServer } from '../../fixtures/servers/oauth/protectedModernHttp.ts';
import { ROOT, sleep } from '../helpers/everything.ts';
import { connectCommand } from '../helpers/modernFixture.ts';
import { PINNED } from '../helpers/modernClient.ts';
import { authorizationUrlFrom, followAuthorization } from '../helpers/oauthBrowser.ts';

const mode = (path: string) => statSync(path).mode & 0o777;
const textOf = (result: unknown) => (result as { content: Array<{ text?: string }> }).content[0]?.text ?? '';

/** Plays the user: follows every sign-in URL the bridge prints on stderr, as a browser would. */
class Browser {
  stderr = '';
  readonly urls: URL[] = [];
  readonly errors: unknown[] = [];
  #partial = '';

  watch(stream: Readable | null): void {
    stream?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.stderr += text;
      const lines = (this.#partial + text).split('\n');
      this.#partial = lines.pop()!;
      for (const line of lines) {
        const url = authorizationUrlFrom(line);
        if (!url) continue;
        this.urls.push(url);
        followAuthorization(url).catch((e: unknown) => this.errors.push(e));
      }
    });
  }
}

/** The args of `connect --oauth --no-browser --oauth-dir <dir> <url>` (quiet: stderr holds the sign-in lines and errors only). */
function oauthConnect(url: URL | string, dir: string, extra: readonly string[] = []) {
  return connectCommand(['--oauth', '--no-browser', '--oauth-dir', dir, ...extra, String(url)]);
}

/** A v1 SDK host (with an elicitation handler that confirms) through `connect --oauth` to `url`. */
async function v1Host(url: URL | string, dir: string): Promise<{ client: V1Client; browser: Browser; pid: number | null }> {
  const { command, args, cwd } = oauthConnect(url, dir);
  const transport = new V1StdioClientTransport({ command, args, cwd, env: { ...process.env } as Record<string, string>, stderr: 'pipe' });
  const browser = new Browser();
  browser.watch(transport.stderr as Readable | null);
  const client = new V1Client({ name: 'v1-host', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ok: true } }));
  await client.connect(transport);
  return { client, browser, pid: transport.pid };
}

let as: AuthServer;
let modern: ProtectedModernServer;
let legacy: ProtectedLegacyServer;
const dirs: string[] = [];
const pids: number[] = [];
const tiny: Server[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-connect-oauth-'));
  dirs.push(dir);
  return dir;
}

async function tearDown(): Promise<void> {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid);
    } catch {
      // Gone already.
    }
  }
  for (const server of tiny.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  await modern?.close();
  await legacy?.close();
  await as?.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

const c = suite('mcp-dual-era connect --oauth');
let sharedDir = '';

c.before(async () => {
  as = await startAuthServer();
  modern = await startProtectedModernServer({ auth: as });
  legacy = await startProtectedLegacyServer({ auth: as });
});
c.after(tearDown);

c('should take a v1 host to the protected modern-only server once the printed sign-in URL is followed, tokens kept 0600', async () => {
  sharedDir = tempDir();
  const { client, browser, pid } = await v1Host(modern.url, sharedDir);
  if (pid) pids.push(pid);
  try {
    assert.is(browser.urls.length, 1, browser.stderr);
    assert.equal(browser.errors, []);
    assert.match(browser.stderr, /^Sign in at: http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+$/m);
    const folder = join(sharedDir, serverFolderName(modern.url));
    const clientId = latest<{ client_id: string }>(new OAuthStore(sharedDir, modern.url), 'client.json').client_id;
    assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'signed in' } })), 'signed in');
    assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Go on?' } })), 'confirmed: true');
    assert.is(mode(folder), 0o700);
    for (const file of ['tokens.json', 'client.json']) assert.is(mode(join(folder, file)), 0o600, file);
    assert.equal(
      readdirSync(folder).filter((f) => f.endsWith('.tmp')),
      [],
    );
  } finally {
    await client.close();
  }
});

c('should reuse the stored tokens on a second run with the same --oauth-dir, signing in no more', async () => {
  const issued = as.issuedTokens();
  const { client, browser, pid } = await v1Host(modern.url, sharedDir);
  if (pid) pids.push(pid);
  try {
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'again' } })), 'again');
    assert.equal(browser.urls, []);
    assert.not.match(browser.stderr, 'Sign in at:');
    assert.is(as.issuedTokens(), issued, 'no token issued');
  } finally {
    await client.close();
  }
});

/**
 * The v2 client probes a base `StdioClientTransport` on a disposable sibling process whose stderr
 * it discards: the sign-in URL that sibling prints would go nowhere. A subclass is probed in place,
 * on the process whose stderr the spec reads.
 */
class InPlaceStdioClientTransport extends StdioClientTransport {}

c('should take a pinned modern host to the protected legacy server, elicitation through input_required', async () => {
  const dir = tempDir();
  const { command, args, cwd } = oauthConnect(legacy.url, dir);
  const transport = new InPlaceStdioClientTransport({
    command,
    args,
    cwd,
    env: { ...process.env } as Record<string, string>,
    stderr: 'pipe',
  });
  const browser = new Browser();
  browser.watch(transport.stderr as Readable | null);
  const client = new Client({ name: 'modern-host', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { ok: true } }));
  await client.connect(transport as never, { timeout: 60_000 });
  if (transport.pid) pids.push(transport.pid);
  try {
    assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.is(browser.urls.length, 1, browser.stderr);
    const clientId = latest<{ client_id: string }>(new OAuthStore(dir, legacy.url), 'client.json').client_id;
    assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
    assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Go on?' } })), 'confirmed: true');
    const tokens = join(dir, serverFolderName(legacy.url), 'tokens.json');
    assert.is(mode(tokens), 0o600);
    const token = latest<{ access_token: string }>(new OAuthStore(dir, legacy.url), 'tokens.json').access_token;
    assert.ok(legacy.seenTokens().includes(token), 'the legacy server saw the stored token');
  } finally {
    await client.close();
  }
});

c.run();

/** The entry saved last in a file of credentials kept by issuer (what a request carries). */
function latest<T>(store: OAuthStore, file: string): T {
  const held = store.read<{ v: number; latest: string; entries: Record<string, T> }>(file);
  assert.is(held?.v, 2, `${file} keeps its credentials by issuer`);
  assert.ok(held!.latest.startsWith('http://127.0.0.1:'), `${file} names the issuer: ${held!.latest}`);
  return held!.entries[held!.latest]!;
}

const e = suite('mcp-dual-era connect --oauth: expiry');
e.before(async () => {
  as = await startAuthServer({ tokenTtlSeconds: 2 });
  modern = await startProtectedModernServer({ auth: as });
});
e.after(tearDown);

e('should refresh an expired token silently, and ask for a new sign-in when the refresh token is refused', async () => {
  const dir = tempDir();
  const { client, browser, pid } = await v1Host(modern.url, dir);
  if (pid) pids.push(pid);
  try {
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'one' } })), 'one');
    assert.is(browser.urls.length, 1);
    // Past the two seconds every token lives.
    await sleep(2200);
    const refreshes = as.refreshes();
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'two' } })), 'two');
    assert.ok(as.refreshes() > refreshes, 'refreshed');
    assert.is(browser.urls.length, 1, 'no second sign-in');

    // The refresh token is refused too (the stored one replaced by one the server never issued).
    const store = new OAuthStore(dir, modern.url);
    const held = store.read<{ latest: string; entries: Record<string, Record<string, unknown>> }>('tokens.json')!;
    store.write('tokens.json', {
      ...held,
      entries: { ...held.entries, [held.latest]: { ...held.entries[held.latest], refresh_token: 'refused' } },
    });
    as.revokeAll();
    assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'three' } })), 'three');
    assert.is(browser.urls.length, 2, 'a second sign-in URL was printed and followed');
    assert.equal(browser.errors, []);
  } finally {
    await client.close();
  }
});

e.run();

const r = suite('mcp-dual-era connect --oauth: refusals');
r.after(tearDown);

r('should refuse resource_metadata on another origin with a clear error, fetching nothing from it', async () => {
  const listen = async (handler: Parameters<typeof createServer>[1]) => {
    const server = createServer(handler);
    tiny.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const fetched: string[] = [];
  const elsewhere = await listen((req, res) => {
    fetched.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  const evil = await listen((_req, res) =>
    res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${elsewhere}/.well-known/oauth-protected-resource"` }).end(),
  );
  const dir = tempDir();
  let error: unknown;
  const { command, args, cwd } = oauthConnect(`${evil}/mcp`, dir);
  const transport = new V1StdioClientTransport({ command, args, cwd, env: { ...process.env } as Record<string, string>, stderr: 'pipe' });
  const browser = new Browser();
  browser.watch(transport.stderr as Readable | null);
  const client = new V1Client({ name: 'v1-host', version: '1.0.0' });
  try {
    await client.connect(transport).catch((e: unknown) => (error = e));
    if (transport.pid) pids.push(transport.pid);
  } finally {
    await client.close();
  }
  assert.instance(error, Error);
  assert.match(
    (error as Error).message,
    new RegExp(`names resource metadata at ${elsewhere}, another origin than ${evil}.*it was not fetched`),
  );
  assert.equal(fetched, [], 'nothing was fetched from the other origin');
  assert.equal(browser.urls, []);
});

r('should refuse --oauth with a command, with --header Authorization, and its options without it (exit 2)', async () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; err: string }>((done) => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'lib/cli/main.ts'), 'connect', ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      if (child.pid) pids.push(child.pid);
      let err = '';
      child.stderr.on('data', (chunk) => (err += chunk));
      child.on('close', (code) => done({ code, err }));
    });
  const [command, header, alone, port] = await Promise.all([
    run(['--oauth', '--', process.execPath, '-e', '0']),
    run(['--oauth', '--header', 'authorization: Bearer x', 'http://127.0.0.1:9/mcp']),
    run(['--no-browser', 'http://127.0.0.1:9/mcp']),
    run(['--oauth', '--callback-port', '99999', 'http://127.0.0.1:9/mcp']),
  ]);
  assert.is(command.code, 2);
  assert.match(command.err, '--oauth signs in to an HTTP server: give its URL, not a command');
  assert.is(header.code, 2);
  assert.match(header.err, '--oauth sends its own Authorization header');
  assert.is(alone.code, 2);
  assert.match(alone.err, '--no-browser goes with --oauth');
  assert.is(port.code, 2);
  assert.match(port.err, '--callback-port must be a port number from 1 to 65535, not 99999');
});

r('should read the sign-in options into the provider they describe, and refuse those that do not go together', async () => {
  const url = new URL('https://mcp.example.com/mcp');
  const env = { MCP_SECRET: 's3cret', EMPTY: '' };
  const refused = async (values: OAuthValues) => {
    const read = await oauthProvider(values, url, env);
    return read.ok ? 'accepted' : read.message;
  };
  assert.is(await refused({ dpop: true }), '--dpop goes with --oauth');
  assert.is(await refused({ 'client-id': 'c', 'client-secret-env': 'MCP_SECRET' }), '--client-id, --client-secret-env go with --oauth');
  assert.match(await refused({ oauth: true, 'client-secret-env': 'MCP_SECRET' }), '--client-secret-env goes with --client-id');
  assert.match(
    await refused({ oauth: true, 'client-id': 'c', 'client-secret-env': 'UNSET_VARIABLE' }),
    '--client-secret-env names UNSET_VARIABLE, which is not set (or empty)',
  );
  assert.match(await refused({ oauth: true, 'client-id': 'c', 'client-secret-env': 'EMPTY' }), 'which is not set (or empty)');
  assert.match(
    await refused({ oauth: true, 'client-metadata-url': 'http://client.example.com/doc.json' }),
    '--client-metadata-url must be an https URL with a path',
  );
  assert.match(
    await refused({ oauth: true, 'client-metadata-url': 'https://client.example.com/' }),
    '--client-metadata-url must be an https URL with a path',
  );
  assert.match(await refused({ oauth: true, grant: 'client-credentials' }), '--grant client-credentials needs --client-id');
  assert.match(
    await refused({ oauth: true, grant: 'client-credentials', 'client-id': 'c' }),
    'needs one of --client-secret-env and --private-key-file',
  );
  assert.match(
    await refused({ oauth: true, grant: 'client-credentials', 'client-id': 'c', 'client-secret-env': 'MCP_SECRET', 'no-browser': true }),
    '--no-browser is for a person',
  );
  assert.match(await refused({ oauth: true, grant: 'password' }), '--grant is authorization-code');
  assert.match(await refused({ oauth: true, 'private-key-file': '/nowhere.pem' }), 'goes with --grant client-credentials');
  assert.match(
    await refused({ oauth: true, grant: 'client-credentials', 'client-id': 'c', 'private-key-file': '/nowhere.pem' }),
    '--private-key-file /nowhere.pem cannot be read',
  );
  assert.match(await refused({ oauth: true, issuer: 'https://as.example.com' }), '--issuer names the authorization server');
  // What is accepted: a person's sign-in with a metadata document, a pre-registered confidential client, and a program's own credentials.
  const signIn = await oauthProvider(
    {
      oauth: true,
      'client-metadata-url': 'https://client.example.com/mcp.json',
      'client-id': 'pre',
      'client-secret-env': 'MCP_SECRET',
      issuer: 'https://as.example.com/',
      dpop: true,
      'oauth-dir': mkdtempSync(join(tmpdir(), 'mde-oauth-options-')),
    },
    url,
    env,
  );
  assert.ok(signIn.ok && signIn.value instanceof SignInProvider);
  if (signIn.ok && signIn.value instanceof SignInProvider) {
    assert.is(signIn.value.clientMetadataUrl, 'https://client.example.com/mcp.json');
    assert.equal(signIn.value.clientInformation({ issuer: 'https://as.example.com' }), {
      client_id: 'pre',
      client_secret: 's3cret',
      issuer: 'https://as.example.com/',
    });
    assert.type(signIn.value.dpop, 'function');
    rmSync(signIn.value.store.dir, { recursive: true, force: true });
  }
  const machine = await oauthProvider(
    { oauth: true, grant: 'client-credentials', 'client-id': 'svc', 'client-secret-env': 'MCP_SECRET' },
    url,
    env,
  );
  assert.ok(machine.ok && machine.value !== undefined);
  if (machine.ok && machine.value) {
    assert.is(machine.value.redirectUrl, undefined, 'no browser, no redirect');
    assert.is((await machine.value.clientInformation())?.client_id, 'svc');
  }
});

r.run();
