/**
 * The "browser" of OAuth specs: opens an authorization URL the way a user's browser would, without
 * a user (the local authorization server approves at once), and reads where it sends the user back.
 * Also finds the authorization URL a CLI printed. It renders nothing and never follows more than
 * the one redirect of the authorization server (plus the callback itself for `followAuthorization`).
 */

/** The authorization server's answer: the redirect URI with `code` and `state`. */
export interface AuthorizationResult {
  readonly code: string;
  readonly state: string | null;
  /** The full redirect URI the authorization server sent the user to. */
  readonly redirect: URL;
}

/**
 * GETs `authorizationUrl` without following redirects and returns the code it redirected with.
 * Throws when the authorization server answered otherwise: a page (its body in the message) or a
 * redirect carrying `error` (its `error` and `error_description` in the message).
 */
export async function authorizationCode(authorizationUrl: string | URL): Promise<AuthorizationResult> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || location === null) {
    const body = await response.text().catch(() => '');
    throw new Error(`the authorization server did not redirect (HTTP ${response.status}) for ${String(authorizationUrl)}: ${body}`);
  }
  await response.body?.cancel();
  const redirect = new URL(location, authorizationUrl);
  const error = redirect.searchParams.get('error');
  if (error !== null)
    throw new Error(
      `the authorization server refused: ${error}${redirect.searchParams.has('error_description') ? ` (${redirect.searchParams.get('error_description')})` : ''}`,
    );
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`the authorization server redirected without a code: ${redirect.href}`);
  return { code, state: redirect.searchParams.get('state'), redirect };
}

/**
 * Plays the whole browser side of a sign-in: gets the code as {@link authorizationCode} does, then
 * GETs the redirect URI (the client's loopback callback) and returns it. Throws when the callback
 * cannot be reached or answers with an error status (its body in the message).
 */
export async function followAuthorization(authorizationUrl: string | URL): Promise<URL> {
  const { redirect } = await authorizationCode(authorizationUrl);
  const response = await fetch(redirect, { redirect: 'manual' });
  const body = await response.text().catch(() => '');
  if (response.status >= 400) throw new Error(`the client's callback answered HTTP ${response.status} at ${redirect.href}: ${body}`);
  return redirect;
}

/**
 * The first `http(s)://…/authorize?…` URL in text a CLI printed (one URL a line, possibly after
 * words), or `undefined` when there is none yet.
 */
export function authorizationUrlFrom(stderrText: string): URL | undefined {
  for (const line of stderrText.split(/\r?\n/)) {
    const match = /https?:\/\/[^\s"'<>]+?\/authorize\?[^\s"'<>]*/.exec(line);
    if (match && URL.canParse(match[0])) return new URL(match[0]);
  }
  return undefined;
}
