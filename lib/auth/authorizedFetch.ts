/**
 * `authorizedFetch`: a `fetch` for an MCP client's transport that sends the user's OAuth token,
 * refreshes it before it expires, and on a 401 (or a 403 `insufficient_scope`) runs the SDK's
 * `auth()` (`@modelcontextprotocol/client`: discovery with the RFC 8414 issuer check, registration
 * or a client ID metadata document, PKCE, the RFC 9207 `iss` check of the authorization response,
 * token requests, credentials bound to their issuer), waits for the sign-in when the provider can,
 * and sends the request again. Runtime-neutral: browser, callback listener and files are the provider's.
 */
import type { OAuthClientProvider, OAuthTokens } from '@modelcontextprotocol/client';
import { AdapterError } from '../core/errors.ts';

/** How long a sign-in may wait for the user (and the browser's callback) by default: 5 minutes. */
export const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

/** What the authorization response brought back: the code, and the issuer it named (RFC 9207), if it named one. */
export interface AuthorizationResponse {
  readonly code: string;
  readonly iss?: string | undefined;
}

/**
 * An SDK `OAuthClientProvider` that can also wait for the code of the sign-in it redirected to
 * (`SignInProvider` is one): with it, {@link authorizedFetch} completes a sign-in on its own.
 */
export interface InteractiveOAuthClientProvider extends OAuthClientProvider {
  /** Readies the redirect target (say, a loopback listener) before `auth()` may register or redirect. */
  prepareAuthorization?(): void | Promise<void>;
  /**
   * The authorization response of the sign-in `redirectToAuthorization` began: its code, with the
   * `iss` it carried (checked against the authorization server's issuer before the code is
   * redeemed); a bare code is taken as a response without `iss`. Rejects when the sign-in failed
   * or `signal` ends the wait.
   */
  waitForAuthorizationCode(signal: AbortSignal): Promise<string | AuthorizationResponse>;
  /** Releases what `prepareAuthorization` readied; called after every authorization, however it ended. */
  finishAuthorization?(): void | Promise<void>;
}

/** Whether a provider can wait for the code of its own sign-in. */
export function isInteractiveProvider(provider: OAuthClientProvider): provider is InteractiveOAuthClientProvider {
  return typeof (provider as Partial<InteractiveOAuthClientProvider>).waitForAuthorizationCode === 'function';
}

/** Options of {@link authorizedFetch}. */
export interface AuthorizedFetchOptions {
  /** The fetch that sends the MCP requests (default the global one). */
  readonly fetch?: typeof fetch;
  /** The fetch for discovery, registration and token requests (default `fetch`). */
  readonly authFetch?: typeof fetch;
  /** Ends a sign-in in progress (say, on shutdown); the requests waiting for it fail. */
  readonly signal?: AbortSignal;
  /** How long a sign-in may wait for the user (default {@link SIGN_IN_TIMEOUT_MS}). */
  readonly signInTimeoutMs?: number;
  /** The clock, for token expiry (default `Date.now`). */
  readonly now?: () => number;
}

type SdkAuth = typeof import('@modelcontextprotocol/client');
let sdkAuth: Promise<SdkAuth> | undefined;
/** The SDK's OAuth client, loaded when first needed (an unprotected server never needs it). */
const loadSdk = () => (sdkAuth ??= import('@modelcontextprotocol/client'));

/**
 * How many sign-ins one provider makes for the same scope a 403 `insufficient_scope` asks for: a
 * server that still refuses once the user granted it is not asked again (no sign-in loop).
 */
export const MAX_STEP_UPS = 1;

/** What a refusal asks for. */
interface Need {
  readonly scope?: string;
  readonly resourceMetadataUrl?: URL;
  /** A 403 `insufficient_scope`, not a 401. */
  readonly insufficientScope: boolean;
  /** A new authorization even with a refresh token at hand (a refresh cannot widen the scope). */
  readonly reauthorize?: boolean;
}

/** How an authorization ended: tokens refreshed (or a non-interactive grant), or a sign-in completed. */
type Authorized = 'refreshed' | 'signed-in';

/** The authorization in progress per provider: concurrent requests share it, whichever fetch they came through. */
const flights = new WeakMap<OAuthClientProvider, Promise<Authorized>>();
/** The step-ups each provider made, by the scope they asked for. */
const stepUps = new WeakMap<OAuthClientProvider, Map<string, number>>();
/** When an access token with `expires_in` but no stored `expires_at` was first seen, per provider. */
const firstSeen = new WeakMap<OAuthClientProvider, { token: string; at: number; life: number }>();

/** Refresh this long before expiry: a tenth of the token's life, at most a minute. */
const MAX_MARGIN_MS = 60_000;

/** An error as a person reads it: its message, and what it says it was caused by (fetch's `fetch failed` names no more). */
function described(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause as { code?: unknown; message?: unknown } | undefined;
  const why =
    cause === undefined
      ? undefined
      : typeof cause.code === 'string'
        ? `${cause.code}${typeof cause.message === 'string' && !cause.message.includes(cause.code) ? `: ${cause.message}` : ''}`
        : typeof cause.message === 'string'
          ? cause.message
          : undefined;
  return why ? `${e.message} (${why})` : e.message;
}

/** `promise`, or the reason of `signal` once it aborts (the promise goes on for others). */
function within<T>(promise: Promise<T>, signal: AbortSignal | null | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A request that can be sent again with another token (bodies of our transports are strings; a stream body cannot be). */
function replayable(input: Parameters<typeof fetch>[0], init: RequestInit | undefined) {
  const template = input instanceof Request ? input.clone() : undefined;
  const url = input instanceof Request ? input.url : String(input);
  const again = !(init?.body instanceof ReadableStream);
  const build = (token: string | undefined): [Parameters<typeof fetch>[0], RequestInit | undefined] => {
    const headers = new Headers(init?.headers ?? template?.headers);
    if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
    if (template) return [new Request(template.clone(), { ...init, headers }), undefined];
    return [input, { ...init, headers }];
  };
  return { url, again, build, signal: init?.signal ?? (input instanceof Request ? input.signal : undefined) };
}

/** The token's expiry and life, when known (from `expires_in` counted from when `provider` first showed it, when it has no `expires_at`). */
function expiryOf(
  provider: OAuthClientProvider,
  tokens: OAuthTokens,
  now: () => number,
): { at: number; life: number | undefined } | undefined {
  const stored = (tokens as { expires_at?: unknown }).expires_at;
  const life = typeof tokens.expires_in === 'number' ? tokens.expires_in * 1000 : undefined;
  if (typeof stored === 'number') return { at: stored, life };
  if (life === undefined) return undefined;
  const seen = firstSeen.get(provider);
  if (seen?.token === tokens.access_token) return seen;
  const fresh = { token: tokens.access_token, at: now() + life, life };
  firstSeen.set(provider, fresh);
  return fresh;
}

/** Whether the token expires within a tenth of its life (at most a minute). */
function expiringSoon(provider: OAuthClientProvider, tokens: OAuthTokens, now: () => number): boolean {
  const e = expiryOf(provider, tokens, now);
  if (!e) return false;
  const margin = Math.min(MAX_MARGIN_MS, e.life === undefined ? MAX_MARGIN_MS : e.life / 10);
  return now() >= e.at - margin;
}

/** What one authorization is given: the server, the fetch for the authorization server, how long and until when a sign-in may wait. */
interface AuthorizationContext {
  readonly serverUrl: string | URL;
  readonly server: string;
  readonly authFetch: typeof fetch;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** One authorization: `auth()`, and for a sign-in the wait for its code and the exchange. */
async function runAuthorization(provider: OAuthClientProvider, need: Partial<Need>, context: AuthorizationContext): Promise<Authorized> {
  const { serverUrl, server, authFetch, timeoutMs } = context;
  const { auth, UnauthorizedError } = await loadSdk();
  const interactive = isInteractiveProvider(provider) ? provider : undefined;
  const base = { serverUrl, fetchFn: authFetch, ...(need.resourceMetadataUrl ? { resourceMetadataUrl: need.resourceMetadataUrl } : {}) };
  try {
    await interactive?.prepareAuthorization?.();
    const first = await auth(provider, {
      ...base,
      ...(need.scope ? { scope: need.scope } : {}),
      ...(need.reauthorize ? { forceReauthorization: true } : {}),
    });
    if (first === 'AUTHORIZED') return 'refreshed';
    if (!interactive) {
      throw new UnauthorizedError(
        `${server} needs a sign-in: the provider was sent to the authorization URL; once the code is back, call auth(provider, { serverUrl, authorizationCode }) and send the request again`,
      );
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = context.signal ? AbortSignal.any([context.signal, timeout]) : timeout;
    let answer: string | AuthorizationResponse;
    try {
      answer = await interactive.waitForAuthorizationCode(signal);
    } catch (e) {
      if (timeout.aborted)
        throw new AdapterError('timeout', `no sign-in to ${server} within ${Math.round(timeoutMs / 1000)} s`, { cause: e });
      if (context.signal?.aborted) throw new AdapterError('cancelled', `the sign-in to ${server} was cancelled`, { cause: e });
      throw e;
    }
    const { code, iss } = typeof answer === 'string' ? { code: answer, iss: undefined } : answer;
    if ((await auth(provider, { ...base, authorizationCode: code, ...(iss !== undefined ? { iss } : {}) })) !== 'AUTHORIZED')
      throw new AdapterError('upstream-error', `the sign-in to ${server} ended without tokens`);
    return 'signed-in';
  } catch (e) {
    if (e instanceof UnauthorizedError || e instanceof AdapterError) throw e;
    throw new AdapterError('upstream-error', `the sign-in to ${server} failed: ${described(e)}`, { cause: e });
  } finally {
    await interactive?.finishAuthorization?.();
  }
}

/** What a refusal from `server` asks for, or `undefined` when the response is not one to act on. */
async function needOf(response: Response, requestUrl: string, server: string): Promise<Need | undefined> {
  if (response.status !== 401 && response.status !== 403) return undefined;
  const { extractWWWAuthenticateParams } = await loadSdk();
  const challenge = extractWWWAuthenticateParams(response);
  if (response.status === 403 && challenge.error !== 'insufficient_scope') return undefined;
  const from = new URL(response.url || requestUrl);
  const metadata = challenge.resourceMetadataUrl;
  if (metadata && metadata.origin !== from.origin) {
    await response.body?.cancel().catch(() => {});
    throw new AdapterError(
      'upstream-error',
      `refused to sign in to ${server}: its ${response.status} names resource metadata at ${metadata.origin}, another origin than ${from.origin} that answered; it was not fetched (a server may only point at metadata of its own origin)`,
    );
  }
  return {
    insufficientScope: response.status === 403,
    ...(challenge.scope ? { scope: challenge.scope } : {}),
    ...(metadata ? { resourceMetadataUrl: metadata } : {}),
  };
}

/**
 * A `fetch` that authorizes every request to `serverUrl` with the provider's tokens:
 *
 * - every request carries `Authorization: Bearer <access token>` from `provider.tokens()` (with a
 *   provider that has `dpop()`, a DPoP-bound token goes as `Authorization: DPoP` with a fresh proof);
 * - a token that expires within a tenth of its life (at most 60 s), by its `expires_at` (epoch
 *   milliseconds, kept by providers such as `SignInProvider`) or else from `expires_in` counted from
 *   when it was first seen, is refreshed first through the SDK's `auth()` when there is a refresh token;
 * - a 401 is read (`resource_metadata`, `scope` of its `WWW-Authenticate`); a `resource_metadata`
 *   URL on another origin than the 401 came from is refused with an `AdapterError` and never
 *   fetched; otherwise `auth()` refreshes or, when the refresh token is refused, starts a sign-in. A
 *   provider that can wait for the code ({@link InteractiveOAuthClientProvider}) is waited for
 *   (`signInTimeoutMs`, default 5 minutes), the code is exchanged with `auth()` (after the
 *   response's `iss` is checked against the authorization server's issuer), and the request sent
 *   again. A 401 right after a fresh sign-in is returned as it is;
 * - a token the server refuses may mean it moved to another authorization server: its resource
 *   metadata is read again before the refresh or sign-in, which go where it names now (with a
 *   registration of its own there: credentials are kept by issuer, and never sent to another);
 * - a 403 with `error="insufficient_scope"` signs in again (no refresh: it cannot widen a scope)
 *   for the scope the token has and the one asked for together, once per scope
 *   ({@link MAX_STEP_UPS}): a server that still refuses gets its 403 back, with no sign-in loop;
 * - concurrent requests share one refresh or sign-in per provider.
 *
 * With a plain SDK provider, whose `redirectToAuthorization` sends the user away by itself, there
 * is no code to wait for: the request fails with the SDK's `UnauthorizedError`, as the SDK's own
 * transports do; call `auth(provider, { serverUrl, authorizationCode, iss })` once the code is back,
 * then send again. A provider with no redirect URL (the SDK's `ClientCredentialsProvider`,
 * `PrivateKeyJwtProvider`) gets its tokens from `auth()` at once. Failures of discovery (an
 * authorization server whose metadata names another issuer among them), registration or token
 * requests reject with an `AdapterError` that says why.
 */
export function authorizedFetch(
  provider: OAuthClientProvider,
  serverUrl: string | URL,
  options: AuthorizedFetchOptions = {},
): typeof fetch {
  const send: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const authFetch: typeof fetch = options.authFetch ?? send;
  const now = options.now ?? Date.now;
  const timeoutMs = options.signInTimeoutMs ?? SIGN_IN_TIMEOUT_MS;
  const server = String(serverUrl);
  const context: AuthorizationContext = { serverUrl, server, authFetch, timeoutMs, signal: options.signal };

  /** The authorization in progress for this provider, or a new one for `need`. */
  const authorize = (need: Partial<Need>): Promise<Authorized> => {
    const running = flights.get(provider);
    if (running) return running;
    const flight = runAuthorization(provider, need, context).finally(() => {
      if (flights.get(provider) === flight) flights.delete(provider);
    });
    flight.catch(() => {});
    flights.set(provider, flight);
    return flight;
  };

  /** What sends a request to the server: with a DPoP provider, under the DPoP scheme with a fresh proof each time its token is DPoP-bound. */
  let dpopSend: Promise<typeof fetch> | undefined;
  const sender = (): typeof fetch | Promise<typeof fetch> =>
    typeof provider.dpop !== 'function'
      ? send
      : (dpopSend ??= loadSdk().then(
          ({ withDpopFromProvider }) => withDpopFromProvider(provider)(send as never) as unknown as typeof fetch,
        ));

  return async (input, init) => {
    const request = replayable(input, init);
    const out = await sender();
    const running = flights.get(provider);
    if (running) await within(running, request.signal);
    let tokens = await provider.tokens();
    if (tokens?.refresh_token && expiringSoon(provider, tokens, now)) {
      await within(authorize({}), request.signal);
      tokens = await provider.tokens();
    }
    let sent = tokens?.access_token;
    let response = await out(...request.build(sent));
    let last: Authorized | 'changed' | undefined;
    for (let rounds = 0; ; rounds++) {
      let need = await needOf(response, request.url, server);
      if (!need) return response;
      if (need.insufficientScope) {
        // A step-up asks for what the token has and what the server wants (a new sign-in, not a
        // refresh), once for each scope: a server that still refuses is answered as it answered.
        const { computeScopeUnion } = await loadSdk();
        const scope = computeScopeUnion((await provider.tokens())?.scope, need.scope);
        const made = stepUps.get(provider) ?? new Map<string, number>();
        const key = scope ?? '';
        if ((made.get(key) ?? 0) >= MAX_STEP_UPS || rounds >= 3) return response;
        made.set(key, (made.get(key) ?? 0) + 1);
        stepUps.set(provider, made);
        need = { ...need, ...(scope !== undefined ? { scope } : {}), reauthorize: true };
        last = await within(authorize(need), request.signal);
      } else {
        if (last === 'signed-in' || rounds >= 2) return response;
        const current = (await provider.tokens())?.access_token;
        if (last === undefined && current !== undefined && current !== sent) {
          // Another request refreshed or signed in while this one was out: its token may do.
          last = 'changed';
        } else {
          // A token the server refuses: it may have moved to another authorization server
          // (SEP-2352), so its resource metadata is read again and the refresh or sign-in goes
          // where it names now (credentials are kept by issuer: another one registers anew there).
          if (sent !== undefined) await provider.invalidateCredentials?.('discovery');
          // One just refreshed and still refused is not refreshed again: a new sign-in.
          if (last !== undefined) await provider.invalidateCredentials?.('tokens');
          last = await within(authorize(need), request.signal);
        }
      }
      if (!request.again) return response;
      await response.body?.cancel().catch(() => {});
      sent = (await provider.tokens())?.access_token;
      response = await out(...request.build(sent));
    }
  };
}
