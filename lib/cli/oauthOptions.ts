/**
 * The sign-in options of `mcp-dual-era connect`, read into the OAuth provider they describe: a
 * person's sign-in through the browser (`SignInProvider`: dynamic registration, a client ID
 * metadata document with `--client-metadata-url`, or a client registered beforehand with
 * `--client-id`), or, with `--grant client-credentials`, a program's own credentials (the SDK's
 * `ClientCredentialsProvider` with a secret, `PrivateKeyJwtProvider` with a private key); DPoP-bound
 * tokens with `--dpop`. A secret is read from the environment variable named, never from the
 * command line (which other users of the machine may read).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { SignInProvider } from '../auth/signInProvider.ts';
import type { Read } from './options.ts';

/** The values of `connect`'s sign-in options, as `parseArgs` gives them. */
export interface OAuthValues {
  readonly oauth?: boolean | undefined;
  readonly 'no-browser'?: boolean | undefined;
  readonly 'oauth-dir'?: string | undefined;
  readonly 'callback-port'?: string | undefined;
  readonly 'client-metadata-url'?: string | undefined;
  readonly 'client-id'?: string | undefined;
  readonly 'client-secret-env'?: string | undefined;
  readonly issuer?: string | undefined;
  readonly grant?: string | undefined;
  readonly 'private-key-file'?: string | undefined;
  readonly 'signing-alg'?: string | undefined;
  readonly dpop?: boolean | undefined;
}

/** The options that go with `--oauth` only. */
const WITH_OAUTH = [
  'no-browser',
  'oauth-dir',
  'callback-port',
  'client-metadata-url',
  'client-id',
  'client-secret-env',
  'issuer',
  'grant',
  'private-key-file',
  'signing-alg',
  'dpop',
] as const;

/** The algorithms a private key may sign client assertions with. */
const SIGNING_ALGS = new Set(['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA']);

const fail = (message: string): Read<never> => ({ ok: false, message });

/**
 * The provider `values` describe for the server at `serverUrl` (`undefined` without `--oauth`), or
 * why they do not go together. `env` is where secrets are read from.
 */
export async function oauthProvider(
  values: OAuthValues,
  serverUrl: URL,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Read<OAuthClientProvider | undefined>> {
  if (values.oauth !== true) {
    const stray = WITH_OAUTH.filter((name) => values[name] !== undefined && values[name] !== false);
    return stray.length > 0
      ? fail(`${stray.map((n) => `--${n}`).join(', ')} ${stray.length === 1 ? 'goes' : 'go'} with --oauth`)
      : { ok: true, value: undefined };
  }
  const callbackPort =
    values['callback-port'] === undefined
      ? undefined
      : /^\d{1,5}$/.test(values['callback-port'])
        ? Number(values['callback-port'])
        : Number.NaN;
  if (callbackPort !== undefined && !(callbackPort >= 1 && callbackPort <= 65535))
    return fail(`--callback-port must be a port number from 1 to 65535, not ${values['callback-port']}`);
  const metadataUrl = values['client-metadata-url'];
  if (metadataUrl !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(metadataUrl);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.protocol !== 'https:' || parsed.pathname === '/')
      return fail(
        `--client-metadata-url must be an https URL with a path (where the client's metadata document is published), not ${metadataUrl}`,
      );
  }
  if (values.issuer !== undefined && values['client-id'] === undefined)
    return fail('--issuer names the authorization server a client registered beforehand belongs to: it goes with --client-id');
  const secretEnv = values['client-secret-env'];
  if (secretEnv !== undefined && values['client-id'] === undefined) return fail('--client-secret-env goes with --client-id');
  const secret = secretEnv === undefined ? undefined : env[secretEnv];
  if (secretEnv !== undefined && (secret === undefined || secret === ''))
    return fail(`--client-secret-env names ${secretEnv}, which is not set (or empty) in the environment`);
  if (values['signing-alg'] !== undefined && values['private-key-file'] === undefined)
    return fail('--signing-alg goes with --private-key-file');
  if (values.grant !== undefined && values.grant !== 'client-credentials' && values.grant !== 'authorization-code')
    return fail(`--grant is authorization-code (a person signs in, the default) or client-credentials, not ${values.grant}`);

  let provider: OAuthClientProvider;
  if (values.grant === 'client-credentials') {
    const clientId = values['client-id'];
    if (clientId === undefined) return fail('--grant client-credentials needs --client-id, and --client-secret-env or --private-key-file');
    for (const name of ['no-browser', 'callback-port', 'client-metadata-url', 'oauth-dir'] as const) {
      if (values[name] !== undefined && values[name] !== false)
        return fail(`--${name} is for a person's sign-in, not --grant client-credentials`);
    }
    const keyFile = values['private-key-file'];
    if ((secret === undefined) === (keyFile === undefined))
      return fail('--grant client-credentials needs one of --client-secret-env and --private-key-file');
    const sdk = await import('@modelcontextprotocol/client');
    const expected = values.issuer !== undefined ? { expectedIssuer: values.issuer } : {};
    if (keyFile !== undefined) {
      const algorithm = values['signing-alg'] ?? 'ES256';
      if (!SIGNING_ALGS.has(algorithm)) return fail(`--signing-alg is one of ${[...SIGNING_ALGS].join(', ')}, not ${algorithm}`);
      let privateKey: string;
      try {
        privateKey = readFileSync(resolve(keyFile), 'utf8');
      } catch (e) {
        return fail(`--private-key-file ${keyFile} cannot be read: ${e instanceof Error ? e.message : String(e)}`);
      }
      provider = new sdk.PrivateKeyJwtProvider({ clientId, privateKey, algorithm, clientName: 'mcp-dual-era', ...expected });
    } else {
      provider = new sdk.ClientCredentialsProvider({ clientId, clientSecret: secret!, clientName: 'mcp-dual-era', ...expected });
    }
    if (values.dpop) {
      // The SDK's machine-to-machine providers have no DPoP switch of their own: the same session for the provider's life.
      let session: ReturnType<typeof sdk.DpopSession.create> | undefined;
      Object.assign(provider, { dpop: () => (session ??= sdk.DpopSession.create()) });
    }
    return { ok: true, value: provider };
  }
  if (values['private-key-file'] !== undefined)
    return fail("--private-key-file signs a program's own client assertion: it goes with --grant client-credentials");
  const clientId = values['client-id'];
  provider = new SignInProvider({
    serverUrl,
    browser: !values['no-browser'],
    output: process.stderr,
    ...(values['oauth-dir'] !== undefined ? { dir: resolve(values['oauth-dir']) } : {}),
    ...(callbackPort !== undefined ? { callbackPort } : {}),
    ...(metadataUrl !== undefined ? { clientMetadataUrl: metadataUrl } : {}),
    ...(clientId !== undefined
      ? {
          client: {
            id: clientId,
            ...(secret !== undefined ? { secret } : {}),
            ...(values.issuer !== undefined ? { issuer: values.issuer } : {}),
          },
        }
      : {}),
    ...(values.dpop ? { dpop: true } : {}),
  });
  return { ok: true, value: provider };
}
