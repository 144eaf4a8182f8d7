/**
 * An authorization URL is printed and opened only when it is https (or http to this machine),
 * carries no credentials, is not over-long and holds no shell metacharacter or control character:
 * `javascript:`, `file:`, `data:`, `$(…)`, a backtick and the rest are refused with a message that
 * says why, and the provider's `redirectToAuthorization` then neither prints nor opens anything.
 * Also the platform openers, started without a shell.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthorizationUrl, isLoopbackHost, MAX_AUTHORIZATION_URL_LENGTH } from '../../lib/auth/authorizationUrl.ts';
import { browserOpener, openBrowser } from '../../lib/auth/openBrowser.ts';
import { SignInProvider } from '../../lib/auth/signInProvider.ts';

function refusal(url: string | URL): string {
  const checked = checkAuthorizationUrl(url);
  assert.not.ok(checked.ok, `accepted ${String(url)}`);
  return checked.ok ? '' : checked.error;
}

const c = suite('checkAuthorizationUrl');

c('should accept an https URL and an http URL to this machine', () => {
  const https = checkAuthorizationUrl(
    'https://auth.example.com/authorize?response_type=code&client_id=abc&code_challenge=x-y_z&state=s1&redirect_uri=http%3A%2F%2F127.0.0.1%3A4567%2Fcallback',
  );
  assert.ok(https.ok);
  assert.is(https.ok && https.value.searchParams.get('client_id'), 'abc');
  for (const url of [
    'http://127.0.0.1:8080/authorize?a=1',
    'http://localhost:3000/authorize',
    'http://[::1]:9/authorize',
    'http://127.9.8.7/authorize',
  ])
    assert.ok(checkAuthorizationUrl(url).ok, url);
  // The SDK hands a URL object, its query built with URLSearchParams.
  const built = new URL('https://auth.example.com/authorize');
  built.searchParams.set('scope', 'read write $(x) `y`');
  assert.ok(checkAuthorizationUrl(built).ok, 'what URLSearchParams encodes is data, not shell');
});

c('should refuse javascript:, file: and data: URLs, naming the scheme and why', () => {
  assert.match(refusal('javascript:alert(document.cookie)//https://auth.example.com/'), /javascript: is not one: it runs script/);
  assert.match(refusal('file:///etc/passwd'), /file: is not one: it opens a file on this machine/);
  assert.match(refusal('data:text/html,<script>alert(1)</script>'), /data: is not one: it carries its own content/);
  assert.match(
    refusal('ftp://auth.example.com/authorize'),
    /only https: URLs \(or http: to this machine\) are opened, and ftp: is not one/,
  );
});

c('should refuse shell metacharacters: $(…), a backtick, quotes, a pipe, a semicolon, spaces and control characters', () => {
  assert.match(refusal('https://a.example/authorize?x=$(touch /tmp/pwned)'), /contains "\$"/);
  assert.match(
    refusal(new URL('https://a.example/authorize?x=$(touch%20/tmp/pwned)')),
    /contains "\$", a character no authorization URL needs unencoded/,
  );
  assert.match(refusal('https://a.example/authorize?x=`id`'), /contains "`"/);
  assert.match(refusal('https://a.example/auth`id`orize'), /contains "`"/);
  assert.match(refusal('https://a.example/authorize?x=1|id'), /contains "\|"/);
  assert.match(refusal('https://a.example/authorize?x=1;id'), /contains ";"/);
  assert.match(refusal("https://a.example/author'ize"), /contains "'"/);
  assert.match(refusal('https://a.example/authorize?x=a b'), /contains " "/);
  assert.match(refusal('https://a.example/authorize?x=1\nrm -rf ~'), /contains "\\n"/);
  assert.match(refusal('https://a.example/authorize?x=1\u0007'), /contains "\\u0007"/);
  assert.match(refusal('https://a.example/a\\b'), /contains "\\\\"/);
  // The refused URL is quoted, never echoed raw to the terminal.
  assert.not.match(refusal('https://a.example/authorize?x=1\u001b[2J'), '\u001b');
});

c('should refuse an over-long URL, http to another host and credentials', () => {
  const long = `https://a.example/authorize?pad=${'a'.repeat(MAX_AUTHORIZATION_URL_LENGTH)}`;
  assert.match(refusal(long), new RegExp(`it is ${long.length} characters long, over the ${MAX_AUTHORIZATION_URL_LENGTH} accepted`));
  assert.ok(
    checkAuthorizationUrl(`https://a.example/authorize?pad=${'a'.repeat(MAX_AUTHORIZATION_URL_LENGTH - 40)}`).ok,
    'long but within the bound',
  );
  assert.match(refusal('http://auth.example.com/authorize'), /http: is accepted only to this machine .* not auth\.example\.com: use https/);
  assert.match(refusal('http://127.0.0.1.evil.example/authorize'), /http: is accepted only to this machine/);
  assert.match(refusal('https://user:secret@auth.example.com/authorize'), /carries a user name or password/);
  assert.match(refusal('https://user@auth.example.com/authorize'), /carries a user name or password/);
  assert.match(refusal('not a url'), /is not a URL/);
});

c('should know this machine by name and address only', () => {
  for (const host of ['localhost', 'app.localhost', '127.0.0.1', '127.255.0.3', '[::1]']) assert.ok(isLoopbackHost(host), host);
  for (const host of ['localhost.example', '128.0.0.1', '[::2]', '10.0.0.1', '127.0.0.1.nip.io']) assert.not.ok(isLoopbackHost(host), host);
});

c.run();

const r = suite('SignInProvider.redirectToAuthorization with a refused URL');

r('should neither print nor open a refused authorization URL, and say why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-url-'));
  try {
    const opened: string[] = [];
    let printed = '';
    const provider = new SignInProvider({
      serverUrl: 'https://mcp.example.com/mcp',
      dir,
      opener: (url) => void opened.push(url),
      output: { write: (t: string) => (printed += t) },
    });
    for (const evil of [
      'javascript:alert(1)',
      'file:///etc/passwd',
      'data:text/html,hi',
      'https://a.example/authorize?x=$(touch /tmp/pwned)',
      'https://a.example/authorize?x=`id`',
      'http://evil.example/authorize',
      `https://a.example/authorize?p=${'a'.repeat(5000)}`,
    ]) {
      let error: unknown;
      try {
        await provider.redirectToAuthorization(new URL(evil));
      } catch (e) {
        error = e;
      }
      assert.instance(error, Error, evil);
      assert.match((error as Error).message, /the authorization URL .* is refused: /, evil);
    }
    assert.equal(opened, [], 'the opener was never called');
    assert.is(printed, '', 'nothing was printed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

r('should print and open an accepted one, on its own line after "Sign in at: "', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-oauth-url-'));
  const opened: string[] = [];
  let printed = '';
  const provider = new SignInProvider({
    serverUrl: 'https://mcp.example.com/mcp',
    dir,
    opener: (url) => void opened.push(url),
    output: { write: (t: string) => (printed += t) },
  });
  try {
    await provider.prepareAuthorization();
    const state = provider.state();
    const url = new URL('https://auth.example.com/authorize?response_type=code');
    url.searchParams.set('state', state);
    url.searchParams.set('redirect_uri', provider.redirectUrl);
    await provider.redirectToAuthorization(url);
    assert.equal(opened, [url.href]);
    assert.ok(printed.split('\n').includes(`Sign in at: ${url.href}`), printed);
  } finally {
    await provider.finishAuthorization();
    rmSync(dir, { recursive: true, force: true });
  }
});

r.run();

const o = suite('openBrowser');

o('should start the platform opener with the URL as one argument, without a shell', () => {
  assert.equal(browserOpener('linux'), { command: 'xdg-open', args: [] });
  assert.equal(browserOpener('darwin'), { command: 'open', args: [] });
  assert.equal(browserOpener('win32'), { command: 'rundll32', args: ['url.dll,FileProtocolHandler'] });
  const calls: Array<{ command: string; args: readonly string[]; options: Record<string, unknown> }> = [];
  const fake = ((command: string, args: readonly string[], options: Record<string, unknown>) => {
    calls.push({ command, args, options });
    return { on: () => undefined, unref: () => undefined };
  }) as unknown as typeof spawn;
  const url = 'https://auth.example.com/authorize?a=1&b=2';
  assert.ok(openBrowser(url, { platform: 'win32', spawn: fake }));
  assert.equal(calls[0]!.command, 'rundll32');
  assert.equal(calls[0]!.args, ['url.dll,FileProtocolHandler', url]);
  assert.is(calls[0]!.options['shell'], false);
  assert.is(calls[0]!.options['detached'], true);
});

o('should shrug off a missing opener', async () => {
  const missing = ((_command: string, args: readonly string[], options: object) =>
    spawn(`no-such-opener-${process.pid}`, args, options)) as unknown as typeof spawn;
  assert.ok(openBrowser('https://auth.example.com/authorize', { spawn: missing }));
  // The ENOENT arrives as an 'error' event, after the call: it must not become an uncaught error.
  await new Promise((r) => setTimeout(r, 100));
});

o.run();
