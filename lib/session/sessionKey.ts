/**
 * The key the pool files upstream sessions under: who is asking and what they declared (a legacy
 * server may register tools according to what its client declared at `initialize`), and its text.
 */
import { canonicalJson, type Implementation, type JsonObject } from '../core/primitives.ts';

/** Who is asking and what they declared: the pool key. */
export interface SessionKey {
  readonly principal: string;
  /** Shared between keys: never modified. */
  readonly capabilities: JsonObject;
  /** `canonicalJson(capabilities)`, when the caller has it already. */
  readonly capabilitiesText?: string;
  readonly clientInfo: Implementation;
  /**
   * The caller's `Authorization` header, when the backend passes it upstream: the sessions are
   * opened with it, and filed under it too (a custom principal may span several tokens).
   */
  readonly authorization?: string;
}

/** The text the pool files a key's sessions under. */
export function keyText(key: SessionKey): string {
  const text = `${key.principal}\u0000${key.capabilitiesText ?? canonicalJson(key.capabilities)}`;
  return key.authorization === undefined ? text : `${text}\u0000${key.authorization}`;
}
