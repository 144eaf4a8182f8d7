/**
 * Legacy clients on an HTTP endpoint: an `initialize` without modern `_meta` opens a legacy
 * session, served by the SDK's own Streamable HTTP server transport (sessions, the GET stream,
 * server→client requests on the right stream) and relayed, message for message, to a pipe the
 * wrap opens (an upstream connection, or a translating bridge). Nothing is translated here. Each
 * session belongs to the principal that opened it and is bounded and closed when idle
 * (`LegacySessionTable`); in front of a protected upstream, the upstream judges each request's
 * credentials (`SessionCredentials`).
 */
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode } from '../core/errors.ts';
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import { isRecord } from '../core/primitives.ts';
import type { MessageExtra, Transport } from '../transport/transport.ts';
import { jsonError, refusalResponse } from '../transport/httpEdge.ts';
import { holdsExactIds, withExactIds } from '../transport/exactIds.ts';
import { describeFailure } from '../util/upstreamFailure.ts';
import type { HeaderSource } from '../observe/traceContext.ts';
import { LegacySessionTable, type LegacySessionLimits, type SessionTicket } from './legacySessionTable.ts';
import type { Openings } from '../session/gate.ts';
import type { SessionSource } from './served.ts';
import { SessionCredentials } from './legacyCredentials.ts';
import { DEFAULTS } from '../util/defaults.ts';

/**
 * The client request an upstream message belongs to, when the upstream pipe does not say (stdio
 * never does): progress by its token; a log or a server request when exactly one request is in
 * flight. Without it these would go to the optional GET stream, or nowhere.
 */
function relatedCall(message: JsonRpcMessage, inFlight: ReadonlyMap<RequestId, unknown>): RequestId | undefined {
  if (!('method' in message)) return undefined;
  if (message.method === 'notifications/progress') {
    const token = message.params?.['progressToken'];
    if (token === undefined) return undefined;
    for (const [id, t] of inFlight) if (t === token) return id;
    return undefined;
  }
  if (('id' in message || message.method === 'notifications/message') && inFlight.size === 1) return inFlight.keys().next().value;
  return undefined;
}

interface LegacySession {
  readonly front: WebStandardStreamableHTTPServerTransport;
  readonly upstream: Transport;
  /** With callers' credentials passed upstream: what goes with the session's upstream requests. */
  readonly credentials?: SessionCredentials;
}

/** The SDK's server transport, loaded with the first legacy session (a stdio front never needs it). */
let sdkTransport: Promise<typeof WebStandardStreamableHTTPServerTransport> | undefined;
const loadTransport = () =>
  (sdkTransport ??= import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').then(
    (m) => m.WebStandardStreamableHTTPServerTransport,
  ));

/** Options of {@link LegacyHttpSessions}: the bounds, and who is asking. */
export interface LegacyHttpSessionsOptions extends LegacySessionLimits {
  /** The principal of a request: a session answers only the one that opened it. */
  readonly principal: (request: Request) => string;
  /** How long an `initialize` waits its turn at the gate before it is refused (default 10 s). */
  readonly waitMs?: number;
  /** Makes a new session's id (default a random UUID); in a fleet, an id that names this replica. */
  readonly sessionId?: () => string;
  /**
   * In front of a protected upstream (the source passes callers' credentials): the upstream's
   * challenge as the client of `requestUrl` is shown it.
   */
  readonly challenge?: (upstream: string, requestUrl: string) => string;
}

/** How long a new session's upstream may take to first speak before its turn at the gate is given up anyway. */
const BOOT_WAIT_MS = 30_000;

/** The legacy sessions of one endpoint. */
export class LegacyHttpSessions {
  readonly #source: SessionSource;
  readonly #table: LegacySessionTable<LegacySession>;
  readonly #principal: (request: Request) => string;
  readonly #openings: Openings | undefined;
  readonly #waitMs: number;
  readonly #sessionId: () => string;
  readonly #challenge: ((upstream: string, requestUrl: string) => string) | undefined;
  #closed = false;
  #refusing = false;

  constructor(source: SessionSource, options: LegacyHttpSessionsOptions) {
    this.#source = source;
    this.#principal = options.principal;
    this.#openings = source.openings;
    this.#waitMs = options.waitMs ?? DEFAULTS.sessionWaitMs;
    this.#sessionId = options.sessionId ?? (() => crypto.randomUUID());
    this.#challenge = options.challenge;
    this.#table = new LegacySessionTable<LegacySession>(options, (s) => void closeSession(s));
  }

  get size(): number {
    return this.#table.size;
  }

  /** Whether a request is being served on a session after its `initialize` (a client already served, at work). */
  get working(): boolean {
    return this.#table.working;
  }

  /** Requests being served on the sessions now. */
  get active(): number {
    return this.#table.active;
  }

  /** Serves a request that belongs to an existing legacy session (by `Mcp-Session-Id`) of its own principal. */
  handle(request: Request, parsedBody?: unknown): Promise<Response> {
    return exactAnswers(this.#handle(request, parsedBody), parsedBody);
  }

  #handle(request: Request, parsedBody?: unknown): Promise<Response> {
    // Refusing new work (a replica that drains), a session takes no new request: its client is
    // told the session is gone and initializes again (elsewhere); what is under way (answers to
    // the server's requests, the calls they belong to, the GET stream) goes on to its end.
    if (this.#refusing && holdsRequest(parsedBody))
      return Promise.resolve(jsonError(404, ErrorCode.SessionNotFound, 'Session not found: this replica is draining; initialize again'));
    const principal = this.#principal(request);
    if (!this.#source.passesAuthorization)
      return this.#table.serve(request, principal, (session) =>
        session.front.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody }),
      );
    // The upstream judges each request's credentials: a session follows its client's refreshed
    // token once the upstream took it.
    return this.#table.serve(
      request,
      principal,
      (session) =>
        session.credentials!.relay(
          request,
          parsedBody,
          () => session.front.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody }),
          () => this.#table.rebind(request.headers.get('mcp-session-id')!, principal),
        ),
      (session) => session.credentials!.passesTo(request),
    );
  }

  /**
   * Refuses new sessions from now on (503), and new requests on the open ones (404, so their
   * clients initialize again), while what is under way is served to its end.
   */
  refuseNew(): void {
    this.#refusing = true;
  }

  /** Opens a legacy session for an `initialize` and serves it. */
  open(request: Request, parsedBody: unknown): Promise<Response> {
    return exactAnswers(this.#openInTurn(request, parsedBody), parsedBody);
  }

  async #openInTurn(request: Request, parsedBody: unknown): Promise<Response> {
    if (this.#closed) return jsonError(503, ErrorCode.InternalError, 'The server is shutting down');
    if (this.#refusing) return jsonError(503, ErrorCode.InternalError, 'This replica is draining: initialize again');
    // In turn with the pool's openings (until its initialize is answered, a session is booting a
    // server, unless it takes one started ahead: while strangers wait, only a known caller may);
    // its place among the sessions is taken once through.
    const principal = this.#principal(request);
    const openings = this.#openings;
    const through = openings ? await openings.turn(principal, this.#waitMs, request.signal).catch(() => undefined) : noop;
    if (!through) return refusalResponse(openings!.refusal());
    // The turn lasts until the server first speaks (its answer to initialize): the answer may come
    // on a stream after the response has begun.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const booted = () => {
      clearTimeout(timer);
      through();
    };
    timer = setTimeout(booted, BOOT_WAIT_MS);
    try {
      const admitted = this.#table.admit(principal);
      if (!admitted.ok) {
        booted();
        return refusalResponse(admitted.refusal);
      }
      return await this.#open(request, parsedBody, principal, admitted.ticket, booted);
    } catch (e) {
      booted();
      throw e;
    }
  }

  async #open(
    request: Request,
    parsedBody: unknown,
    principal: string,
    ticket: SessionTicket<LegacySession>,
    booted: () => void,
  ): Promise<Response> {
    let upstream: Transport;
    let ServerTransport: typeof WebStandardStreamableHTTPServerTransport;
    const credentials = this.#source.passesAuthorization
      ? new SessionCredentials(request.headers.get('authorization') ?? undefined, this.#challenge)
      : undefined;
    try {
      ServerTransport = await loadTransport();
      upstream = await this.#source.connect(credentials ? { authorization: () => credentials.authorization, relayed: true } : undefined);
      await upstream.start();
    } catch (e) {
      booted();
      ticket.cancel();
      const reason = e instanceof Error ? e.message : String(e);
      this.#source.failed?.(reason);
      return jsonError(502, ErrorCode.InternalError, `The upstream server is unavailable: ${reason}`);
    }
    let sessionId: string | undefined;
    const front = new ServerTransport({
      sessionIdGenerator: this.#sessionId,
      onsessioninitialized: (sid) => {
        sessionId = sid;
        this.#openings?.met(principal);
        ticket.commit(sid, credentials ? { front, upstream, credentials } : { front, upstream });
      },
      onsessionclosed: (sid) => {
        this.#table.delete(sid);
        void upstream.close();
      },
    });
    const inFlight = new Map<RequestId, unknown>();
    // A client that leaves before its initialize is answered opened nothing: its session (and the
    // server process it may hold) is closed, not kept until it idles out.
    const initializeId =
      isRecord(parsedBody) && parsedBody['method'] === 'initialize' ? (parsedBody['id'] as RequestId | undefined) : undefined;
    const abandoned = (): void => {
      if (initializeId === undefined || !inFlight.has(initializeId)) return;
      if (sessionId) this.#table.delete(sessionId);
      void front.close().catch(() => {});
      void upstream.close().catch(() => {});
    };
    const observed = this.#source.observe?.('tcp');
    front.onmessage = (raw, extra) => {
      const message = raw as JsonRpcMessage;
      if ('method' in message && 'id' in message) {
        const meta = message.params?.['_meta'];
        inFlight.set(message.id, isRecord(meta) ? meta['progressToken'] : undefined);
      } else if ('method' in message && message.method === 'notifications/cancelled')
        inFlight.delete(message.params?.['requestId'] as RequestId);
      upstream.send(observed ? observed.sent(message, headerSource(extra)) : message).catch(() => {});
    };
    upstream.onmessage = (message, extra) => {
      booted();
      observed?.answered(message);
      const related = (extra as MessageExtra | undefined)?.relatedRequestId ?? relatedCall(message, inFlight);
      const answered = !('method' in message) && message.id !== undefined && message.id !== null ? message.id : undefined;
      if (answered !== undefined) inFlight.delete(answered);
      if (answered !== undefined && answered === initializeId) request.signal.removeEventListener('abort', abandoned);
      credentials?.heard(answered ?? related, message);
      front.send(message as never, related === undefined ? undefined : { relatedRequestId: related }).catch(() => {});
    };
    upstream.onclose = () => {
      booted();
      observed?.closed((upstream.failure && describeFailure(upstream.failure)) ?? 'the upstream closed the session');
      credentials?.closed();
      if (sessionId) this.#table.delete(sessionId);
      void front.close();
    };
    front.onclose = () => {
      if (sessionId) this.#table.delete(sessionId);
      void upstream.close();
    };
    await front.start();
    request.signal.addEventListener('abort', abandoned, { once: true });
    const verdict = credentials?.verdict(parsedBody, request.signal);
    let response = await front.handleRequest(request, { parsedBody });
    if (request.signal.aborted) abandoned();
    const refused = credentials && verdict ? await credentials.refusal(await verdict, request, response) : undefined;
    if (refused) {
      // Not signed in: the client signs in and initializes again; nothing of this session is kept.
      if (sessionId) this.#table.delete(sessionId);
      sessionId = undefined;
      void front.close().catch(() => {});
      response = refused;
    }
    if (!sessionId) {
      booted();
      ticket.cancel();
      void upstream.close();
    }
    return response;
  }

  /** Ends every legacy session and its upstream connection. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#table.drain().map(closeSession));
  }
}

async function closeSession(s: LegacySession): Promise<void> {
  await s.front.close().catch(() => {});
  await s.upstream.close().catch(() => {});
}

function noop(): void {}

/**
 * The SDK's answer to a POSTed body, with the ids the client wrote that a JavaScript number would
 * change written back as it wrote them (they went through the session held as strings).
 */
function exactAnswers(response: Promise<Response>, body: unknown): Promise<Response> {
  return body !== undefined && holdsExactIds(body) ? response.then(withExactIds) : response;
}

/** Whether a POSTed body holds a request (not only answers and notifications). */
function holdsRequest(body: unknown): boolean {
  const one = (m: unknown) => isRecord(m) && typeof m['method'] === 'string' && 'id' in m;
  return Array.isArray(body) ? body.some(one) : one(body);
}

/** The HTTP headers of the POST a client's message came in, as the SDK's transport hands them over with it. */
function headerSource(extra: unknown): HeaderSource | undefined {
  const headers = (extra as { requestInfo?: { headers?: Record<string, string | string[] | undefined> } } | undefined)?.requestInfo
    ?.headers;
  if (!headers) return undefined;
  return (name) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
}
