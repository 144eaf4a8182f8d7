/**
 * `SignInProvider` and what it stands on: the per-user store (a folder per server, 0700, files
 * 0600 written atomically), what `invalidateCredentials` deletes, the client it registers as, a
 * random state per sign-in, and the loopback callback: the code of the sign-in in progress is
 * taken, a callback with another state is refused, an `error=` gets an error page.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultOAuthDir, normalizeServerUrl, OAuthStore, serverFolderName } from '../../lib/auth/oauthStore.ts';
import { SignInProvider, type SignInProviderOptions } from '../../lib/auth/signInProvider.ts';
import { LoopbackCallback } from '../../lib/auth/loopbackCallback.ts';

const SERVER = 'https://mcp.example.com/mcp';
const mode = (path: string) => statSync(path).mode & 0o777;

const roots: string[] = [];
const fresh = () => {
  const root = mkdtempSync(join(tmpdir(), 'mcp-oauth-provider-'));
  roots.push(root);
  return join(root, 'oauth');
};
const cleanup = () => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
};

function provider(dir: string, options: Partial<SignInProviderOptions> = {}): SignInProvider {
  return new SignInProvider({ serverUrl: SERVER, dir, browser: false, output: { write: () => true }, ...options });
}

const TOKENS = { access_token: 'at-1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-1', issuer: 'https://auth.example.com/' };

const s = suite('the OAuth store');
s.after.each(cleanup);

s('should create the folders 0700 and every file 0600', () => {
  const dir = fresh();
  const p = provider(dir);
  assert.not.ok(existsSync(dir), 'nothing is created before something is saved');
  p.saveTokens(TOKENS);
  p.saveClientInformation({ client_id: 'c1', redirect_uris: ['http://127.0.0.1:4567/callback'] } as never);
  p.saveCodeVerifier('verifier-1');
  p.saveDiscoveryState({ authorizationServerUrl: 'https://auth.example.com/' });
  assert.is(mode(dir), 0o700);
  assert.is(mode(p.store.dir), 0o700);
  const files = readdirSync(p.store.dir).sort();
  assert.equal(files, ['client.json', 'discovery.json', 'server.json', 'tokens.json', 'verifier.json']);
  for (const f of files) assert.is(mode(join(p.store.dir, f)), 0o600, f);
  assert.equal(p.store.read('server.json'), { url: SERVER });
});

s('should rewrite a file by replacing it atomically, keeping 0600 and leaving no temporary file', () => {
  const dir = fresh();
  const p = provider(dir);
  p.saveTokens(TOKENS);
  const path = join(p.store.dir, 'tokens.json');
  const before = statSync(path).ino;
  p.saveTokens({ ...TOKENS, access_token: 'at-2' });
  assert.is.not(statSync(path).ino, before, 'a new file renamed over the old one');
  assert.is(mode(path), 0o600);
  assert.is(p.tokens()?.access_token, 'at-2');
  assert.equal(
    readdirSync(p.store.dir).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

s("should make the server's folder 0700 even when it existed with a wider mode", () => {
  const dir = fresh();
  const store = new OAuthStore(dir, SERVER);
  mkdirSync(store.dir, { recursive: true, mode: 0o755 });
  chmodSync(store.dir, 0o755);
  store.write('tokens.json', TOKENS);
  assert.is(mode(store.dir), 0o700);
});

s('should keep one folder per server, named by a hash of its normalized URL', () => {
  assert.is(normalizeServerUrl('HTTPS://MCP.Example.com:443/mcp#frag'), SERVER);
  assert.is(serverFolderName('HTTPS://MCP.Example.com:443/mcp#frag'), serverFolderName(SERVER));
  assert.is.not(serverFolderName('https://mcp.example.com/other'), serverFolderName(SERVER));
  assert.match(serverFolderName(SERVER), /^[0-9a-f]{32}$/);
  const dir = fresh();
  provider(dir).saveTokens(TOKENS);
  assert.is(
    provider(dir, { serverUrl: 'https://other.example.com/mcp' }).tokens(),
    undefined,
    "another server does not see this one's tokens",
  );
  assert.is(provider(dir).tokens()?.access_token, 'at-1');
});

s('should default to $XDG_CONFIG_HOME/mcp-dual-era/oauth, else ~/.config/mcp-dual-era/oauth', () => {
  assert.is(defaultOAuthDir({ XDG_CONFIG_HOME: '/x/config' }, '/home/u'), '/x/config/mcp-dual-era/oauth');
  assert.is(defaultOAuthDir({}, '/home/u'), '/home/u/.config/mcp-dual-era/oauth');
  assert.is(
    defaultOAuthDir({ XDG_CONFIG_HOME: 'relative' }, '/home/u'),
    '/home/u/.config/mcp-dual-era/oauth',
    'a relative XDG_CONFIG_HOME is ignored, as the spec says',
  );
});

s.run();

const p = suite('SignInProvider');
p.after.each(cleanup);

p('should keep expires_at with tokens that say expires_in', () => {
  const dir = fresh();
  const signIn = provider(dir, { now: () => 1_000_000 });
  signIn.saveTokens(TOKENS);
  assert.equal(signIn.tokens(), { ...TOKENS, expires_at: 1_000_000 + 3600 * 1000 });
  signIn.saveTokens({ access_token: 'x', token_type: 'Bearer' });
  assert.equal(signIn.tokens(), { access_token: 'x', token_type: 'Bearer' });
});

p('should delete what invalidateCredentials names, and everything for all', () => {
  const dir = fresh();
  const signIn = provider(dir);
  const fill = () => {
    signIn.saveTokens(TOKENS);
    signIn.saveClientInformation({ client_id: 'c1' });
    signIn.saveCodeVerifier('v');
    signIn.saveDiscoveryState({ authorizationServerUrl: 'https://auth.example.com/' });
  };
  const left = () =>
    readdirSync(signIn.store.dir)
      .filter((f) => f !== 'server.json')
      .sort();
  fill();
  signIn.invalidateCredentials('tokens');
  assert.equal(left(), ['client.json', 'discovery.json', 'verifier.json']);
  assert.is(signIn.tokens(), undefined);
  signIn.invalidateCredentials('verifier');
  assert.equal(left(), ['client.json', 'discovery.json']);
  assert.throws(() => signIn.codeVerifier(), /no PKCE code verifier/);
  signIn.invalidateCredentials('discovery');
  assert.equal(left(), ['client.json']);
  signIn.invalidateCredentials('client');
  assert.equal(left(), []);
  fill();
  signIn.invalidateCredentials('all');
  assert.equal(left(), []);
});

p('should register as the public client mcp-dual-era with its loopback callback', async () => {
  const signIn = provider(fresh());
  await signIn.prepareAuthorization();
  try {
    assert.match(signIn.redirectUrl, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.equal(signIn.clientMetadata, {
      client_name: 'mcp-dual-era',
      redirect_uris: [signIn.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      application_type: 'native',
      token_endpoint_auth_method: 'none',
    });
    // A registration made for another callback URL is not offered: the SDK registers again.
    signIn.saveClientInformation({ client_id: 'old', redirect_uris: ['http://127.0.0.1:1/callback'] } as never);
    assert.is(signIn.clientInformation(), undefined);
    signIn.saveClientInformation({ client_id: 'new', redirect_uris: [signIn.redirectUrl] } as never);
    assert.is(signIn.clientInformation()?.client_id, 'new');
  } finally {
    await signIn.finishAuthorization();
  }
});

p('should keep registrations and tokens under the issuer they came from, and give a request the last saved', () => {
  const signIn = provider(fresh());
  const a = { issuer: 'https://as-a.example.com' };
  const b = { issuer: 'https://as-b.example.com' };
  signIn.saveClientInformation({ client_id: 'at-a', issuer: a.issuer }, a);
  signIn.saveTokens({ access_token: 'token-a', token_type: 'Bearer', issuer: a.issuer }, a);
  signIn.saveClientInformation({ client_id: 'at-b', issuer: b.issuer }, b);
  signIn.saveTokens({ access_token: 'token-b', token_type: 'Bearer', issuer: b.issuer }, b);
  assert.is(signIn.clientInformation(a)?.client_id, 'at-a');
  assert.is(signIn.clientInformation(b)?.client_id, 'at-b');
  assert.is(signIn.tokens(a)?.access_token, 'token-a');
  assert.is(signIn.tokens(b)?.access_token, 'token-b');
  // An authorization server never seen gets none of them; a request (no issuer) carries the last saved.
  assert.is(signIn.clientInformation({ issuer: 'https://as-c.example.com' }), undefined);
  assert.is(signIn.tokens({ issuer: 'https://as-c.example.com' }), undefined);
  assert.is(signIn.tokens()?.access_token, 'token-b');
});

p('should read credentials kept before issuers were, as belonging to the first issuer that asks, and keep them under it', () => {
  const dir = fresh();
  const signIn = provider(dir);
  // What an earlier version wrote: the registration and the tokens as they are.
  signIn.store.write('client.json', { client_id: 'old-client' });
  signIn.store.write('tokens.json', { access_token: 'old-token', token_type: 'Bearer' });
  const a = { issuer: 'https://as-a.example.com' };
  assert.is(signIn.clientInformation(a)?.client_id, 'old-client');
  assert.is(signIn.tokens()?.access_token, 'old-token');
  // The SDK stamps them with their issuer and saves them: from then on they are that issuer's only.
  signIn.saveClientInformation({ client_id: 'old-client', issuer: a.issuer }, a);
  assert.is(signIn.clientInformation({ issuer: 'https://as-b.example.com' }), undefined);
  assert.is(signIn.clientInformation(a)?.client_id, 'old-client');
});

p('should offer a client ID metadata document, a client registered beforehand (to its issuer only) and one DPoP session', async () => {
  const cimd = provider(fresh(), { clientMetadataUrl: 'https://client.example.com/mcp-dual-era.json' });
  assert.is(cimd.clientMetadataUrl, 'https://client.example.com/mcp-dual-era.json');
  assert.is(cimd.dpop, undefined);
  const pre = provider(fresh(), { client: { id: 'pre-1', secret: 's3cret', issuer: 'https://as-a.example.com/' } });
  assert.equal(pre.clientInformation({ issuer: 'https://as-a.example.com' }), {
    client_id: 'pre-1',
    client_secret: 's3cret',
    issuer: 'https://as-a.example.com/',
  });
  assert.is(
    pre.clientInformation({ issuer: 'https://elsewhere.example.com' }),
    undefined,
    'its secret goes to no other authorization server',
  );
  assert.is(pre.clientMetadata.token_endpoint_auth_method, 'client_secret_basic');
  pre.saveClientInformation({ client_id: 'registered' });
  assert.not.ok(existsSync(join(pre.store.dir, 'client.json')), 'a client registered beforehand is not written');
  const dpop = provider(fresh(), { dpop: true });
  const session = await dpop.dpop!();
  assert.ok(session.thumbprint.length > 20);
  assert.is(await dpop.dpop!(), session, 'one key for the provider');
});

p('should listen again on the port registered before, so the registration stays good', async () => {
  const signIn = provider(fresh());
  await signIn.prepareAuthorization();
  const first = signIn.redirectUrl;
  signIn.saveClientInformation({ client_id: 'c1', redirect_uris: [first] } as never);
  await signIn.finishAuthorization();
  assert.is(signIn.redirectUrl, first, 'between sign-ins, the registered callback');
  await signIn.prepareAuthorization();
  try {
    assert.is(signIn.redirectUrl, first);
    assert.is(signIn.clientInformation()?.client_id, 'c1');
  } finally {
    await signIn.finishAuthorization();
  }
});

p('should make a new random state for every sign-in', () => {
  const signIn = provider(fresh());
  const states = new Set([signIn.state(), signIn.state(), signIn.state()]);
  assert.is(states.size, 3);
  for (const state of states) assert.ok(state.length >= 40, state);
});

/** Starts a sign-in on `signIn` as the SDK does (state, then the redirect); returns its callback URL and state. */
async function begin(signIn: SignInProvider): Promise<{ callback: URL; state: string }> {
  await signIn.prepareAuthorization();
  const state = signIn.state();
  const url = new URL('https://auth.example.com/authorize?response_type=code');
  url.searchParams.set('state', state);
  url.searchParams.set('redirect_uri', signIn.redirectUrl);
  await signIn.redirectToAuthorization(url);
  return { callback: new URL(signIn.redirectUrl), state };
}

function callbackWith(callback: URL, params: Record<string, string>): URL {
  const url = new URL(callback);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url;
}

p('should refuse a callback whose state does not match, and take the code of the sign-in in progress', async () => {
  const signIn = provider(fresh());
  const { callback, state } = await begin(signIn);
  try {
    const code = signIn.waitForAuthorizationCode(AbortSignal.timeout(20_000));
    const forged = await fetch(callbackWith(callback, { code: 'forged-code', state: 'not-the-state' }));
    assert.is(forged.status, 400);
    assert.match(await forged.text(), /does not belong to the sign-in in progress/);
    const missing = await fetch(callbackWith(callback, { code: 'forged-code' }));
    assert.is(missing.status, 400);
    const good = await fetch(callbackWith(callback, { code: 'the-code', state, iss: 'https://as.example.com' }));
    assert.is(good.status, 200);
    assert.match(await good.text(), /Signed in.*You may close this window/s);
    // The code, with the issuer the response named (what auth() checks before redeeming it).
    assert.equal(await code, { code: 'the-code', iss: 'https://as.example.com' }, 'the forged code never reached the sign-in');
    const again = await fetch(callbackWith(callback, { code: 'late', state }));
    assert.is(again.status, 400, 'a finished sign-in takes nothing more');
    await again.text();
  } finally {
    await signIn.finishAuthorization();
  }
  let refused = false;
  await fetch(callback).catch(() => (refused = true));
  assert.ok(refused, 'the callback listener is closed after the sign-in');
});

p('should answer error= with an error page and fail the sign-in with the error', async () => {
  const signIn = provider(fresh());
  const { callback, state } = await begin(signIn);
  try {
    const failed = signIn.waitForAuthorizationCode(AbortSignal.timeout(20_000)).then(
      () => undefined,
      (e: unknown) => e,
    );
    const page = await fetch(callbackWith(callback, { error: 'access_denied', error_description: 'The user said <b>no</b>', state }));
    assert.is(page.status, 400);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const html = await page.text();
    assert.match(html, /Sign-in failed/);
    assert.match(html, /access_denied: The user said &#60;b&#62;no&#60;\/b&#62;/);
    assert.not.match(html, '<b>no</b>');
    assert.match(((await failed) as Error).message, /did not sign you in \(access_denied: The user said <b>no<\/b>\)/);
  } finally {
    await signIn.finishAuthorization();
  }
});

p('should end the wait when its signal aborts', async () => {
  const signIn = provider(fresh());
  await begin(signIn);
  try {
    const abort = new AbortController();
    const code = signIn.waitForAuthorizationCode(abort.signal);
    abort.abort(new Error('given up'));
    let error: unknown;
    await code.catch((e) => (error = e));
    assert.is((error as Error).message, 'given up');
  } finally {
    await signIn.finishAuthorization();
  }
});

p.run();

const l = suite('LoopbackCallback');

l('should listen on 127.0.0.1 only, answer 404 off its path, and refuse callbacks while no sign-in is in progress', async () => {
  const callback = await LoopbackCallback.start();
  try {
    assert.is(callback.url.hostname, '127.0.0.1');
    assert.is(callback.url.pathname, '/callback');
    const other = await fetch(new URL('/elsewhere', callback.url));
    assert.is(other.status, 404);
    await other.text();
    const idle = await fetch(`${callback.url.href}?code=x&state=y`);
    assert.is(idle.status, 400);
    assert.match(await idle.text(), /not waiting for a sign-in/);
  } finally {
    await callback.close();
  }
});

l('should refuse to listen on a port in use, naming it', async () => {
  const taken = await LoopbackCallback.start();
  try {
    const signIn = provider(fresh(), { callbackPort: taken.port });
    let error: unknown;
    await signIn.prepareAuthorization().catch((e) => (error = e));
    assert.match((error as Error).message, new RegExp(`cannot listen for the sign-in callback on 127\\.0\\.0\\.1:${taken.port}`));
  } finally {
    await taken.close();
    cleanup();
  }
});

l.run();
