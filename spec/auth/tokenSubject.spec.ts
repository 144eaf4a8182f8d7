/**
 * tokenSubject / sameSubject: which bearer tokens a front that passes tokens on may take for the
 * same caller (a refreshed JWT naming the same subject of the same issuer), and which it may not
 * (another subject, another issuer, an opaque token, a malformed one).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sameSubject, tokenSubject } from '../../lib/auth/tokenSubject.ts';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const jwt = (claims: Record<string, unknown>) => `Bearer ${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.c2lnbmF0dXJl`;

const t = suite('tokenSubject');

t('should read the issuer and subject of a bearer JWT', () => {
  assert.is(tokenSubject(jwt({ iss: 'https://as.example', sub: 'alice', exp: 1 })), 'https://as.example\u0000alice');
  assert.is(tokenSubject(jwt({ sub: 'alice' })), '\u0000alice');
});

t('should name nobody for an opaque, malformed or subjectless token', () => {
  for (const value of [
    undefined,
    '',
    'Bearer opaque-token-value',
    'Basic YWxpY2U6c2VjcmV0',
    `Bearer a.${b64('no object')}.c`,
    `Bearer a.${b64({ iss: 'x' })}.c`,
    `Bearer a.${b64({ sub: 7 })}.c`,
    `Bearer a.${b64({ sub: 'a', iss: 3 })}.c`,
    'Bearer a.!!!.c',
    `Bearer a.${Buffer.from('{not json').toString('base64url')}.c`,
  ])
    assert.is(tokenSubject(value), undefined, String(value));
});

t('should take a refreshed JWT of the same subject and issuer for the same caller, and nothing else', () => {
  assert.ok(sameSubject(jwt({ iss: 'i', sub: 'alice', exp: 1 }), jwt({ iss: 'i', sub: 'alice', exp: 2 })));
  assert.not.ok(sameSubject(jwt({ iss: 'i', sub: 'alice' }), jwt({ iss: 'i', sub: 'bob' })));
  assert.not.ok(sameSubject(jwt({ iss: 'i', sub: 'alice' }), jwt({ iss: 'other', sub: 'alice' })));
  assert.not.ok(sameSubject('Bearer opaque-1', 'Bearer opaque-1'), 'opaque tokens name nobody, even equal ones');
  assert.not.ok(sameSubject(undefined, undefined));
});

t.run();
