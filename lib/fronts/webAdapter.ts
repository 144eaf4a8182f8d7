/**
 * The Web adapter of the HTTP front: a `Request` in, a `Response` out, for any runtime. It carries
 * out what the router decides (httpRouter.ts) with the Web's own objects: a forward through the
 * fleet's Web forwarder, an answer as JSON or as an event stream.
 */
import { ErrorCode } from '../core/errors.ts';
import {
  bodyFailureMessage,
  jsonError,
  jsonResponse,
  lazyEventStream,
  originRefusal,
  principalFromHeaders,
  probeRefusal,
  readBody,
  type HeaderGetter,
} from '../transport/httpEdge.ts';
import { exactJson } from '../transport/exactIds.ts';
import { pathOf } from '../transport/nodeRequest.ts';
import { Cancellation } from '../util/signals.ts';
import {
  challengeFor,
  decide,
  FORBIDDEN_HOP,
  forwardedCall,
  forwardedSpan,
  headDelay,
  messageOf,
  type Decision,
  type FrontCore,
} from './httpRouter.ts';
import { HOP_HEADER, type HopRequest } from './served.ts';

function forbiddenHop(): Response {
  return jsonResponse(FORBIDDEN_HOP, 403);
}

/** `request` as a hop's signature covers it, with `body` as the message it carries. */
function hopRequest(request: Request, sessionId: string | null, body: string): HopRequest {
  const url = new URL(request.url);
  return { method: request.method, path: `${url.pathname}${url.search}`, sessionId, body, header: (name) => request.headers.get(name) };
}

/** Whether `pathname` is one of the health or metrics endpoints this front serves. */
function isProbe(core: FrontCore, pathname: string): boolean {
  const { config } = core;
  return (
    (config.health !== undefined && (pathname === '/healthz' || pathname === '/readyz')) ||
    (config.metrics !== undefined && pathname === '/metrics')
  );
}

function noop(): void {}

/**
 * The Web handler of a front (`fetch`): health, metrics and the protected-resource metadata, a
 * legacy session's GET and DELETE, and POSTed messages as the router decides.
 */
export async function answerWeb(core: FrontCore, request: Request): Promise<Response> {
  const { config, http, forwarding, path } = core;
  const protectedResource = config.protectedResource;
  const header: HeaderGetter = (name) => request.headers.get(name);
  if (request.method === 'GET' && isProbe(core, pathOf(request.url))) {
    // Health and metrics tell who asks what this replica is and does: no page a browser was led to may read them.
    const refused = probeRefusal(header, http);
    if (refused) return jsonError(refused.status, refused.code, refused.message);
  }
  if (config.health && request.method === 'GET') {
    const pathname = pathOf(request.url);
    if (pathname === '/healthz') return jsonResponse({ status: 'ok', ...config.health.info?.() }, 200);
    if (pathname === '/readyz')
      return config.health.ready() ? jsonResponse({ status: 'ready' }, 200) : jsonResponse({ status: 'draining' }, 503);
  }
  if (config.metrics && request.method === 'GET' && pathOf(request.url) === '/metrics') {
    const { body, contentType } = await config.metrics.text();
    return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
  }
  if (protectedResource && request.method === 'GET' && protectedResource.isMetadataPath(pathOf(request.url), path)) {
    const refused = originRefusal(header, http);
    if (refused) return jsonError(refused.status, refused.code, refused.message);
    return protectedResource.metadata(`${new URL(request.url).origin}${path ?? '/'}`);
  }
  if (path !== null) {
    const pathname = pathOf(request.url);
    if (pathname !== path) return jsonError(404, ErrorCode.MethodNotFound, `Not found: ${pathname}`);
  }
  // A hop between replicas is checked by its signature (below), not by Host and Origin.
  const hop = forwarding ? header(HOP_HEADER) : null;
  const refused = hop === null ? originRefusal(header, http) : undefined;
  if (refused) return jsonError(refused.status, refused.code, refused.message);
  const sessionId = header('mcp-session-id');
  if (request.method === 'GET' || request.method === 'DELETE') {
    if (sessionId && forwarding) {
      if (hop !== null) {
        if (!(await forwarding.verifyHop(hop, hopRequest(request, sessionId, '')))) return forbiddenHop();
      } else {
        const owner = forwarding.idOwner(sessionId);
        if (owner !== undefined) return forwarding.forward(owner, request, undefined, { session: sessionId });
      }
    }
    if (sessionId) return config.legacy.handle(request);
    return new Response(null, { status: 405, headers: { allow: 'POST' } });
  }
  if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } });
  const body = await readBody(request, http);
  if (!body.ok) return jsonResponse(bodyFailureMessage(body.error), body.error.status);
  return carryOut(core, decide(core, body.value, header, sessionId, hop), request, header, sessionId);
}

/** Carries a decision out on a Web `Request`. */
async function carryOut(core: FrontCore, d: Decision, request: Request, header: HeaderGetter, sessionId: string | null): Promise<Response> {
  const { config, http, serve, forwarding } = core;
  switch (d.kind) {
    case 'forward-call': {
      const span = forwardedSpan(d.call, header, d.owner);
      return forwarding!.forward(d.owner, request, exactJson(d.call), forwardedCall(d)).finally(() => span.end());
    }
    case 'forward-session':
      return forwarding!.forward(d.owner, request, exactJson(d.parsed), { session: d.session });
    case 'verify-hop': {
      // A hop is served here only when a replica of the fleet signed it.
      const r = d.then;
      const signed = hopRequest(request, r.kind === 'serve' ? null : sessionId, exactJson(messageOf(r)));
      return (await forwarding!.verifyHop(d.hop, signed)) ? carryOut(core, r, request, header, sessionId) : forbiddenHop();
    }
    case 'hand-over': {
      const r = d.then;
      const peer = await forwarding!.readyPeer();
      if (peer === undefined) return carryOut(core, r, request, header, sessionId);
      return forwarding!.forward(peer, request, exactJson(messageOf(r)), {
        handedOver: r.kind === 'serve' ? r.rpc.id : null,
      });
    }
    case 'reply':
      return d.body === undefined ? new Response(null, { status: d.status }) : jsonResponse(d.body, d.status);
    case 'legacy-handle':
      return config.legacy.handle(request, d.parsed);
    case 'legacy-open':
      return config.legacy.open(request, d.parsed);
    case 'serve':
      break;
  }
  const principal = http.principal ? http.principal(request) : principalFromHeaders(header);
  const { rpc, envelope } = d;
  const challenge = challengeFor(core, () => request.url);
  if (!d.streams) {
    const answer = await serve!(rpc, { principal, signal: request.signal, envelope, notify: noop, headers: header, challenge });
    return answer
      ? jsonResponse(answer.message, answer.status, answer.headers ? { ...answer.headers } : {})
      : new Response(null, { status: 204 });
  }
  const gone = new Cancellation();
  request.signal.addEventListener('abort', () => gone.abort(), { once: true });
  return lazyEventStream(
    (writer) => serve!(rpc, { principal, signal: gone, envelope, notify: (n) => writer.send(n), headers: header, challenge }),
    { onCancel: () => gone.abort(), keepAliveMs: core.keepAliveMs, headDelayMs: headDelay(core, rpc) },
  );
}
