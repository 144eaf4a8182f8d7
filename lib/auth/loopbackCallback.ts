/**
 * The redirect target of a sign-in: an HTTP listener on 127.0.0.1 (a free port, or the one given)
 * that takes the browser's `GET /callback?code=…&state=…[&iss=…]`, answers it with a short page,
 * and hands the code (with the `iss` it carried, for the RFC 9207 check) to whoever waits for it,
 * only when `state` is the one of the sign-in in progress. It exchanges nothing: the code goes to
 * the SDK's `auth()`. Started for a sign-in, closed after it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdapterError } from '../core/errors.ts';
import type { AuthorizationResponse } from './authorizedFetch.ts';

/** Where to listen. */
export interface LoopbackCallbackOptions {
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default `/callback`. */
  readonly path?: string;
}

/** One sign-in: its state, and the code once the browser brings it. */
interface Attempt {
  readonly state: string;
  readonly code: Promise<AuthorizationResponse>;
  resolve(response: AuthorizationResponse): void;
  reject(error: Error): void;
  settled: boolean;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:36em;margin:4em auto"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
}

/** The listener a sign-in's redirect comes back to. */
export class LoopbackCallback {
  readonly #server: Server;
  readonly #path: string;
  /** The redirect URI to register and send: `http://127.0.0.1:<port>/callback`. */
  readonly url: URL;
  #attempt: Attempt | undefined;
  #closed = false;

  private constructor(server: Server, path: string) {
    this.#server = server;
    this.#path = path;
    this.url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
  }

  /** Listens on 127.0.0.1; rejects when the port cannot be had (the error's `code`, e.g. `EADDRINUSE`, is Node's). */
  static async start(options: LoopbackCallbackOptions = {}): Promise<LoopbackCallback> {
    const path = options.path ?? '/callback';
    let callback: LoopbackCallback | undefined;
    const server = createServer((req, res) => callback!.#answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    callback = new LoopbackCallback(server, path);
    return callback;
  }

  /** The port listened on. */
  get port(): number {
    return Number(this.url.port);
  }

  /** Begins a sign-in: from now on, only a callback carrying `state` is taken (an earlier sign-in is given up). */
  expect(state: string): void {
    this.#attempt?.reject(new AdapterError('cancelled', 'a newer sign-in took over'));
    let resolve!: (response: AuthorizationResponse) => void;
    let reject!: (error: Error) => void;
    const code = new Promise<AuthorizationResponse>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    code.catch(() => {});
    const attempt: Attempt = {
      state,
      code,
      settled: false,
      resolve: (c) => {
        attempt.settled = true;
        resolve(c);
      },
      reject: (e) => {
        attempt.settled = true;
        reject(e);
      },
    };
    this.#attempt = attempt;
  }

  /** The code of the sign-in in progress (and its `iss`), once the browser brings it; rejects when the sign-in failed or `signal` ends the wait. */
  waitForCode(signal?: AbortSignal): Promise<AuthorizationResponse> {
    const attempt = this.#attempt;
    if (!attempt) return Promise.reject(new AdapterError('state', 'no sign-in is in progress'));
    if (!signal) return attempt.code;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<AuthorizationResponse>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      attempt.code.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    const send = (status: number, title: string, text: string) => {
      res.writeHead(status, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
        'referrer-policy': 'no-referrer',
        connection: 'close',
      });
      res.end(page(title, text));
    };
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== this.#path) return send(404, 'Not found', 'This address only takes the sign-in callback of mcp-dual-era.');
    if (req.method !== 'GET') return send(405, 'Method not allowed', 'The sign-in callback is a GET.');
    const attempt = this.#attempt;
    if (!attempt || attempt.settled)
      return send(400, 'No sign-in in progress', 'mcp-dual-era is not waiting for a sign-in. Start it again from your MCP host.');
    const state = url.searchParams.get('state');
    // Without the state of this sign-in, the request is not the answer to it (a forged or stale
    // callback): refused, and the sign-in keeps waiting for its own.
    if (state !== attempt.state)
      return send(
        400,
        'Sign-in refused',
        'This callback does not belong to the sign-in in progress (its state does not match). Nothing was signed in.',
      );
    const error = url.searchParams.get('error');
    if (error !== null) {
      const description = url.searchParams.get('error_description');
      const why = `${error}${description ? `: ${description}` : ''}`;
      attempt.reject(new AdapterError('upstream-error', `the authorization server did not sign you in (${why})`));
      return send(400, 'Sign-in failed', `The authorization server answered: ${why}. You may close this window.`);
    }
    const code = url.searchParams.get('code');
    if (!code) return send(400, 'Sign-in failed', 'The callback carries no authorization code.');
    const iss = url.searchParams.get('iss');
    attempt.resolve(iss === null ? { code } : { code, iss });
    return send(200, 'Signed in', 'mcp-dual-era is signed in. You may close this window.');
  }

  /** Stops listening (a sign-in still waiting is given up). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#attempt && !this.#attempt.settled) this.#attempt.reject(new AdapterError('closed', 'the sign-in callback was closed'));
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}
