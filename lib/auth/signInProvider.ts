/**
 * `SignInProvider`: the SDK's `OAuthClientProvider` for a person at a terminal. Registration,
 * tokens (with `expires_at`), PKCE verifier and discovery state live in a per-user folder per server
 * (oauthStore.ts); a sign-in is printed on stderr, opened in the browser unless told not to, and
 * comes back to a loopback listener (loopbackCallback.ts). It sends no OAuth request: `auth()` does.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { AdapterError } from '../core/errors.ts';
import { checkAuthorizationUrl } from './authorizationUrl.ts';
import type { InteractiveOAuthClientProvider } from './authorizedFetch.ts';
import { LoopbackCallback } from './loopbackCallback.ts';
import { defaultOAuthDir, normalizeServerUrl, OAuthStore } from './oauthStore.ts';
import { openBrowser } from './openBrowser.ts';

/** Options of {@link SignInProvider}. */
export interface SignInProviderOptions {
  /** The MCP server signed in to: its folder is named after it. */
  readonly serverUrl: string | URL;
  /** The storage directory (default {@link defaultOAuthDir}). */
  readonly dir?: string;
  /** Open the browser on the authorization URL (default true); the URL is printed either way. */
  readonly browser?: boolean;
  /** What opens the browser (default `openBrowser`, no shell). */
  readonly opener?: (url: string) => void;
  /** The loopback port of the callback (default: the one registered before, else a free one). */
  readonly callbackPort?: number;
  /** Where the sign-in URL is printed (default stderr). */
  readonly output?: { write(text: string): unknown };
  /** The scope registered and asked for when the server names none. */
  readonly scope?: string;
  /** The clock, for `expires_at` (default `Date.now`). */
  readonly now?: () => number;
}

const FILES = { client: 'client.json', tokens: 'tokens.json', verifier: 'verifier.json', discovery: 'discovery.json' } as const;

/** The loopback callback's port named in a redirect URI of ours, if it is one. */
function loopbackPort(uri: unknown): number | undefined {
  if (typeof uri !== 'string') return undefined;
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && url.hostname === '127.0.0.1' && url.pathname === '/callback' && url.port !== '' ? Number(url.port) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An `OAuthClientProvider` (SDK v1) that keeps a user's credentials for one server in files only
 * they can read (folders 0700, files 0600, replaced atomically), signs in through the browser and a
 * loopback callback on 127.0.0.1, and can wait for that callback (`waitForAuthorizationCode`), so
 * `authorizedFetch` completes a sign-in by itself. Registers as the public client `mcp-dual-era`
 * (authorization code and refresh token grants, no client secret). Authorization URLs that fail
 * `checkAuthorizationUrl` are neither printed nor opened.
 */
export class SignInProvider implements InteractiveOAuthClientProvider {
  /** The server's normalized URL. */
  readonly serverUrl: string;
  /** The server's folder. */
  readonly store: OAuthStore;
  readonly #options: SignInProviderOptions;
  #callback: LoopbackCallback | undefined;
  /** The state of the sign-in being started. */
  #state: string | undefined;

  constructor(options: SignInProviderOptions) {
    this.#options = options;
    this.serverUrl = normalizeServerUrl(options.serverUrl);
    this.store = new OAuthStore(options.dir ?? defaultOAuthDir(), options.serverUrl);
  }

  /** The port registered before, if any. */
  #registeredPort(): number | undefined {
    const uris = this.store.read<{ redirect_uris?: unknown }>(FILES.client)?.redirect_uris;
    return Array.isArray(uris) ? loopbackPort(uris[0]) : undefined;
  }

  /** The loopback callback URL: the listener's while it runs, else the one registered (or the configured port). */
  get redirectUrl(): string {
    if (this.#callback) return this.#callback.url.href;
    return `http://127.0.0.1:${this.#options.callbackPort ?? this.#registeredPort() ?? 0}/callback`;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'mcp-dual-era',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.#options.scope ? { scope: this.#options.scope } : {}),
    };
  }

  /** A fresh random state per sign-in; the callback takes only this one. */
  state(): string {
    this.#state = randomBytes(32).toString('base64url');
    this.#callback?.expect(this.#state);
    return this.#state;
  }

  /** The registration, unless it was made for another callback URL than the one listening (then the SDK registers again). */
  clientInformation(): OAuthClientInformationMixed | undefined {
    const info = this.store.read<OAuthClientInformationMixed & { redirect_uris?: unknown }>(FILES.client);
    if (!info) return undefined;
    if (this.#callback && Array.isArray(info.redirect_uris) && !info.redirect_uris.includes(this.#callback.url.href)) return undefined;
    return info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.store.write(FILES.client, info);
  }

  tokens(): OAuthTokens | undefined {
    return this.store.read<OAuthTokens>(FILES.tokens);
  }

  /** Keeps the tokens as given, with `expires_at` (epoch milliseconds) when they say `expires_in`. */
  saveTokens(tokens: OAuthTokens): void {
    const now = (this.#options.now ?? Date.now)();
    this.store.write(FILES.tokens, { ...tokens, ...(typeof tokens.expires_in === 'number' ? { expires_at: now + tokens.expires_in * 1000 } : {}) });
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.store.write(FILES.verifier, { code_verifier: codeVerifier });
  }

  codeVerifier(): string {
    const saved = this.store.read<{ code_verifier?: unknown }>(FILES.verifier)?.code_verifier;
    if (typeof saved !== 'string') throw new AdapterError('state', 'no PKCE code verifier is saved for this sign-in');
    return saved;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.store.write(FILES.discovery, state);
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.store.read<OAuthDiscoveryState>(FILES.discovery);
  }

  /** Deletes what the SDK says is no longer valid: `all`, or the `client`, `tokens`, `verifier` or `discovery` file. */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all') this.store.remove(...Object.values(FILES));
    else this.store.remove(FILES[scope]);
  }

  /** Starts the loopback callback (on the port registered before when it is free, so the registration stays good). */
  async prepareAuthorization(): Promise<void> {
    if (this.#callback) return;
    const given = this.#options.callbackPort;
    const port = given ?? this.#registeredPort() ?? 0;
    try {
      this.#callback = await LoopbackCallback.start({ port });
    } catch (e) {
      if (given !== undefined || port === 0 || (e as { code?: string }).code !== 'EADDRINUSE') {
        throw new AdapterError('config', `cannot listen for the sign-in callback on 127.0.0.1:${port}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      this.#callback = await LoopbackCallback.start({ port: 0 });
    }
  }

  /**
   * Checks the URL (`checkAuthorizationUrl`: refused with an `AdapterError`, neither printed nor
   * opened), prints it on its own after `Sign in at: ` on stderr, and opens the browser unless told not to.
   */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const checked = checkAuthorizationUrl(authorizationUrl);
    if (!checked.ok) throw new AdapterError('upstream-error', checked.error);
    const url = checked.value;
    const state = url.searchParams.get('state');
    if (!state || state !== this.#state) throw new AdapterError('state', 'the authorization URL does not carry the state of this sign-in');
    if (!this.#callback) {
      const port = loopbackPort(url.searchParams.get('redirect_uri'));
      if (!port) throw new AdapterError('state', 'the sign-in callback is not listening: call prepareAuthorization() first');
      this.#callback = await LoopbackCallback.start({ port });
    }
    this.#callback.expect(state);
    const out = this.#options.output ?? process.stderr;
    out.write(`mcp-dual-era: ${this.serverUrl} asks you to sign in${this.#options.browser === false ? '' : ' (opening your browser)'}.\nSign in at: ${url.href}\n`);
    if (this.#options.browser !== false) (this.#options.opener ?? openBrowser)(url.href);
  }

  /** The code the browser brings back to the callback, for the sign-in just begun. */
  waitForAuthorizationCode(signal: AbortSignal): Promise<string> {
    if (!this.#callback) return Promise.reject(new AdapterError('state', 'no sign-in is in progress'));
    return this.#callback.waitForCode(signal);
  }

  /** Stops the callback listener. */
  async finishAuthorization(): Promise<void> {
    const callback = this.#callback;
    this.#callback = undefined;
    await callback?.close();
  }
}
