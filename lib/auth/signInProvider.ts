/**
 * `SignInProvider`: the SDK's `OAuthClientProvider` (`@modelcontextprotocol/client`) for a person
 * at a terminal. Registrations and tokens (with `expires_at`), each kept under the authorization
 * server's issuer they belong to, the PKCE verifier and the discovery state live in a per-user
 * folder per server (oauthStore.ts); a sign-in is printed on stderr, opened in the browser unless
 * told not to, and comes back to a loopback listener (loopbackCallback.ts). It sends no OAuth
 * request: `auth()` does.
 */
import { randomBytes } from 'node:crypto';
import type {
  DpopSession,
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { AdapterError } from '../core/errors.ts';
import { checkAuthorizationUrl } from './authorizationUrl.ts';
import type { AuthorizationResponse, InteractiveOAuthClientProvider } from './authorizedFetch.ts';
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
  /**
   * An HTTPS URL where this client's metadata document is published (a client ID metadata
   * document): an authorization server that takes them uses it as the client ID, and nothing is
   * registered. Its `redirect_uris` must name the loopback callback (`http://127.0.0.1/callback`,
   * any port).
   */
  readonly clientMetadataUrl?: string;
  /**
   * A client registered beforehand with the authorization server: its ID (and secret, for a
   * confidential client). Nothing is registered, and the sign-in uses it at whichever
   * authorization server the MCP server names unless `issuer` says which one it belongs to.
   */
  readonly client?: { readonly id: string; readonly secret?: string; readonly issuer?: string };
  /** Ask for DPoP-bound tokens (RFC 9449): each request then carries a proof made with a key this process holds. */
  readonly dpop?: boolean;
}

/** What a file of credentials keyed by issuer holds: each issuer's, and which was saved last. */
interface ByIssuer<T> {
  readonly v: 2;
  readonly latest: string;
  readonly entries: Readonly<Record<string, T>>;
}

/** The key of credentials whose issuer is not known (saved before issuers were kept). */
const NO_ISSUER = '';

const FILES = { client: 'client.json', tokens: 'tokens.json', verifier: 'verifier.json', discovery: 'discovery.json' } as const;

/** Whether two issuer identifiers name the same authorization server (a trailing `/` aside). */
function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/$/, '') === b.replace(/\/$/, '');
}

/** The loopback callback's port named in a redirect URI of ours, if it is one. */
function loopbackPort(uri: unknown): number | undefined {
  if (typeof uri !== 'string') return undefined;
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && url.hostname === '127.0.0.1' && url.pathname === '/callback' && url.port !== ''
      ? Number(url.port)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An `OAuthClientProvider` that keeps a user's credentials for one server in files only they can
 * read (folders 0700, files 0600, replaced atomically), each registration and token set under the
 * issuer of the authorization server it came from (a server that moves to another one gets a
 * registration and a sign-in there, and the old credentials never go to the new server); signs in
 * through the browser and a loopback callback on 127.0.0.1, and can wait for that callback
 * (`waitForAuthorizationCode`, which brings the response's `iss` too), so `authorizedFetch`
 * completes a sign-in by itself. Registers as the public native client `mcp-dual-era`
 * (authorization code and refresh token grants, no client secret), or uses a client ID metadata
 * document, or a client registered beforehand. Authorization URLs that fail
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
  /** The client ID metadata document's URL, when one is used. */
  readonly clientMetadataUrl?: string;
  /** The DPoP session of this provider (one key for its life), when DPoP is asked for. */
  readonly dpop?: () => Promise<DpopSession>;

  constructor(options: SignInProviderOptions) {
    this.#options = options;
    this.serverUrl = normalizeServerUrl(options.serverUrl);
    this.store = new OAuthStore(options.dir ?? defaultOAuthDir(), options.serverUrl);
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
    if (options.dpop) {
      let session: Promise<DpopSession> | undefined;
      this.dpop = () => (session ??= import('@modelcontextprotocol/client').then(({ DpopSession }) => DpopSession.create()));
    }
  }

  /** A file of credentials by issuer (one written before issuers were kept reads as the entry of no issuer). */
  #byIssuer<T>(file: string): ByIssuer<T> | undefined {
    const held = this.store.read<ByIssuer<T> | (T & { issuer?: unknown })>(file);
    if (!held || typeof held !== 'object') return undefined;
    if ((held as ByIssuer<T>).v === 2 && typeof (held as ByIssuer<T>).entries === 'object') return held as ByIssuer<T>;
    const issuer = typeof (held as { issuer?: unknown }).issuer === 'string' ? (held as { issuer: string }).issuer : NO_ISSUER;
    return { v: 2, latest: issuer, entries: { [issuer]: held as T } };
  }

  /** The entry of `ctx`'s issuer (or, without one, the one saved last); the entry of no issuer when there is none of its own. */
  #entry<T>(file: string, ctx: OAuthClientInformationContext | undefined): T | undefined {
    const held = this.#byIssuer<T>(file);
    if (!held) return undefined;
    if (!ctx) return held.entries[held.latest];
    return held.entries[ctx.issuer] ?? held.entries[NO_ISSUER];
  }

  #saveEntry<T extends { issuer?: string | undefined }>(file: string, value: T, ctx: OAuthClientInformationContext | undefined): void {
    const issuer = ctx?.issuer ?? value.issuer ?? NO_ISSUER;
    const held = this.#byIssuer<T>(file);
    const entries: Record<string, T> = { ...held?.entries, [issuer]: value };
    // Once an issuer is known, what was kept without one was this issuer's.
    if (issuer !== NO_ISSUER) delete entries[NO_ISSUER];
    this.store.write(file, { v: 2, latest: issuer, entries } satisfies ByIssuer<T>);
  }

  /** The port registered before, if any. */
  #registeredPort(): number | undefined {
    const held = this.#byIssuer<{ redirect_uris?: unknown }>(FILES.client);
    const uris = held?.entries[held.latest]?.redirect_uris;
    return Array.isArray(uris) ? loopbackPort(uris[0]) : undefined;
  }

  /** The loopback callback URL: the listener's while it runs, else the one registered (or the configured port). */
  get redirectUrl(): string {
    if (this.#callback) return this.#callback.url.href;
    return `http://127.0.0.1:${this.#options.callbackPort ?? this.#registeredPort() ?? 0}/callback`;
  }

  get clientMetadata(): OAuthClientMetadata {
    const client = this.#options.client;
    return {
      client_name: 'mcp-dual-era',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A program on the user's machine, coming back to a loopback redirect (SEP-837).
      application_type: 'native',
      token_endpoint_auth_method: client?.secret !== undefined ? 'client_secret_basic' : 'none',
      ...(this.#options.scope ? { scope: this.#options.scope } : {}),
    };
  }

  /** A fresh random state per sign-in; the callback takes only this one. */
  state(): string {
    this.#state = randomBytes(32).toString('base64url');
    this.#callback?.expect(this.#state);
    return this.#state;
  }

  /**
   * The client registered beforehand; else the registration kept for `ctx`'s authorization server,
   * unless it was made for another callback URL than the one listening (then the SDK registers again).
   */
  clientInformation(ctx?: OAuthClientInformationContext): StoredOAuthClientInformation | undefined {
    const client = this.#options.client;
    if (client) {
      if (client.issuer !== undefined && ctx && !sameIssuer(client.issuer, ctx.issuer)) return undefined;
      return {
        client_id: client.id,
        ...(client.secret !== undefined ? { client_secret: client.secret } : {}),
        ...(client.issuer !== undefined ? { issuer: client.issuer } : ctx ? { issuer: ctx.issuer } : {}),
      };
    }
    const info = this.#entry<StoredOAuthClientInformation & { redirect_uris?: unknown }>(FILES.client, ctx);
    if (!info) return undefined;
    if (
      this.#callback &&
      this.clientMetadataUrl === undefined &&
      Array.isArray(info.redirect_uris) &&
      !info.redirect_uris.includes(this.#callback.url.href)
    )
      return undefined;
    return info;
  }

  /** Keeps a registration under its authorization server's issuer (a client registered beforehand is not written). */
  saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext): void {
    if (this.#options.client) return;
    this.#saveEntry(FILES.client, info, ctx);
  }

  /** The tokens of `ctx`'s authorization server (without one, those saved last: what a request carries). */
  tokens(ctx?: OAuthClientInformationContext): StoredOAuthTokens | undefined {
    return this.#entry<StoredOAuthTokens>(FILES.tokens, ctx);
  }

  /** Keeps the tokens under their issuer, with `expires_at` (epoch milliseconds) when they say `expires_in`. */
  saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): void {
    const now = (this.#options.now ?? Date.now)();
    this.#saveEntry(
      FILES.tokens,
      { ...tokens, ...(typeof tokens.expires_in === 'number' ? { expires_at: now + tokens.expires_in * 1000 } : {}) },
      ctx,
    );
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
        throw new AdapterError(
          'config',
          `cannot listen for the sign-in callback on 127.0.0.1:${port}: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
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
    out.write(
      `mcp-dual-era: ${this.serverUrl} asks you to sign in${this.#options.browser === false ? '' : ' (opening your browser)'}.\nSign in at: ${url.href}\n`,
    );
    if (this.#options.browser !== false) (this.#options.opener ?? openBrowser)(url.href);
  }

  /** The code the browser brings back to the callback (with the `iss` it carried), for the sign-in just begun. */
  waitForAuthorizationCode(signal: AbortSignal): Promise<AuthorizationResponse> {
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
