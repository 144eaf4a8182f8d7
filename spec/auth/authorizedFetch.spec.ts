/**
 * `authorizedFetch` against a real authorization server and real protected MCP servers, the browser
 * played by `followAuthorization`: sign-in on the first 401, one sign-in for concurrent requests,
 * refresh before expiry and on a revoked token, a new sign-in when the refresh token is refused, no
 * loop, `insufficient_scope`, refusals (foreign `resource_metadata`, an unsafe authorization URL),
 * a plain SDK provider's `UnauthorizedError`; then both client wraps with `authProvider`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  auth,
  Client,
  UnauthorizedError,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { authorizedFetch } from '../../lib/auth/authorizedFetch.ts';
import { SignInProvider } from '../../lib/auth/signInProvider.ts';
import { wrapLegacyClient } from '../../lib/wrap/legacyClient/wrapLegacyClient.ts';
import { wrapModernClient } from '../../lib/wrap/modernClient/wrapModernClient.ts';
import { startAuthServer, type AuthServer } from '../../fixtures/servers/oauth/authServer.ts';
import { startProtectedLegacyServer, type ProtectedLegacyServer } from '../../fixtures/servers/oauth/protectedLegacyHttp.ts';
import { startProtectedModernServer, type ProtectedModernServer } from '../../fixtures/servers/oauth/protectedModernHttp.ts';
import { authorizationCode, followAuthorization } from '../helpers/oauthBrowser.ts';
import { PINNED } from '../helpers/modernClient.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '1' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let as: AuthServer;
let legacy: ProtectedLegacyServer;
let modern: ProtectedModernServer;
const dirs: string[] = [];
const servers: Server[] = [];

/** A SignInProvider in a fresh folder whose "browser" follows the authorization URL at once. */
function signIn(serverUrl: string | URL): { provider: SignInProvider; opened: string[]; browserErrors: unknown[] } {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-fetch-'));
  dirs.push(dir);
  const opened: string[] = [];
  const browserErrors: unknown[] = [];
  const provider = new SignInProvider({
    serverUrl,
    dir,
    output: { write: () => true },
    opener: (url) => {
      opened.push(url);
      followAuthorization(url).catch((e: unknown) => browserErrors.push(e));
    },
  });
  return { provider, opened, browserErrors };
}

const initialize = (f: typeof fetch, url: URL | string) => f(url, { method: 'POST', headers: HEADERS, body: INITIALIZE });

/** A tiny HTTP server for what the fixtures do not do (a server that misbehaves); its requests are counted by path. */
async function tinyServer(
  handler: (req: IncomingMessage, res: ServerResponse, origin: string) => void,
): Promise<{ origin: string; hits: string[] }> {
  const hits: string[] = [];
  let origin = '';
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res, origin);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, hits };
}

async function setUp(): Promise<void> {
  as = await startAuthServer();
  legacy = await startProtectedLegacyServer({ auth: as });
  modern = await startProtectedModernServer({ auth: as });
}

async function tearDown(): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  await legacy?.close();
  await modern?.close();
  await as?.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

const f = suite('authorizedFetch');
f.before(setUp);
f.after(tearDown);

f('should sign in on the first 401, then send the request again with the token', async () => {
  const { provider, opened, browserErrors } = signIn(legacy.url);
  const fetch = authorizedFetch(provider, legacy.url);
  const response = await initialize(fetch, legacy.url);
  assert.is(response.status, 200);
  assert.match(await response.text(), /protected-legacy-fixture/);
  assert.is(opened.length, 1, 'one sign-in');
  assert.equal(browserErrors, []);
  const token = provider.tokens()?.access_token;
  assert.ok(token);
  assert.equal(legacy.seenTokens(), [token], 'the first request carried no token, the second the new one');
  assert.ok(provider.clientInformation()?.client_id, 'registered');
  assert.ok(typeof (provider.tokens() as { expires_at?: unknown }).expires_at === 'number');
});

f('should use the stored token without signing in again, and send a Request object again after a sign-in', async () => {
  const { provider, opened } = signIn(legacy.url);
  const first = await initialize(authorizedFetch(provider, legacy.url), legacy.url);
  await first.text();
  const issued = as.issuedTokens();
  const again = await initialize(authorizedFetch(provider, legacy.url), legacy.url);
  assert.is(again.status, 200);
  await again.text();
  assert.is(as.issuedTokens(), issued, 'no new token');
  assert.is(opened.length, 1);

  const other = signIn(legacy.url);
  const response = await authorizedFetch(
    other.provider,
    legacy.url,
  )(new Request(legacy.url, { method: 'POST', headers: HEADERS, body: INITIALIZE }));
  assert.is(response.status, 200);
  assert.match(await response.text(), /protected-legacy-fixture/);
  assert.is(other.opened.length, 1);
});

f('should share one sign-in among concurrent requests', async () => {
  const { provider, opened } = signIn(legacy.url);
  const fetch = authorizedFetch(provider, legacy.url);
  const registrations = as.registrations();
  const issued = as.issuedTokens();
  const responses = await Promise.all(Array.from({ length: 5 }, () => initialize(fetch, legacy.url)));
  for (const r of responses) {
    assert.is(r.status, 200);
    await r.text();
  }
  assert.is(opened.length, 1, 'one authorization URL');
  assert.is(as.registrations() - registrations, 1);
  assert.is(as.issuedTokens() - issued, 1);
});

f('should refresh a token about to expire before sending, without a sign-in', async () => {
  const { provider, opened } = signIn(legacy.url);
  await (await initialize(authorizedFetch(provider, legacy.url), legacy.url)).text();
  const before = provider.tokens()!;
  const refreshes = as.refreshes();
  // An hour later, by the clock given: the token is past its expiry.
  const later = authorizedFetch(provider, legacy.url, { now: () => Date.now() + 3_600_000 });
  const response = await initialize(later, legacy.url);
  assert.is(response.status, 200);
  await response.text();
  assert.is(as.refreshes() - refreshes, 1);
  assert.is(opened.length, 1, 'no second sign-in');
  const after = provider.tokens()!;
  assert.is.not(after.access_token, before.access_token);
  assert.equal(legacy.seenTokens().slice(-2), [before.access_token, after.access_token], 'the request went with the refreshed token only');
});

f('should refresh on the 401 of a revoked token, and sign in again when the refresh token is refused too', async () => {
  const { provider, opened } = signIn(legacy.url);
  const fetch = authorizedFetch(provider, legacy.url);
  await (await initialize(fetch, legacy.url)).text();
  as.revokeAll();
  const refreshes = as.refreshes();
  const refreshed = await initialize(fetch, legacy.url);
  assert.is(refreshed.status, 200);
  await refreshed.text();
  assert.is(as.refreshes() - refreshes, 1);
  assert.is(opened.length, 1, 'refreshed silently');

  as.revokeAll();
  provider.saveTokens({ ...provider.tokens()!, refresh_token: 'no-longer-valid' });
  const signedIn = await initialize(fetch, legacy.url);
  assert.is(signedIn.status, 200);
  await signedIn.text();
  assert.is(opened.length, 2, 'a second sign-in');
  assert.is(as.refreshes() - refreshes, 1, 'the refused refresh counted nothing');
});

f('should return a 401 that comes right after a fresh sign-in as it is', async () => {
  // A server that refuses every token, however fresh, its metadata naming the real authorization server.
  const stubborn = await tinyServer((req, res, origin) => {
    if (req.url === '/.well-known/oauth-protected-resource/mcp') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [as.issuer.href] }));
      return;
    }
    res
      .writeHead(401, {
        'www-authenticate': `Bearer error="invalid_token", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      })
      .end();
  });
  const url = `${stubborn.origin}/mcp`;
  const { provider, opened } = signIn(url);
  const response = await initialize(authorizedFetch(provider, url), url);
  assert.is(response.status, 401);
  assert.is(opened.length, 1, 'one sign-in, no loop');
  assert.is(stubborn.hits.filter((h) => h === '/mcp').length, 2, 'the request, and once again after the sign-in');
});

f('should refuse resource_metadata on another origin than the 401, and fetch nothing from it', async () => {
  const elsewhere = await tinyServer((_req, res) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ resource: 'x', authorization_servers: [as.issuer.href] })),
  );
  const evil = await tinyServer((_req, res) =>
    res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${elsewhere.origin}/.well-known/oauth-protected-resource"` }).end(),
  );
  const url = `${evil.origin}/mcp`;
  const { provider, opened } = signIn(url);
  let error: unknown;
  await initialize(authorizedFetch(provider, url), url).catch((e: unknown) => (error = e));
  assert.instance(error, Error);
  assert.match(
    (error as Error).message,
    new RegExp(`names resource metadata at ${elsewhere.origin}, another origin than ${evil.origin}.*it was not fetched`),
  );
  assert.equal(elsewhere.hits, [], 'nothing was fetched from the other origin');
  assert.equal(opened, []);
  assert.is(provider.tokens(), undefined);
});

f('attack: an authorization response naming another issuer (a mix-up) is refused before its code is redeemed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-fetch-'));
  dirs.push(dir);
  const browserErrors: unknown[] = [];
  // The browser comes back with the code, and an `iss` of the attacker's authorization server (RFC 9207).
  const provider = new SignInProvider({
    serverUrl: legacy.url,
    dir,
    output: { write: () => true },
    opener: (url) => {
      authorizationCode(url)
        .then(({ redirect }) => {
          redirect.searchParams.set('iss', 'https://evil.example.com');
          return fetch(redirect).then((r) => r.body?.cancel());
        })
        .catch((e: unknown) => browserErrors.push(e));
    },
  });
  const issued = as.issuedTokens();
  let error: unknown;
  await initialize(authorizedFetch(provider, legacy.url), legacy.url).catch((e: unknown) => (error = e));
  assert.instance(error, Error);
  assert.match((error as Error).message, /sign-in to .* failed: .*issuer/i);
  assert.is(as.issuedTokens(), issued, 'the code never reached the token endpoint');
  assert.is(provider.tokens(), undefined);
  assert.equal(browserErrors, []);
});

f('should neither print nor open an authorization URL with shell metacharacters that an authorization server names', async () => {
  // A server that is its own authorization server, whose authorization endpoint carries `$(…)`.
  const evil = await tinyServer((req, res, origin) => {
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/oauth-protected-resource/mcp')
      return json(200, { resource: `${origin}/mcp`, authorization_servers: [`${origin}/`] });
    if (req.url === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: `${origin}/`,
        authorization_endpoint: `${origin}/authorize$(touch%20/tmp/pwned)`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (req.url === '/register') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => json(201, { ...JSON.parse(body), client_id: 'evil-client' }));
      return;
    }
    res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` }).end();
  });
  const url = `${evil.origin}/mcp`;
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-fetch-'));
  dirs.push(dir);
  const opened: string[] = [];
  let printed = '';
  const provider = new SignInProvider({
    serverUrl: url,
    dir,
    opener: (u) => void opened.push(u),
    output: { write: (t: string) => (printed += t) },
  });
  let error: unknown;
  await initialize(authorizedFetch(provider, url), url).catch((e: unknown) => (error = e));
  assert.match((error as Error).message, /the authorization URL .* is refused: it contains "\$"/);
  assert.equal(opened, []);
  assert.is(printed, '');
  assert.ok(evil.hits.includes('/register'), 'the refusal came at the redirect, after registration');
  assert.not.ok(evil.hits.some((h) => h.startsWith('/authorize')));
});

f('should sign in again with the scope a 403 insufficient_scope asks for', async () => {
  const scoped = await tinyServer((req, res, origin) => {
    if (req.url === '/.well-known/oauth-protected-resource/mcp') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [as.issuer.href] }));
      return;
    }
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const metadata = `resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`;
    as.verifier.verifyAccessToken(token ?? '').then(
      (info) => {
        if (info.scopes.includes('mcp:admin'))
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
        else res.writeHead(403, { 'www-authenticate': `Bearer error="insufficient_scope", scope="mcp:admin", ${metadata}` }).end();
      },
      () => res.writeHead(401, { 'www-authenticate': `Bearer ${metadata}` }).end(),
    );
  });
  const url = `${scoped.origin}/mcp`;
  const { provider, opened } = signIn(url);
  const response = await initialize(authorizedFetch(provider, url), url);
  assert.is(response.status, 200);
  assert.is(opened.length, 2, 'a first sign-in, then one for the scope');
  assert.is(new URL(opened[1]!).searchParams.get('scope'), 'mcp:admin');
  assert.is(provider.tokens()?.scope, 'mcp:admin');
});

f.run();

/** An in-memory SDK provider that sends the user away itself and cannot wait for the code. */
class PlainProvider implements OAuthClientProvider {
  readonly redirected: URL[] = [];
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  get redirectUrl(): string {
    return 'http://127.0.0.1:9/callback';
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'plain',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.redirected.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

const p = suite('authorizedFetch with a plain SDK provider');
p.before(setUp);
p.after(tearDown);

p("should fail with the SDK's UnauthorizedError once the provider was sent away, and work once auth() has the code", async () => {
  const provider = new PlainProvider();
  const fetch = authorizedFetch(provider, legacy.url);
  let error: unknown;
  await initialize(fetch, legacy.url).catch((e: unknown) => (error = e));
  assert.instance(error, UnauthorizedError);
  assert.match((error as Error).message, /needs a sign-in/);
  assert.is(provider.redirected.length, 1);
  const { code } = await authorizationCode(provider.redirected[0]!);
  assert.is(await auth(provider, { serverUrl: legacy.url, authorizationCode: code }), 'AUTHORIZED');
  const response = await initialize(fetch, legacy.url);
  assert.is(response.status, 200);
  await response.text();
});

p.run();

const w = suite('the client wraps with authProvider');
w.before(setUp);
w.after(tearDown);

w('should take a v1 Client through wrapLegacyClient to the protected modern-only server', async () => {
  const { provider, opened } = signIn(modern.url);
  const client = new V1Client({ name: 'v1-spec', version: '1.0.0' });
  await client.connect(wrapLegacyClient(modern.url, { authProvider: provider }) as never);
  try {
    const who = await client.callTool({ name: 'whoami', arguments: {} });
    assert.equal(who.content, [{ type: 'text', text: provider.clientInformation()!.client_id }]);
    const echo = await client.callTool({ name: 'echo', arguments: { text: 'through OAuth' } });
    assert.equal(echo.content, [{ type: 'text', text: 'through OAuth' }]);
    assert.is(opened.length, 1);
  } finally {
    await client.close();
  }
});

w('should take a pinned modern client through wrapModernClient to the protected legacy server', async () => {
  const { provider, opened } = signIn(legacy.url);
  const client = new Client({ name: 'modern-spec', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { ok: true } }));
  await client.connect(wrapModernClient({ url: legacy.url }, { authProvider: provider, cache: false }) as never);
  try {
    const who = await client.callTool({ name: 'whoami', arguments: {} });
    assert.equal(who.content, [{ type: 'text', text: provider.clientInformation()!.client_id }]);
    const confirmed = await client.callTool({ name: 'confirm', arguments: { question: 'Proceed?' } });
    assert.equal(confirmed.content, [{ type: 'text', text: 'confirmed: true' }]);
    assert.is(opened.length, 1);
  } finally {
    await client.close();
  }
});

w.run();
