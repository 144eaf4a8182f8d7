/**
 * What one bridged legacy client session has agreed on so far (its view, the versions on both
 * sides, the upstream's capabilities): one mutable record the bridge owns and its parts (handshake,
 * input rounds, tool learning, subscriptions) read at the moment they need it. No behaviour here.
 */
import { LATEST_MODERN_VERSION, LEGACY_VERSIONS, type LegacyVersion, type ModernVersion } from '../../core/era.ts';
import type { LegacySessionView } from '../../core/translate/envelope.ts';
import type { JsonObject } from '../../core/primitives.ts';

/** The state of one bridged session; `view` is undefined until `initialize` was answered. */
export interface BridgeSession {
  /** The client's session as `initialize` set it (and `logging/setLevel` changes it). */
  view: LegacySessionView | undefined;
  /** The legacy version agreed with the client. */
  legacyVersion: LegacyVersion;
  /** The modern version spoken upstream (learnt from `server/discover`). */
  modernVersion: ModernVersion;
  /** The upstream's capabilities, from `server/discover`. */
  capabilities: JsonObject;
}

/** A session before `initialize`: the newest versions of both eras, no capabilities. */
export function newBridgeSession(): BridgeSession {
  return {
    view: undefined,
    legacyVersion: LEGACY_VERSIONS[LEGACY_VERSIONS.length - 1]!,
    modernVersion: LATEST_MODERN_VERSION,
    capabilities: {},
  };
}
