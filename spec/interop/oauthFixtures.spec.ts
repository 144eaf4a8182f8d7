/**
 * The OAuth fixtures (fixtures/servers/oauth/) against the real SDK clients, with nothing of
 * mcp-dual-era in between: the authorization server on the wire (registration, PKCE, single-use
 * codes, rotating refresh tokens, revocation), a v1 SDK client signing in to the protected legacy
 * server and refreshing expired tokens, a v2 SDK client pinned to 2026-07-28 on the modern one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startAuthServer, type AuthServer } from '../../fixtures/servers/oauth/authServer.ts';
import { startProtectedLegacyServer, type ProtectedLegacyServer } from '../../fixtures/servers/oauth/protectedLegacyHttp.ts';
import { startProtectedModernServer, type ProtectedModernServer } from '../../fixtures/servers/oauth/protectedModernHttp.ts';
import { authorizationCode, authorizationUrlFrom, followAuthorization } from '../helpers/oauthBrowser.ts';
import { signIn, TestOAuthProvider, TEST_REDIRECT_URL } from '../helpers/oauthTestProvider.ts';

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type?: string; text?: string }> }).content ?? [];
  return content
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('\n');
}

function challengeParam(header: string | null, name: string): string | undefined {
  return new RegExp(`${name}="([^"]*)"`).exec(header ?? '')?.[1];
}

/** A v1 client answering `confirm` with `ok`, and the questions it was asked. */
function legacyAttempt(url: URL, provider: TestOAuthProvider, ok = true) {
  const asked: string[] = [];
  const client = new Client({ name: 'oauth-spec', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { ok } };
  });
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  return { transport, connect: async () => (await client.connect(transport), { client, asked }) };
}

/** A v2 client pinned to 2026-07-28 answering `confirm` with `ok`. */
function modernAttempt(url: URL, provider: TestOAuthProvider, ok: boolean) {
  const asked: string[] = [];
  const client = new ModernClient({ name: 'oauth-spec', version: '2.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { ok } };
  });
  const transport = new ModernTransport(url, { authProvider: provider });
  return { transport, connect: async () => (await client.connect(transport), { client, asked }) };
}

/** Polls until the authorization server refuses `token` (it expired), at most `ms`. */
async function untilRefused(auth: AuthServer, token: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await refused(auth, token)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Whether the authorization server refuses `accessToken`. */
function refused(auth: AuthServer, accessToken: string): Promise<boolean> {
  return auth.verifier.verifyAccessToken(accessToken).then(
    () => false,
    () => true,
  );
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function register(auth: AuthServer, redirectUri = TEST_REDIRECT_URL): Promise<string> {
  const res = await fetch(new URL('/register', auth.issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  assert.is(res.status, 201);
  return ((await res.json()) as { client_id: string }).client_id;
}

function authorizeUrl(auth: AuthServer, clientId: string, challenge: string, extra: Record<string, string> = {}): URL {
  const url = new URL('/authorize', auth.issuer);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: TEST_REDIRECT_URL,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: 'http://127.0.0.1:9/mcp',
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url;
}

async function token(auth: AuthServer, form: Record<string, string>): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(new URL('/token', auth.issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

// ---------------------------------------------------------------------------------------------

const authServer = suite('startAuthServer on the wire');
let auth: AuthServer;
authServer.before(async () => {
  auth = await startAuthServer({ refreshGraceSeconds: 0 });
});
authServer.after(async () => {
  await auth.close();
});

authServer('should publish its metadata with registration, PKCE and the refresh grant', async () => {
  const res = await fetch(new URL('/.well-known/oauth-authorization-server', auth.issuer));
  const metadata = (await res.json()) as Record<string, any>;
  assert.is(metadata['issuer'], auth.issuer.href);
  assert.is(auth.issuer.href, `http://127.0.0.1:${auth.issuer.port}/`);
  assert.is(metadata['registration_endpoint'], new URL('/register', auth.issuer).href);
  assert.equal(metadata['code_challenge_methods_supported'], ['S256']);
  assert.ok(metadata['grant_types_supported'].includes('refresh_token'));
  assert.is(metadata['token_endpoint'], auth.metadata.token_endpoint);
});

authServer('should issue a code once, bound to its client and redirect_uri, and rotate refresh tokens', async () => {
  const clientId = await register(auth);
  const other = await register(auth);
  const { verifier, challenge } = pkce();

  const first = await authorizationCode(authorizeUrl(auth, clientId, challenge));
  assert.is(first.state, 'st-1');
  assert.is(first.redirect.origin + first.redirect.pathname, TEST_REDIRECT_URL);
  const grant = {
    grant_type: 'authorization_code',
    code: first.code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: TEST_REDIRECT_URL,
  };
  const byOther = await token(auth, { ...grant, client_id: other });
  assert.is(byOther.status, 400, 'another client cannot redeem the code');
  const issued = await token(auth, grant);
  assert.is(issued.status, 200, JSON.stringify(issued.body));
  assert.is(issued.body['token_type'], 'Bearer');
  assert.is(issued.body['expires_in'], 3600);
  assert.type(issued.body['refresh_token'], 'string');
  const replay = await token(auth, grant);
  assert.is(replay.status, 400);
  assert.is(replay.body['error'], 'invalid_grant', 'a code is single use');

  const info = await auth.verifier.verifyAccessToken(issued.body['access_token']);
  assert.is(info.clientId, clientId);
  assert.is(info.resource?.href, 'http://127.0.0.1:9/mcp', 'the RFC 8707 resource is recorded');
  assert.ok(info.expiresAt! > Date.now() / 1000 + 3500 && info.expiresAt! <= Date.now() / 1000 + 3600);

  // The authorization endpoint lets a loopback redirect change port; the code stays bound to the one asked for.
  const moved = await authorizationCode(authorizeUrl(auth, clientId, challenge, { redirect_uri: 'http://127.0.0.1:2/callback' }));
  assert.is(moved.redirect.port, '2');
  const mismatch = await token(auth, { ...grant, code: moved.code });
  assert.is(mismatch.body['error'], 'invalid_grant', 'redirect_uri must match the authorization request');
  const badVerifier = await authorizationCode(authorizeUrl(auth, clientId, challenge));
  assert.is(
    (await token(auth, { ...grant, code: badVerifier.code, code_verifier: pkce().verifier })).body['error'],
    'invalid_grant',
    'PKCE is checked',
  );

  const refreshesBefore = auth.refreshes();
  const refreshed = await token(auth, { grant_type: 'refresh_token', refresh_token: issued.body['refresh_token'], client_id: clientId });
  assert.is(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.is.not(refreshed.body['access_token'], issued.body['access_token']);
  assert.is.not(refreshed.body['refresh_token'], issued.body['refresh_token']);
  assert.is(auth.refreshes(), refreshesBefore + 1);
  const reused = await token(auth, { grant_type: 'refresh_token', refresh_token: issued.body['refresh_token'], client_id: clientId });
  assert.is(reused.body['error'], 'invalid_grant', 'refresh tokens rotate');
  assert.is((await auth.verifier.verifyAccessToken(refreshed.body['access_token'])).resource?.href, 'http://127.0.0.1:9/mcp');

  const revoked = await fetch(new URL('/revoke', auth.issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: refreshed.body['access_token'], client_id: clientId }),
  });
  assert.is(revoked.status, 200);
  assert.ok(await refused(auth, refreshed.body['access_token']), 'a revoked token is refused');
});

authServer('should answer a replay of a just-rotated refresh token with the same tokens', async () => {
  const graceful = await startAuthServer();
  try {
    const clientId = await register(graceful);
    const { verifier, challenge } = pkce();
    const { code } = await authorizationCode(authorizeUrl(graceful, clientId, challenge));
    const issued = await token(graceful, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: TEST_REDIRECT_URL,
    });
    const refresh = { grant_type: 'refresh_token', refresh_token: issued.body['refresh_token'], client_id: clientId };
    const [a, b] = await Promise.all([token(graceful, refresh), token(graceful, refresh)]);
    assert.is(a.status, 200);
    assert.equal(b.body, a.body);
    assert.is(graceful.refreshes(), 1);
    assert.is(graceful.issuedTokens(), 2);
    const other = await register(graceful);
    assert.is((await token(graceful, { ...refresh, client_id: other })).body['error'], 'invalid_grant', 'only for the same client');
  } finally {
    await graceful.close();
  }
});

authServer('should make every access token invalid on revokeAll and keep refresh tokens', async () => {
  const clientId = await register(auth);
  const { verifier, challenge } = pkce();
  const { code } = await authorizationCode(authorizeUrl(auth, clientId, challenge));
  const issued = await token(auth, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: TEST_REDIRECT_URL,
  });
  await auth.verifier.verifyAccessToken(issued.body['access_token']);
  auth.revokeAll();
  assert.ok(await refused(auth, issued.body['access_token']));
  const refreshed = await token(auth, { grant_type: 'refresh_token', refresh_token: issued.body['refresh_token'], client_id: clientId });
  assert.is(refreshed.status, 200);
  assert.is((await auth.verifier.verifyAccessToken(refreshed.body['access_token'])).clientId, clientId);
});

authServer("should report the authorization server's refusal from the automatic browser", async () => {
  const unknown = authorizeUrl(auth, 'no-such-client', pkce().challenge);
  const direct = await authorizationCode(unknown).then(
    () => undefined,
    (e: Error) => e.message,
  );
  assert.match(direct ?? '', 'invalid_client');
  const clientId = await register(auth);
  const withoutPkce = authorizeUrl(auth, clientId, 'x');
  withoutPkce.searchParams.delete('code_challenge');
  const redirected = await followAuthorization(withoutPkce).then(
    () => undefined,
    (e: Error) => e.message,
  );
  assert.match(redirected ?? '', 'invalid_request');
});

authServer("should follow the redirect to the client's callback", async () => {
  const hits: string[] = [];
  const callback = createServer((req: IncomingMessage, res) => {
    hits.push(req.url ?? '');
    res.end('signed in');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  try {
    const redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    const clientId = await register(auth, redirectUri);
    const landed = await followAuthorization(authorizeUrl(auth, clientId, pkce().challenge, { redirect_uri: redirectUri }));
    assert.is(landed.origin + landed.pathname, redirectUri);
    assert.is(hits.length, 1);
    assert.is(new URL(hits[0]!, redirectUri).searchParams.get('code'), landed.searchParams.get('code'));
    assert.is(landed.searchParams.get('state'), 'st-1');
  } finally {
    callback.closeAllConnections();
    await new Promise((resolve) => callback.close(resolve));
  }
});

authServer('should find the authorization URL a CLI printed', () => {
  const url = 'http://127.0.0.1:4123/authorize?response_type=code&client_id=abc&state=x%2By';
  assert.is(authorizationUrlFrom(`starting\nOpen this page to sign in: ${url}\nwaiting…\n`)?.href, url);
  assert.is(authorizationUrlFrom(`${url}\nhttps://other.example/authorize?x=1`)?.href, url);
  assert.is(authorizationUrlFrom('see http://127.0.0.1:4123/token and http://127.0.0.1:4123/mcp'), undefined);
});

// ---------------------------------------------------------------------------------------------

const legacy = suite('startProtectedLegacyServer with the v1 SDK client');
let legacyAuth: AuthServer;
let legacyServer: ProtectedLegacyServer;
const legacyCleanup: Array<() => Promise<unknown>> = [];
legacy.before(async () => {
  legacyAuth = await startAuthServer();
  legacyServer = await startProtectedLegacyServer({ auth: legacyAuth });
});
legacy.after(async () => {
  await Promise.allSettled(legacyCleanup.map((c) => c()));
  await legacyServer.close();
  await legacyAuth.close();
});

legacy('should refuse a request without a token with a Bearer challenge naming its resource metadata', async () => {
  const res = await fetch(legacyServer.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(INITIALIZE),
  });
  assert.is(res.status, 401);
  const challenge = res.headers.get('www-authenticate');
  assert.match(challenge ?? '', /^Bearer /);
  const metadataUrl = challengeParam(challenge, 'resource_metadata');
  assert.is(metadataUrl, `${legacyServer.url.origin}/.well-known/oauth-protected-resource/mcp`);
  const metadata = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
  assert.is(metadata['resource'], legacyServer.url.href);
  assert.equal(metadata['authorization_servers'], [legacyAuth.issuer.href]);
});

legacy('should sign in through registration, PKCE and the automatic browser, and know the caller', async () => {
  const provider = new TestOAuthProvider();
  const { client } = await signIn(() => legacyAttempt(legacyServer.url, provider), provider);
  legacyCleanup.push(() => client.close());
  assert.is(provider.redirects, 1);
  assert.is(legacyAuth.registrations(), 1);
  const asked = provider.lastAuthorizationUrl!;
  assert.is(asked.origin, legacyAuth.issuer.origin);
  assert.is(asked.searchParams.get('code_challenge_method'), 'S256');
  assert.is(asked.searchParams.get('resource'), legacyServer.url.href);
  const clientId = provider.clientInformation()?.client_id;
  assert.type(clientId, 'string');
  assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'signed in' } })), 'signed in');
  const accessToken = provider.tokens()!.access_token;
  assert.ok(legacyServer.seenTokens().includes(accessToken));
  assert.is((await legacyAuth.verifier.verifyAccessToken(accessToken)).resource?.href, legacyServer.url.href);
});

legacy("should carry confirm's pushed elicitation to the client's handler", async () => {
  const provider = new TestOAuthProvider();
  const { client, asked } = await signIn(() => legacyAttempt(legacyServer.url, provider, false), provider);
  legacyCleanup.push(() => client.close());
  assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Ship it?' } })), 'confirmed: false');
  assert.equal(asked, ['Ship it?']);
});

legacy("should name a front's resource in its metadata and still serve it at its own origin", async () => {
  const fronted = await startProtectedLegacyServer({ auth: legacyAuth, resourceUrl: 'http://127.0.0.1:9/public/mcp' });
  try {
    const res = await fetch(fronted.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(INITIALIZE),
    });
    assert.is(res.status, 401);
    const metadataUrl = challengeParam(res.headers.get('www-authenticate'), 'resource_metadata');
    assert.is(metadataUrl, `${fronted.url.origin}/.well-known/oauth-protected-resource/public/mcp`);
    const metadata = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
    assert.is(metadata['resource'], 'http://127.0.0.1:9/public/mcp');
  } finally {
    await fronted.close();
  }
});

// ---------------------------------------------------------------------------------------------

const expiry = suite('expired and revoked tokens with the v1 SDK client');
const expiryCleanup: Array<() => Promise<unknown>> = [];
expiry.after(async () => {
  for (const c of expiryCleanup.reverse()) await c().catch(() => undefined);
});

async function signedInLegacy(options: { tokenTtlSeconds?: number; refreshTokens?: boolean }) {
  const auth = await startAuthServer(options);
  expiryCleanup.push(() => auth.close());
  const server = await startProtectedLegacyServer({ auth });
  expiryCleanup.push(() => server.close());
  const provider = new TestOAuthProvider();
  const { client } = await signIn(() => legacyAttempt(server.url, provider), provider);
  expiryCleanup.push(() => client.close());
  return { auth, server, provider, client };
}

expiry('should refresh an expired token and go on without a new sign-in', async () => {
  const { auth, server, provider, client } = await signedInLegacy({ tokenTtlSeconds: 1 });
  const clientId = provider.clientInformation()!.client_id;
  assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
  const expired = provider.tokens()!.access_token;
  assert.ok(await untilRefused(auth, expired, 5000), 'the token expired');
  // A loaded machine may have taken over the token's one second already for the first call (the
  // client refreshed then): what is counted is the refresh this expiry causes.
  const before = auth.refreshes();
  assert.ok(before <= 1);
  auth.setTokenTtl(3600);
  assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
  assert.is(auth.refreshes(), before + 1);
  assert.is(provider.redirects, 1, 'the user was sent to sign in only once');
  const fresh = provider.tokens()!.access_token;
  assert.is.not(fresh, expired);
  assert.equal(server.seenTokens().slice(-2), [expired, fresh]);
});

expiry('should refresh after revokeAll without a new sign-in', async () => {
  const { auth, provider, client } = await signedInLegacy({});
  auth.revokeAll();
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after revocation' } })), 'after revocation');
  assert.is(auth.refreshes(), 1);
  assert.is(auth.issuedTokens(), 2);
  assert.is(provider.redirects, 1);
});

expiry('should need a new sign-in after revokeAll when no refresh token was issued', async () => {
  const { auth, provider, client } = await signedInLegacy({ refreshTokens: false });
  assert.is(provider.tokens()!.refresh_token, undefined);
  auth.revokeAll();
  const failure = await client.callTool({ name: 'echo', arguments: { text: 'x' } }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failure, 'the call failed');
  assert.ok(provider.redirects > 1, 'the SDK sent the user to sign in again');
  assert.is(auth.refreshes(), 0);
});

// ---------------------------------------------------------------------------------------------

const modern = suite('startProtectedModernServer with the v2 SDK client pinned to 2026-07-28');
let modernAuth: AuthServer;
let modernServer: ProtectedModernServer;
const modernCleanup: Array<() => Promise<unknown>> = [];
modern.before(async () => {
  modernAuth = await startAuthServer();
  modernServer = await startProtectedModernServer({ auth: modernAuth });
});
modern.after(async () => {
  await Promise.allSettled(modernCleanup.map((c) => c()));
  await modernServer.close();
  await modernAuth.close();
});

modern('should refuse a request without a token with a Bearer challenge naming its resource metadata', async () => {
  const res = await fetch(modernServer.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'server/discover',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }),
  });
  assert.is(res.status, 401);
  const metadataUrl = challengeParam(res.headers.get('www-authenticate'), 'resource_metadata');
  assert.is(metadataUrl, `${modernServer.url.origin}/.well-known/oauth-protected-resource/mcp`);
  const metadata = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
  assert.is(metadata['resource'], modernServer.url.href);
  assert.equal(metadata['authorization_servers'], [modernAuth.issuer.href]);
  const forged = await fetch(modernServer.url, {
    method: 'POST',
    headers: { authorization: 'Bearer forged', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.is(forged.status, 401, 'an unknown token is refused with a challenge, not an error');
  assert.is(challengeParam(forged.headers.get('www-authenticate'), 'error'), 'invalid_token');
});

modern('should sign in, know the caller and ask through inputRequired', async () => {
  const provider = new TestOAuthProvider();
  const { client, asked } = await signIn(() => modernAttempt(modernServer.url, provider, true), provider);
  modernCleanup.push(() => client.close());
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.is(provider.redirects, 1);
  assert.is(modernAuth.registrations(), 1);
  assert.is(provider.lastAuthorizationUrl?.searchParams.get('resource'), modernServer.url.href);
  const clientId = provider.clientInformation()?.client_id;
  assert.type(clientId, 'string');
  assert.is(textOf(await client.callTool({ name: 'whoami', arguments: {} })), clientId);
  assert.is(textOf(await client.callTool({ name: 'confirm', arguments: { question: 'Deploy?' } })), 'confirmed: true');
  assert.equal(asked, ['Deploy?']);
});

modern('should refresh a revoked token and go on without a new sign-in', async () => {
  const provider = new TestOAuthProvider();
  const { client } = await signIn(() => modernAttempt(modernServer.url, provider, true), provider);
  modernCleanup.push(() => client.close());
  const before = modernAuth.refreshes();
  modernAuth.revokeAll();
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } })), 'still here');
  assert.is(modernAuth.refreshes(), before + 1);
  assert.is(provider.redirects, 1);
});

authServer.run();
legacy.run();
expiry.run();
modern.run();
