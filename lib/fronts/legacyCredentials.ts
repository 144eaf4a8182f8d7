/**
 * A legacy session's credentials, in front of a protected upstream (the source passes callers'
 * credentials on): the upstream judges each request's. The session sends upstream the
 * `Authorization` of its client's latest request, hears the upstream's first word on each request
 * just relayed, and answers a refusal of the credentials as the client's own 401 or 403; it
 * follows its client's refreshed token once the upstream took it. Not here: the session itself,
 * or the relaying of its messages (legacyHttpSessions.ts).
 */
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import { jsonResponse } from '../transport/httpEdge.ts';
import { failureOf } from '../util/upstreamFailure.ts';
import { sameSubject } from '../auth/tokenSubject.ts';
import { authRefusalOf } from './served.ts';

/**
 * A relayed session's credentials: the `Authorization` of its client's latest request (sent with
 * each upstream request), and the first upstream word on each request just relayed, by id: a
 * refusal for the credentials becomes the client's own 401 or 403.
 */
export class SessionCredentials {
  /** The `Authorization` of the client's latest request. */
  authorization: string | undefined;
  readonly #verdicts = new Map<RequestId, (message: JsonRpcMessage | undefined) => void>();
  /** The upstream refused the session's own credentials (they expired): the next it takes are the session's. */
  #refused = false;
  readonly #challenge: ((upstream: string, requestUrl: string) => string) | undefined;

  /**
   * The credentials of a session opened with `authorization`; `challenge` is the upstream's
   * challenge as the client of a request is shown it (the upstream's own by default).
   */
  constructor(authorization: string | undefined, challenge: ((upstream: string, requestUrl: string) => string) | undefined) {
    this.authorization = authorization;
    this.#challenge = challenge;
  }

  /**
   * Whether a request with other credentials than the session's may use it: credentials naming the
   * same subject of the same issuer (a refreshed JWT), any method; or, once the upstream refused the
   * session's own credentials, a POST whose credentials the upstream then takes (a refreshed opaque
   * token). Otherwise the session is another caller's, and does not exist for this one.
   */
  passesTo(request: Request): boolean {
    const next = request.headers.get('authorization') ?? undefined;
    return sameSubject(this.authorization, next) || (request.method === 'POST' && this.#refused);
  }

  /**
   * Relays `request` (served by `serve`), answered as the upstream judged its credentials: `taken`
   * when the upstream took them.
   */
  async relay(request: Request, parsedBody: unknown, serve: () => Promise<Response>, taken: () => void): Promise<Response> {
    const before = this.authorization;
    this.authorization = request.headers.get('authorization') ?? undefined;
    const verdict = request.method === 'POST' ? this.verdict(parsedBody, request.signal) : undefined;
    const response = await serve();
    const refused = verdict ? await this.refusal(await verdict, request, response) : undefined;
    if (refused) {
      const sent = request.headers.get('authorization') ?? undefined;
      if (sent === before) this.#refused = true;
      // Credentials the upstream did not take are not kept for the session's other requests.
      if (this.authorization === sent) this.authorization = before;
      return refused;
    }
    if (verdict) {
      taken();
      this.#refused = false;
    }
    return response;
  }

  /**
   * The upstream's first word on the requests of a POSTed body (`undefined` at once when it holds
   * none): an answer, or a message of the server's during one of them.
   */
  verdict(body: unknown, signal: AbortSignal): Promise<JsonRpcMessage | undefined> | undefined {
    const ids = requestIds(body);
    if (ids.length === 0) return undefined;
    return new Promise((resolve) => {
      let done = false;
      const settle = (message: JsonRpcMessage | undefined) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', gone);
        for (const id of ids) this.#verdicts.delete(id);
        resolve(message);
      };
      // A client that left waits for nothing.
      const gone = () => settle(undefined);
      signal.addEventListener('abort', gone, { once: true });
      for (const id of ids) this.#verdicts.set(id, settle);
    });
  }

  /** Hands the upstream's `message`, on the request `said`, to a verdict waiting for it. */
  heard(said: RequestId | undefined, message: JsonRpcMessage): void {
    if (this.#verdicts.size > 0 && said !== undefined) this.#verdicts.get(said)?.(message);
  }

  /** The upstream closed: every verdict still waited for is that it said nothing. */
  closed(): void {
    for (const settle of [...this.#verdicts.values()]) settle(undefined);
  }

  /** The client's own 401 or 403 when `first` is the upstream refusing the credentials; `undefined` otherwise. */
  async refusal(first: JsonRpcMessage | undefined, request: Request, response: Response): Promise<Response | undefined> {
    if (!first || !('error' in first) || !first.error) return undefined;
    const refusal = authRefusalOf(failureOf(first.error.data));
    if (!refusal) return undefined;
    await response.body?.cancel().catch(() => {});
    const challenge = this.#challenge ? this.#challenge(refusal.challenge, request.url) : refusal.challenge;
    return jsonResponse({ jsonrpc: '2.0', id: first.id ?? null, error: refusal.error }, refusal.status, { 'www-authenticate': challenge });
  }
}

/** The ids of the requests in a POSTed body. */
function requestIds(body: unknown): RequestId[] {
  const items = Array.isArray(body) ? body : [body];
  return items.flatMap((m) =>
    isRecord(m) && typeof m['method'] === 'string' && (typeof m['id'] === 'string' || typeof m['id'] === 'number')
      ? [m['id'] as RequestId]
      : [],
  );
}
