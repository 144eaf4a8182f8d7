/**
 * Which upstream session a caller's request belongs to: its pool key, from the caller's principal
 * (or the shared one, when callers share sessions), its declared capabilities (compared with the
 * sets seen lately rather than serialised on every call), the wrap's own roots, and the caller's
 * `Authorization` when the backend passes it upstream.
 */
import { canonicalJson, sameJson, type JsonObject } from '../../core/primitives.ts';
import { clientCapabilitiesToLegacy } from '../../core/translate/capabilities.ts';
import { ADAPTER_INFO } from '../../core/translate/context.ts';
import type { Envelope } from '../../core/translate/envelope.ts';
import type { ModernContext } from '../../fronts/served.ts';
import type { SessionKey } from '../../session/sessionKey.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';

/** The principal the keys of callers that share sessions are filed under (no caller's own). */
export const SHARED_PRINCIPAL = '\u0000shared';

interface KnownCapabilities {
  readonly modern: unknown;
  readonly ownRoots: boolean;
  readonly capabilities: JsonObject;
  readonly text: string;
}

/**
 * The capability sets seen last, newest first: clients repeat theirs on every request, so a new
 * request's set is compared with these (no text is built) before it is translated and canonicalised.
 */
const recentCapabilities: KnownCapabilities[] = [];
const RECENT_CAPABILITIES = 16;

/**
 * The pool key for a modern envelope: the principal plus what the request declared, as declared
 * upstream: `roots` with `listChanged` (servers such as fastmcp ask for roots only then), and
 * `roots` whatever the client declared when the wrap has roots of its own (`ownRoots`).
 */
export function keyFor(principal: string, envelope: Envelope, ownRoots = false, authorization?: string): SessionKey {
  const modern = envelope.clientCapabilities;
  let known: KnownCapabilities | undefined;
  for (let i = 0; i < recentCapabilities.length; i++) {
    const candidate = recentCapabilities[i]!;
    if (candidate.ownRoots !== ownRoots || !sameJson(candidate.modern, modern)) continue;
    known = candidate;
    if (i > 0) {
      recentCapabilities.splice(i, 1);
      recentCapabilities.unshift(candidate);
    }
    break;
  }
  if (!known) {
    const capabilities = clientCapabilitiesToLegacy(modern, { rootsListChanged: true, ownRoots }) as JsonObject;
    // What is remembered is a copy: the request's own value stays the caller's.
    known = { modern: structuredClone(modern), ownRoots, capabilities, text: canonicalJson(capabilities) };
    recentCapabilities.unshift(known);
    if (recentCapabilities.length > RECENT_CAPABILITIES) recentCapabilities.pop();
  }
  const key = {
    principal,
    capabilities: known.capabilities,
    capabilitiesText: known.text,
    clientInfo: envelope.clientInfo ?? ADAPTER_INFO,
  };
  return authorization === undefined ? key : { ...key, authorization };
}

/**
 * The pool key of a caller's request: filed under its principal, or under `SHARED_PRINCIPAL` when
 * callers share sessions.
 */
export function callerKey(ctx: ModernContext, envelope: Envelope, options: ModernDispatchOptions): SessionKey {
  return keyFor(options.shared ? SHARED_PRINCIPAL : ctx.principal, envelope, ownRoots(options), passedAuthorization(ctx, options));
}

/** The caller's `Authorization` header, when the wrap's backend passes it upstream. */
export function passedAuthorization(ctx: ModernContext, options: Pick<ModernDispatchOptions, 'pool'>): string | undefined {
  return options.pool.backend.passesAuthorization ? (ctx.headers?.('authorization') ?? undefined) : undefined;
}

/** Whether the wrap has roots of its own (see `ModernDispatchOptions.roots`). */
export function ownRoots(options: Pick<ModernDispatchOptions, 'roots'>): boolean {
  return options.roots !== undefined && options.roots.length > 0;
}
