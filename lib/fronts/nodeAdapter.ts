/**
 * The Node adapter of the HTTP front: POSTed JSON answered on Node's own request and response
 * objects, without building a Web `Request` and `Response` per call (which costs more than
 * everything else the wrap does for a call), carrying out what the router decides (httpRouter.ts);
 * whatever else arrives (GET, DELETE, a legacy session's requests, new work handed over while the
 * replica drains) goes through the Web adapter.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '../core/errors.ts';
import { errorResponse } from '../core/jsonrpc.ts';
import {
  bodyFailureMessage,
  bodyHeaderFailure,
  maxBodyBytes,
  originRefusal,
  parseBody,
  principalFromHeaders,
  tooLarge,
  type HeaderGetter,
} from '../transport/httpEdge.ts';
import { nodeSse, viaFetch, writeEmpty, writeJson, writeWebResponse } from '../transport/nodeHttp.ts';
import { asWebRequest, consumedBody, lowerCase, pathOf } from '../transport/nodeRequest.ts';
import { Cancellation } from '../util/signals.ts';
import {
  challengeFor,
  decide,
  draining,
  errorBody,
  FORBIDDEN_HOP,
  forwardedCall,
  forwardedSpan,
  headDelay,
  type FrontCore,
  type Route,
} from './httpRouter.ts';
import { HOP_HEADER, type HopRequest } from './served.ts';

const BAD_HOST = 'Invalid Request: the Host header names no valid host';

function noop(): void {}

/** What the Node adapter's answering needs: the front, and the way to its Web adapter. */
interface NodeSide {
  readonly core: FrontCore;
  /** Serves a Node request through the Web adapter; `body`, when given, is the body already read. */
  readonly throughWeb: (req: IncomingMessage, res: ServerResponse, body?: string) => void;
}

/** The Node adapter of `core`'s front, handing what it does not answer itself to `fetch`. */
export function nodeAdapter(
  core: FrontCore,
  fetch: (request: Request) => Promise<Response>,
): { node(req: IncomingMessage, res: ServerResponse): void; endStreams(): void } {
  const { http, forwarding, path } = core;
  let throughFetch: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  /** Serves a Node request through the Web handler; `body`, when given, is the body already read (the Web listener reads it from `rawBody`). */
  const throughWeb = (req: IncomingMessage, res: ServerResponse, body?: string): void => {
    if (body !== undefined) (req as IncomingMessage & { rawBody?: Buffer }).rawBody = Buffer.from(body);
    (throughFetch ??= viaFetch(fetch))(req, res);
  };
  const maxBytes = maxBodyBytes(http);

  const side: NodeSide = { core, throughWeb };

  /** GET streams open on Node's objects, ended by `endStreams`. */
  const streams = new Set<ServerResponse>();
  let streamsEnded = false;
  const node = (req: IncomingMessage, res: ServerResponse): void => {
    const headers = req.headers;
    if (req.method === 'GET' && headers['mcp-session-id'] !== undefined) {
      // After `endStreams`, a stream opened again on a connection kept from before is cut before
      // its answer begins: a balancer sends a GET so cut to another server.
      if (streamsEnded) return void req.socket.destroy();
      streams.add(res);
      res.once('close', () => streams.delete(res));
    }
    // A replica that drains keeps no connection open: the balancer's next request connects anew
    // and, once this replica has stopped listening, is refused before it is sent (and goes elsewhere).
    if (forwarding && draining(core)) res.shouldKeepAlive = false;
    const consumed = consumedBody(req);
    if (req.method !== 'POST' || headers['mcp-session-id'] !== undefined) {
      return throughWeb(req, res, consumed);
    }
    const header: HeaderGetter = (name) => {
      const value = headers[lowerCase(name)];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    };
    if (path !== null) {
      const pathname = pathOf(req.url ?? '/');
      if (pathname !== path) return writeJson(res, 404, errorBody(ErrorCode.MethodNotFound, `Not found: ${pathname}`));
    }
    // A hop between replicas is checked by its signature (once read), not by Host and Origin.
    const hopHeader = forwarding ? headers[HOP_HEADER] : undefined;
    const hop = Array.isArray(hopHeader) ? hopHeader.join(', ') : hopHeader;
    const refused = hop === undefined ? originRefusal(header, http) : undefined;
    if (refused) return writeJson(res, refused.status, errorBody(refused.code, refused.message));
    const early = bodyHeaderFailure(header, http);
    if (early) {
      res.setHeader('connection', 'close');
      return writeJson(res, early.status, bodyFailureMessage(early));
    }
    if (consumed !== undefined) {
      if (Buffer.byteLength(consumed) <= maxBytes) return answerNode(side, req, res, header, consumed, hop);
      const failure = tooLarge(maxBytes);
      return writeJson(res, failure.status, bodyFailureMessage(failure));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      over = true;
      chunks.length = 0;
      const failure = tooLarge(maxBytes);
      res.setHeader('connection', 'close');
      writeJson(res, failure.status, bodyFailureMessage(failure));
    });
    req.on('end', () => {
      if (over) return;
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      // A byte order mark is skipped, as the Web handler's UTF-8 decoding does.
      answerNode(side, req, res, header, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, hop);
    });
    req.on('error', noop);
  };

  const endStreams = (): void => {
    streamsEnded = true;
    for (const res of streams) res.destroy();
    streams.clear();
  };
  return { node, endStreams };
}

function answerNode(
  side: NodeSide,
  req: IncomingMessage,
  res: ServerResponse,
  header: HeaderGetter,
  text: string,
  hop: string | undefined,
): void {
  const { core } = side;
  const { config, http, forwarding } = core;
  const body = parseBody(text, http);
  if (!body.ok) return writeJson(res, body.error.status, bodyFailureMessage(body.error));
  const d = decide(core, body.value, header, null, hop ?? null);
  switch (d.kind) {
    case 'forward-call': {
      // A retry another replica owns goes there as it came.
      const span = forwardedSpan(d.call, header, d.owner);
      res.once('close', () => span.end());
      return forwarding!.forwardCall(d.owner, req, res, text, forwardedCall(d));
    }
    case 'forward-session':
      // (A legacy session's requests come to the Node adapter only through the Web one.)
      return side.throughWeb(req, res, text);
    case 'verify-hop': {
      // A hop of the fleet: a call (a retry its sender found this replica owns) is checked and
      // served here, on Node's objects, from the body as read; the rest through the Web handler.
      const r = d.then;
      if (r.kind !== 'serve') return side.throughWeb(req, res, text);
      const signed: HopRequest = { method: 'POST', path: req.url ?? '/', sessionId: null, body: text, header };
      void forwarding!.verifyHop(d.hop, signed).then(
        (ok) => (ok ? serveRpc(core, req, res, header, r) : writeJson(res, 403, FORBIDDEN_HOP)),
        () => writeJson(res, 500, errorResponse(r.rpc.id, { code: ErrorCode.InternalError, message: 'Internal error' })),
      );
      return;
    }
    case 'hand-over':
      // Handed to a ready replica through the Web handler, which streams its answer and carries a close.
      return side.throughWeb(req, res, text);
    case 'reply':
      return d.body === undefined ? writeEmpty(res, d.status) : writeJson(res, d.status, d.body);
    case 'legacy-handle':
    case 'legacy-open': {
      const request = asWebRequest(req, text, res);
      if (!request) return writeJson(res, 400, errorBody(ErrorCode.InvalidRequest, BAD_HOST));
      const answer = d.kind === 'legacy-open' ? config.legacy.open(request, d.parsed) : config.legacy.handle(request, d.parsed);
      void answer.then((response) => writeWebResponse(res, response)).catch(() => res.destroy());
      return;
    }
    case 'serve':
      return serveRpc(core, req, res, header, d);
  }
}

/** Serves a modern request on Node's objects. */
function serveRpc(
  core: FrontCore,
  req: IncomingMessage,
  res: ServerResponse,
  header: HeaderGetter,
  r: Extract<Route, { kind: 'serve' }>,
): void {
  const { http, serve } = core;
  const { rpc, envelope } = r;
  let principal: string;
  if (http.principal) {
    const request = asWebRequest(req);
    if (!request) return writeJson(res, 400, errorBody(ErrorCode.InvalidRequest, BAD_HOST));
    principal = http.principal(request);
  } else principal = principalFromHeaders(header);
  const gone = new Cancellation();
  const challenge = challengeFor(core, () => `http://${header('host') ?? 'localhost'}${req.url ?? '/'}`);
  if (!r.streams) {
    const onClose = () => {
      if (!res.writableEnded) gone.abort();
    };
    res.on('close', onClose);
    serve!(rpc, { principal, signal: gone, envelope, notify: noop, headers: header, challenge }).then(
      (answer) => {
        res.removeListener('close', onClose);
        if (res.destroyed) return;
        if (answer) writeJson(res, answer.status, answer.message, answer.headers);
        else writeEmpty(res, 204);
      },
      () => {
        res.removeListener('close', onClose);
        if (!res.destroyed) writeJson(res, 500, errorResponse(rpc.id, { code: ErrorCode.InternalError, message: 'Internal error' }));
      },
    );
    return;
  }
  const writer = nodeSse(res, { onCancel: () => gone.abort(), keepAliveMs: core.keepAliveMs, headDelayMs: headDelay(core, rpc) });
  serve!(rpc, { principal, signal: gone, envelope, notify: (n) => writer.send(n), headers: header, challenge }).then(
    (answer) => {
      // An answer before anything was streamed, with a status of its own (a refusal), goes out as JSON.
      if (answer && answer.status !== 200 && !writer.started && !writer.closed) {
        writer.release();
        return writeJson(res, answer.status, answer.message, answer.headers);
      }
      if (answer) writer.send(answer.message);
      writer.close();
    },
    () => writer.close(),
  );
}
