/**
 * Who a bearer token names, as far as a front that passes tokens on can tell without checking
 * them: the issuer and subject of a JWT (`iss`, `sub`). The upstream checks the token's signature;
 * once it took two tokens naming the same subject of the same issuer, they are the same caller's
 * (a refreshed token). An opaque token names nobody we can read.
 */

/** The `iss` and `sub` of a `Bearer` JWT in `authorization`, joined; `undefined` for anything else. */
export function tokenSubject(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+([\w-]+)\.([\w-]+)\.([\w-]*)$/i.exec(authorization?.trim() ?? '');
  if (!match) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(match[2]!, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const { iss, sub } = claims as { iss?: unknown; sub?: unknown };
  if (typeof sub !== 'string' || sub === '' || (iss !== undefined && typeof iss !== 'string')) return undefined;
  return `${iss ?? ''}\u0000${sub}`;
}

/** Whether two `Authorization` values are bearer JWTs naming the same subject of the same issuer. */
export function sameSubject(a: string | undefined, b: string | undefined): boolean {
  const subject = tokenSubject(a);
  return subject !== undefined && subject === tokenSubject(b);
}
