/**
 * The legacy handshake answered locally: `initialize` from the upstream's `server/discover`
 * (cached per upstream, asked again once in a version the server names), agreeing the versions and
 * the session on the way; the legacy tasks the adapter serves over the server's tasks extension are
 * declared. Not the relay of a legacy upstream: the bridge does that when told so.
 */
import { ErrorCode, internalError, type WireError } from '../../core/errors.ts';
import { negotiateLegacyVersion, pickModernVersion, type LegacyVersion } from '../../core/era.ts';
import { errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../core/jsonrpc.ts';
import { InitializeParamsSchema, type InitializeParams } from '../../core/legacy/lifecycle.ts';
import { fail, ok, type Outcome } from '../../core/outcome.ts';
import { isRecord, type JsonObject, type LoggingLevel } from '../../core/primitives.ts';
import { discoverToInitializeResult } from '../../core/translate/discover.ts';
import { sessionFromInitialize, sessionMeta } from '../../core/translate/envelope.ts';
import { refusalToInitializeError } from '../../core/translate/discover.ts';
import { eraOfDiscoverAnswer, type DiscoverAnswer } from '../../core/verdict.ts';
import * as v from 'valibot';
import { UpstreamHttpError, type ModernUpstream } from '../../transport/modernUpstream.ts';
import type { BridgeSession } from './bridgeSession.ts';
import { BRIDGED_TASKS_CAPABILITY, offersTasks } from './tasks.ts';
import { closedReason, upstreamUnavailable } from '../../util/upstreamFailure.ts';

/** A discover result shared by the sessions of one upstream, valid until `expiresAt`. */
export class DiscoverCache {
  #entry: { result: JsonObject; expiresAt: number } | undefined;
  get(now: number): JsonObject | undefined {
    return this.#entry && this.#entry.expiresAt > now ? this.#entry.result : undefined;
  }
  set(result: JsonObject, now: number): void {
    const ttl = typeof result['ttlMs'] === 'number' && result['ttlMs'] > 0 ? result['ttlMs'] : 0;
    this.#entry = { result, expiresAt: now + ttl };
  }
}

/** What a handshake reads and where it writes what was agreed. */
export interface HandshakeContext {
  readonly upstream: ModernUpstream;
  readonly cache: DiscoverCache;
  readonly now: () => number;
  /** Written: the modern version (while discovering), then the legacy version, capabilities and view. */
  readonly session: BridgeSession;
  readonly defaultLogLevel?: LoggingLevel | undefined;
  readonly legacyVersions?: readonly LegacyVersion[] | undefined;
  /** Told why, when the upstream cannot be reached at all (the client is answered with an error). */
  readonly unreachable?: ((reason: string) => void) | undefined;
}

/** The upstream's discover result, its refusal as an `initialize` error, or `legacy`. */
async function discover(params: InitializeParams, ctx: HandshakeContext): Promise<Outcome<JsonObject, WireError> | 'legacy'> {
  const state = ctx.session;
  const cached = ctx.cache.get(ctx.now());
  if (cached) {
    state.modernVersion =
      (Array.isArray(cached['supportedVersions']) ? pickModernVersion(cached['supportedVersions']) : undefined) ?? state.modernVersion;
    return ok(cached);
  }
  // The era verdict decides (core/verdict.ts): a -32022 naming a modern version we speak is asked again in it, once.
  for (let attempt = 0; ; attempt++) {
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: 'discover',
      method: 'server/discover',
      params: { _meta: sessionMeta(sessionFromInitialize(params), undefined, state.modernVersion) },
    };
    let heard: DiscoverAnswer;
    try {
      const answer = await ctx.upstream.request(request);
      // An error while the upstream is gone (its process exited) is ours: no era follows from it.
      const gone = 'error' in answer ? ctx.upstream.gone : undefined;
      if (gone !== undefined) {
        const reason = `it ${closedReason(gone.failure, 'before it answered initialize')}`;
        ctx.unreachable?.(reason);
        return fail(upstreamUnavailable(reason, gone.failure));
      }
      heard = 'result' in answer ? { kind: 'result', result: answer.result } : { kind: 'error', error: answer.error };
    } catch (e) {
      if (!(e instanceof UpstreamHttpError) || (e.status >= 200 && e.status < 300))
        return unreachable(e instanceof Error ? e.message : String(e), ctx);
      heard = { kind: 'status', status: e.status };
    }
    const verdict = eraOfDiscoverAnswer(heard, { sent: state.modernVersion, retried: attempt > 0 });
    switch (verdict.era) {
      case 'legacy':
        return 'legacy';
      case 'retry':
        state.modernVersion = verdict.version;
        continue;
      case 'unknown':
        if (verdict.status === 401 || verdict.status === 403) return fail(refusalToInitializeError({ status: verdict.status }));
        return unreachable(verdict.reason, ctx);
      case 'unshared':
        return fail(
          refusalToInitializeError({
            error: verdict.refusal ?? {
              code: ErrorCode.UnsupportedProtocolVersion,
              message: verdict.reason,
              data: { supported: [...verdict.supported] },
            },
          }),
        );
      case 'modern':
        if (verdict.refusal || !verdict.discover)
          return fail(refusalToInitializeError({ error: verdict.refusal ?? internalError('server/discover named no version') }));
        state.modernVersion = verdict.version;
        ctx.cache.set(verdict.discover, ctx.now());
        return ok(verdict.discover);
    }
  }
}

/** The upstream could not be asked at all: the client is answered with an error saying why. */
function unreachable(reason: string, ctx: HandshakeContext): Outcome<JsonObject, WireError> {
  ctx.unreachable?.(reason);
  return fail(internalError(`the upstream MCP server is unavailable: ${reason}`));
}

/**
 * Answers the client's `initialize` from the upstream's discover: the response to send (a result
 * once the session is agreed and written to `ctx.session`, or an error), or `legacy` when the
 * upstream is a legacy server and the request is to be relayed unchanged.
 */
export async function handshake(request: JsonRpcRequest, ctx: HandshakeContext): Promise<JsonRpcResponse | 'legacy'> {
  const parsed = v.safeParse(InitializeParamsSchema, request.params);
  if (!parsed.success)
    return errorResponse(request.id, {
      code: ErrorCode.InvalidParams,
      message: 'Invalid params: initialize needs protocolVersion, capabilities and clientInfo',
    });
  const params = request.params as InitializeParams;
  const discovered = await discover(params, ctx);
  if (discovered === 'legacy') return 'legacy';
  if (!discovered.ok) return errorResponse(request.id, discovered.error);
  const init = discoverToInitializeResult(discovered.value, {
    requestedVersion: params.protocolVersion,
    ...(ctx.legacyVersions ? { supportedLegacyVersions: ctx.legacyVersions } : {}),
  });
  if (!init.ok) return errorResponse(request.id, init.error);
  const state = ctx.session;
  state.legacyVersion = negotiateLegacyVersion(params.protocolVersion, ctx.legacyVersions);
  state.capabilities = isRecord(discovered.value['capabilities']) ? discovered.value['capabilities'] : {};
  state.view = sessionFromInitialize(params, ctx.defaultLogLevel);
  const result = init.value as unknown as JsonObject;
  // Legacy tasks are served by the adapter over the extension: it says what it serves, whatever the server declared beside it.
  if (offersTasks(state.capabilities) && isRecord(result['capabilities']))
    result['capabilities'] = { ...result['capabilities'], tasks: BRIDGED_TASKS_CAPABILITY };
  return { jsonrpc: '2.0', id: request.id, result };
}
