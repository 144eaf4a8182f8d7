/**
 * Whether an authorization URL may be shown to the user and handed to the browser. The URL comes
 * from the authorization server's metadata, which the MCP server points at: an attacker's server
 * can name anything. Opening such a URL through a shell is how CVE-2025-6514 (mcp-remote) ran
 * commands; we never use a shell, and this check refuses what no authorization URL needs anyway.
 */
import type { Outcome } from '../core/outcome.ts';

/** The longest authorization URL accepted, in characters (PKCE, state, scope and resource fit well within it). */
export const MAX_AUTHORIZATION_URL_LENGTH = 4096;

/**
 * Characters an authorization URL never needs raw (the URL serializer and `URLSearchParams`
 * percent-encode them where they are data): whitespace and control characters, quotes, backtick,
 * `$` (so no `$(…)` or `${…}`), `\`, `<`, `>`, `|`, `;`, `{`, `}` and `^`. `&`, `=`, `?`, `#`, `%`,
 * `+` and the rest of a query string are allowed.
 */
const UNSAFE = /[\s\u0000-\u001f\u007f-\u009f`$"'\\<>|;{}^]/u;

/** Why a scheme is refused, for the ones seen in attacks. */
const SCHEME_REASON: Readonly<Record<string, string>> = {
  'javascript:': 'it runs script in the browser',
  'vbscript:': 'it runs script',
  'file:': 'it opens a file on this machine',
  'data:': 'it carries its own content instead of naming a server',
  'blob:': 'it names content held by a page, not a server',
};

/** Whether `hostname` (as `URL` gives it) is this machine: `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Shows the start of a refused URL without letting it run on (or inject into) the terminal. */
function preview(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return JSON.stringify(clean.length > 80 ? `${clean.slice(0, 80)}…` : clean);
}

/**
 * Checks an authorization URL before it is printed or opened: it must parse, be `https:` (or
 * `http:` to this machine), carry no user name or password, be at most
 * {@link MAX_AUTHORIZATION_URL_LENGTH} characters, and contain none of the characters listed at
 * `UNSAFE` (in the text given and in its serialized form). Returns the URL, or why it was refused.
 */
export function checkAuthorizationUrl(url: string | URL): Outcome<URL, string> {
  const raw = typeof url === 'string' ? url : url.href;
  const refuse = (why: string) => ({ ok: false as const, error: `the authorization URL ${preview(raw)} is refused: ${why}` });
  if (raw.length > MAX_AUTHORIZATION_URL_LENGTH)
    return refuse(`it is ${raw.length} characters long, over the ${MAX_AUTHORIZATION_URL_LENGTH} accepted`);
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    return refuse('it is not a URL');
  }
  const scheme = parsed.protocol.toLowerCase();
  if (scheme !== 'https:' && scheme !== 'http:') {
    const reason = SCHEME_REASON[scheme];
    return refuse(`only https: URLs (or http: to this machine) are opened, and ${scheme} is not one${reason ? `: ${reason}` : ''}`);
  }
  if (scheme === 'http:' && !isLoopbackHost(parsed.hostname))
    return refuse(`http: is accepted only to this machine (localhost, 127.0.0.0/8, [::1]), not ${parsed.hostname}: use https`);
  if (parsed.hostname === '') return refuse('it names no host');
  if (parsed.username !== '' || parsed.password !== '') return refuse('it carries a user name or password');
  const href = parsed.href;
  if (href.length > MAX_AUTHORIZATION_URL_LENGTH)
    return refuse(`it is ${href.length} characters long, over the ${MAX_AUTHORIZATION_URL_LENGTH} accepted`);
  const unsafe = UNSAFE.exec(raw) ?? UNSAFE.exec(href);
  if (unsafe)
    return refuse(
      `it contains ${JSON.stringify(unsafe[0])}, a character no authorization URL needs unencoded (shell metacharacters, quotes, spaces and control characters are refused)`,
    );
  return { ok: true, value: parsed };
}
