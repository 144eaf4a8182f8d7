/**
 * An in-memory OAuth client provider for SDK clients inside specs (the v1 SDK's and the v2 SDK's
 * `OAuthClientProvider`, which have the same shape), and `signIn`, the SDK's documented interactive
 * flow with the automatic browser of oauthBrowser.ts in place of a user. Nothing is persisted; the
 * redirect URL is never called (the code is read from the authorization server's redirect).
 */
import type {
  OAuthClientProvider as V2OAuthClientProvider,
  OAuthDiscoveryState as V2DiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type {
  OAuthClientProvider as V1OAuthClientProvider,
  OAuthDiscoveryState as V1DiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { authorizationCode } from './oauthBrowser.ts';

/** What both SDKs store and read back, whichever wrote it. */
type ClientInformation = OAuthClientInformationMixed & StoredOAuthClientInformation;
type Tokens = OAuthTokens & StoredOAuthTokens;
type DiscoveryState = V1DiscoveryState & V2DiscoveryState;

export const TEST_REDIRECT_URL = 'http://127.0.0.1:1/callback';

export interface TestOAuthProviderOptions {
  /** Default {@link TEST_REDIRECT_URL}. */
  redirectUrl?: string;
  /** Merged over the default metadata (a public client: `token_endpoint_auth_method: 'none'`). */
  clientMetadata?: Partial<OAuthClientMetadata>;
}

/**
 * Keeps the client registration, tokens, PKCE verifier and discovery state in memory, and records
 * where the SDK wanted to send the user.
 */
export class TestOAuthProvider implements V1OAuthClientProvider, V2OAuthClientProvider {
  /** The last authorization URL the SDK asked to open. */
  lastAuthorizationUrl: URL | undefined;
  /** How many times the SDK asked to send the user to the authorization server. */
  redirects = 0;
  /** How many token sets the SDK saved (sign-ins and refreshes). */
  tokenSaves = 0;
  private readonly redirectTo: string;
  private readonly metadata: OAuthClientMetadata;
  private client: ClientInformation | undefined;
  private saved: Tokens | undefined;
  private verifier: string | undefined;
  private discovery: DiscoveryState | undefined;

  constructor(options: TestOAuthProviderOptions = {}) {
    this.redirectTo = options.redirectUrl ?? TEST_REDIRECT_URL;
    this.metadata = {
      client_name: 'mcp-dual-era spec client',
      redirect_uris: [this.redirectTo],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...options.clientMetadata,
    };
  }

  get redirectUrl(): string {
    return this.redirectTo;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.metadata;
  }

  clientInformation(): ClientInformation | undefined {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed | StoredOAuthClientInformation): void {
    this.client = information as ClientInformation;
  }

  tokens(): Tokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens | StoredOAuthTokens): void {
    this.saved = tokens as Tokens;
    this.tokenSaves++;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.lastAuthorizationUrl = authorizationUrl;
    this.redirects++;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE code verifier was saved');
    return this.verifier;
  }

  saveDiscoveryState(state: V1DiscoveryState | V2DiscoveryState): void {
    this.discovery = state as DiscoveryState;
  }

  discoveryState(): DiscoveryState | undefined {
    return this.discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}

/** One connection attempt: a fresh transport (an SDK transport cannot be started twice) and how to connect on it. */
export interface SignInAttempt<T> {
  readonly transport: { finishAuth(authorizationCode: string): Promise<void> };
  connect(): Promise<T>;
}

/**
 * The SDK's documented interactive sign-in: connect; when that fails because the SDK sent the user
 * to the authorization server (the provider was asked to redirect), follow `lastAuthorizationUrl`
 * with the automatic browser, hand the code to the failed attempt's `transport.finishAuth`, and
 * connect again on a fresh attempt. A failure without a redirect is rethrown as is. Resolves with
 * what the successful `connect` resolved with.
 */
export async function signIn<T>(attempt: () => SignInAttempt<T>, provider: TestOAuthProvider): Promise<T> {
  const first = attempt();
  const redirectsBefore = provider.redirects;
  try {
    return await first.connect();
  } catch (error) {
    if (provider.redirects === redirectsBefore || provider.lastAuthorizationUrl === undefined) throw error;
  }
  const { code } = await authorizationCode(provider.lastAuthorizationUrl);
  await first.transport.finishAuth(code);
  return attempt().connect();
}
