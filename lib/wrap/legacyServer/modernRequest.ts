/**
 * A modern request on its way to a legacy upstream session: its envelope (`envelopeOf`), what the
 * dispatch has read of it (`PendingRequest`), and its answers: an upstream outcome translated
 * (`finisher`), a refusal by a limit (`refusedAnswer`), no upstream session to be had
 * (`unavailable`). The dispatch itself is `modernDispatch.ts`.
 */
import { resultResponse, type JsonRpcRequest } from '../../core/jsonrpc.ts';
import { AdapterError } from '../../core/errors.ts';
import { failureOf, upstreamUnavailable } from '../../util/upstreamFailure.ts';
import { limitAnswer, refusalOf, type LimitRefusal } from '../../util/limits.ts';
import { isRecord, type Implementation } from '../../core/primitives.ts';
import { declaresTasksExtension } from '../../core/modern/capabilities.ts';
import { readEnvelope, type Envelope, type EnvelopeError, type LegacyRequest } from '../../core/translate/envelope.ts';
import { ok, type Outcome } from '../../core/outcome.ts';
import { errorToModern } from '../../core/translate/errors.ts';
import { resultToModern } from '../../core/translate/results.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import type { RpcOutcome } from '../../session/callHooks.ts';
import { authRefusalAnswer, errorAnswer, type Answer, type ModernContext } from '../../fronts/served.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';

/** The server's `serverInfo` as the wrap gives it: its own if set, else the session's. */
export function serverInfoOf(session: UpstreamSession, options: ModernDispatchOptions): Implementation | undefined {
  return options.serverInfo ?? session.initializeResult?.serverInfo;
}

/**
 * The request's envelope: the one its front read, or read here. Read once, it is what everything
 * after reads of the request's `_meta` and of a retry's members.
 */
export function envelopeOf(request: JsonRpcRequest, ctx: ModernContext, options: ModernDispatchOptions): Outcome<Envelope, EnvelopeError> {
  if (ctx.envelope) return ok(ctx.envelope);
  return readEnvelope(request, options.supportedVersions ? { supportedVersions: options.supportedVersions } : {});
}

/** The answer to a request refused by a limit: `-32005` naming it, HTTP 429 or 503 with `Retry-After`. */
export function refusedAnswer(id: JsonRpcRequest['id'] | null, refusal: LimitRefusal): Answer {
  return limitAnswer(refusal, id);
}

/**
 * The answer to a request no upstream session could be had for: the limit that refused it, or the
 * upstream's own error in the message and in `data`.
 */
export function unavailable(request: JsonRpcRequest, e: unknown, ctx?: ModernContext): Answer {
  const refusal = refusalOf(e);
  if (refusal) return refusedAnswer(request.id, refusal);
  const refused = e instanceof AdapterError ? authRefusalAnswer(request.id, e.upstream, ctx?.challenge) : undefined;
  if (refused) return refused;
  return errorAnswer(
    request.id,
    upstreamUnavailable(e instanceof Error ? e.message : String(e), e instanceof AdapterError ? e.upstream : undefined),
  );
}

/** One request on its way: what `serveModern` has read of it before it has a session. */
export interface PendingRequest {
  readonly request: JsonRpcRequest;
  readonly ctx: ModernContext;
  readonly options: ModernDispatchOptions;
  readonly up: LegacyRequest;
  readonly key: SessionKey;
  readonly target: string;
  readonly pushable: boolean;
  readonly reservation: { reserved: boolean };
  /**
   * Whose roots the caller gives the server (see `rootsHolderOf`), when its sessions declare
   * `roots` upstream and the wrap keeps track of them.
   */
  readonly holder: string | undefined;
}

/** How an upstream outcome on `session` becomes the answer to `r`'s request. */
/** Whether the request declares the tasks extension. */
export function declaresTasks(envelope: Envelope): boolean {
  return declaresTasksExtension(envelope.clientCapabilities);
}

export function finisher(r: PendingRequest, session: UpstreamSession): (outcome: RpcOutcome) => Answer {
  const { request, ctx, options, up } = r;
  const method = request.method;
  const toModern = { serverInfo: serverInfoOf(session, options), cache: options.cache, retry: up.envelope.retry !== undefined };
  return (outcome) => {
    if ('error' in outcome)
      return (
        authRefusalAnswer(request.id, failureOf(outcome.error.data), ctx.challenge) ??
        errorAnswer(request.id, errorToModern(outcome.error, { method, ...(up.request.params ? { params: up.request.params } : {}) }))
      );
    // The task the server created for a call that asked for one (`params.task`) is the caller's.
    if (isRecord(outcome.result['task']) && options.tasks && declaresTasks(up.envelope))
      return options.tasks.adopt(outcome.result, {
        request,
        principal: ctx.principal,
        session,
        serverInfo: serverInfoOf(session, options),
      });
    options.catalog?.note(method, outcome.result);
    const translated = resultToModern(method, outcome.result, toModern);
    if (!translated.ok) return errorAnswer(request.id, translated.error);
    return { message: resultResponse(request.id, translated.value.result), status: 200 };
  };
}
