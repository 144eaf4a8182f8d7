/**
 * What a server's answer to `server/discover` says about its era: the one rule the probe, the
 * legacy-client handshake and `claimedEra` follow. Pure: the callers gather the answer (a result,
 * an error, an HTTP status without a JSON-RPC body, silence, an exit) and act on the verdict.
 *
 * A `DiscoverResult` (a result with `supportedVersions`) sharing a version → modern. A recognised
 * modern error (`-32020`, `-32021` with `requiredCapabilities`, `-32022` with `supported`, and on
 * HTTP `404` with `-32601`) → modern: `-32022` naming a version we speak is asked again in it
 * (even the one sent), once; one naming no version we speak is a server we share no version with (`unshared`), which
 * `initialize` may still reach when it lists a legacy version. 401, 403, redirects, 5xx and a
 * server silent from its start say nothing of the era (`unknown`): no reason to fall back.
 * Anything else (a result that is not a `DiscoverResult`, `-32601`/`-32602` on stdio or with 2xx,
 * another 4xx, silence after the server has spoken, its exit) → legacy.
 */
import { isLegacyVersion, MODERN_VERSIONS, pickModernVersion, type ModernVersion } from './era.ts';
import { ErrorCode, isRecognisedModernError, type WireError } from './errors.ts';
import { isRecord, type JsonObject } from './primitives.ts';

/** A server's answer to `server/discover`, as its transport delivered it. */
export type DiscoverAnswer =
  /** A JSON-RPC result (with the HTTP status it came with). */
  | { readonly kind: 'result'; readonly result: unknown; readonly status?: number }
  /** A JSON-RPC error (with the HTTP status it came with). */
  | { readonly kind: 'error'; readonly error: WireError; readonly status?: number }
  /** An HTTP answer without a JSON-RPC answer in its body. */
  | { readonly kind: 'status'; readonly status: number }
  /** No answer: `spoken` says whether the server had said anything before (a server still starting has not). */
  | { readonly kind: 'silence'; readonly spoken: boolean; readonly ms: number }
  /** The server's process exited instead of answering. */
  | { readonly kind: 'exit' }
  /** Something else came back: a line that is not JSON-RPC, an answer to `initialize` instead (its words). */
  | { readonly kind: 'other'; readonly what: string };

/** What was asked: the modern version sent, the ones we speak, and whether this is the one retry. */
export interface DiscoverAsked {
  readonly sent: ModernVersion;
  readonly ours?: readonly ModernVersion[];
  readonly retried?: boolean;
}

/** The era an answer shows, and what to do next. */
export type EraVerdict =
  /** Modern, in `version`; `discover` when the answer was a `DiscoverResult`, `refusal` when a modern error refused the request. */
  | { readonly era: 'modern'; readonly version: ModernVersion; readonly discover?: JsonObject; readonly refusal?: WireError }
  /** Modern: ask again in `version` (a `-32022` naming it), once. */
  | { readonly era: 'retry'; readonly version: ModernVersion }
  /** Modern, sharing no modern version with us (and listing no legacy one): `initialize` is all that is left to try. */
  | { readonly era: 'unshared'; readonly supported: readonly string[]; readonly reason: string; readonly refusal?: WireError }
  /** Legacy: speak `initialize`. `streamable` when an HTTP server answered with a JSON-RPC error (it speaks Streamable HTTP). */
  | { readonly era: 'legacy'; readonly reason: string; readonly streamable?: boolean }
  /** No era follows (unauthorized, forbidden, a redirect, a server error, a server that never spoke): not a reason to fall back. */
  | { readonly era: 'unknown'; readonly reason: string; readonly status?: number };

/** The verdict on one answer to `server/discover`. */
export function eraOfDiscoverAnswer(answer: DiscoverAnswer, asked: DiscoverAsked): EraVerdict {
  const ours = asked.ours ?? MODERN_VERSIONS;
  switch (answer.kind) {
    case 'result': {
      if (answer.status !== undefined && (answer.status < 200 || answer.status >= 300)) {
        return statusVerdict(answer.status) ?? { era: 'legacy', reason: `server/discover answered HTTP ${answer.status} with a result` };
      }
      const result = answer.result;
      if (!isRecord(result) || !Array.isArray(result['supportedVersions']))
        return { era: 'legacy', reason: 'the answer to server/discover is not a DiscoverResult' };
      const version = pickModernVersion(result['supportedVersions'], ours);
      if (version) return { era: 'modern', version, discover: result };
      return noSharedVersion(result['supportedVersions'], 'the server offers');
    }
    case 'error':
      return errorVerdict(answer.error, answer.status, asked, ours);
    case 'status':
      return (
        statusVerdict(answer.status) ?? {
          era: 'legacy',
          reason: `server/discover answered HTTP ${answer.status} without a JSON-RPC answer`,
        }
      );
    case 'silence':
      return answer.spoken
        ? { era: 'legacy', reason: `no answer to server/discover within ${answer.ms} ms` }
        : {
            era: 'unknown',
            reason: `the server said nothing in ${Math.round(answer.ms / 1000)} s: it did not start (no answer to server/discover or initialize)`,
          };
    case 'exit':
      return { era: 'legacy', reason: 'the server exited on server/discover' };
    case 'other':
      return { era: 'legacy', reason: answer.what };
  }
}

/** 401, 403, 3xx and 5xx: no era follows from them. */
function statusVerdict(status: number): EraVerdict | undefined {
  if (status >= 300 && status < 400) return { era: 'unknown', reason: `a redirect (HTTP ${status}); redirects are not followed`, status };
  if (status === 401) return { era: 'unknown', reason: 'HTTP 401 (unauthorized); not a reason to fall back', status };
  if (status === 403) return { era: 'unknown', reason: 'HTTP 403 (forbidden); not a reason to fall back', status };
  if (status >= 500) return { era: 'unknown', reason: `HTTP ${status} (a server error); not a reason to fall back`, status };
  return undefined;
}

function errorVerdict(error: WireError, status: number | undefined, asked: DiscoverAsked, ours: readonly ModernVersion[]): EraVerdict {
  const unknown = status === undefined ? undefined : statusVerdict(status);
  if (unknown) return unknown;
  const answered = `server/discover answered ${status === undefined ? '' : `HTTP ${status} with `}${error.code} ${error.message}`;
  if (!isRecognisedModernError(error, status))
    return { era: 'legacy', reason: answered, ...(status === undefined ? {} : { streamable: true }) };
  if (error.code !== ErrorCode.UnsupportedProtocolVersion) return { era: 'modern', version: asked.sent, refusal: error };
  const supported = (error.data as JsonObject)['supported'] as unknown[];
  const version = pickModernVersion(supported, ours);
  // Once, even in the version sent: a server that refused a version it names may be changing hands (a rolling upgrade).
  if (version && !asked.retried) return { era: 'retry', version };
  if (version === asked.sent) return { era: 'modern', version, refusal: error };
  const said = version ? `-32022 again after the retry in ${asked.sent}: the server supports` : '-32022: the server supports';
  const verdict = noSharedVersion(version ? supported.filter((v) => v !== version) : supported, said);
  return verdict.era === 'unshared' ? { ...verdict, refusal: error } : verdict;
}

/** A server listing no modern version we speak: legacy when it lists a legacy one (reached through `initialize`), else unshared. */
function noSharedVersion(supported: readonly unknown[], said: string): EraVerdict & { era: 'legacy' | 'unshared' } {
  const offered = supported.map(String);
  const list = offered.join(', ') || 'nothing';
  if (supported.some(isLegacyVersion))
    return { era: 'legacy', reason: `${said} ${list}: legacy versions only reach it through initialize` };
  return { era: 'unshared', supported: offered, reason: `${said} ${list}, no modern version this client speaks` };
}
