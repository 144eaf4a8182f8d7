/**
 * Reading a Node HTTP request as a front needs it: a body a framework already read, header names
 * looked up in lower case, the path of a request target without building a URL, and the Web
 * `Request` for the requests a front hands to its Web handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { webRequest } from './nodeHttp.ts';

/**
 * A body a framework already read (Express's `express.json()` leaves it on `req.body` with the
 * stream spent), as text, so the request is served as if it had been read here.
 */
export function consumedBody(req: IncomingMessage): string | undefined {
  const body = (req as IncomingMessage & { body?: unknown }).body;
  if (body === undefined || !req.readableEnded) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return JSON.stringify(body);
}

/** Header names looked up, lower-cased once (Node's `req.headers` keys are lower case). */
const lowered = new Map<string, string>();
export function lowerCase(name: string): string {
  let lower = lowered.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowered.size < 256) lowered.set(name, lower);
  }
  return lower;
}

/** The path of a request target or absolute URL, without building a URL object. */
export function pathOf(url: string): string {
  const scheme = url.indexOf('//');
  const start = url.startsWith('/') ? 0 : url.indexOf('/', scheme === -1 ? 0 : scheme + 2);
  if (start === -1) return '/';
  let end = url.length;
  for (const c of ['?', '#']) {
    const i = url.indexOf(c, start);
    if (i !== -1 && i < end) end = i;
  }
  return url.slice(start, end);
}

/**
 * The Web `Request` for a Node request; `undefined` when its Host header makes no URL (`localhost:x`
 * passes the loopback check). With `res`, its signal aborts when the client leaves before the
 * answer is written whole, as the Web listener's requests do.
 */
export function asWebRequest(req: IncomingMessage, body?: string, res?: ServerResponse): Request | undefined {
  let signal: AbortSignal | undefined;
  if (res) {
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    signal = controller.signal;
  }
  try {
    return webRequest(req, body, signal);
  } catch {
    return undefined;
  }
}
