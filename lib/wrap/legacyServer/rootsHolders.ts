/**
 * Whose roots the server holds on each upstream session: a legacy server may keep the roots it was
 * answered per session (server-everything does) and use them for every later call, while a
 * session passes from caller to caller. A call whose caller cannot be shown to have given those
 * roots has them asked again first (`notifications/roots/list_changed`, see `modernDispatch.ts`).
 * Not here: how they are asked again, and who answers.
 */
import { ANONYMOUS } from '../../transport/httpEdge.ts';
import { keyText, type SessionKey } from '../../session/sessionKey.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';

/** The holder of the wrap's own roots (`--roots`, answered for every caller when given). */
export const WRAP_ROOTS = '\u0000wrap';

/** Most keys whose holders are remembered (the oldest is forgotten first). */
const MAX_KEYS = 1024;

/**
 * Whose roots a caller's calls give: the wrap's own when it has some (`local`), else the caller's
 * principal's (`ANONYMOUS` for callers without credentials, which cannot be told apart).
 */
export function rootsHolderOf(principal: string, local: boolean): string {
  return local ? WRAP_ROOTS : principal;
}

/** Whether roots given by `held` may not be those of `caller` (two anonymous callers may be any two). */
function differs(held: string, caller: string): boolean {
  return held !== caller || caller === ANONYMOUS;
}

/** Whose roots the server holds, per session, and which holders each key's sessions have seen. */
export class RootsHolders {
  readonly #bySession = new WeakMap<UpstreamSession, string>();
  readonly #byKey = new Map<string, string[]>();

  /** The server on `session` (of `key`) was answered `roots/list` with `holder`'s roots. */
  note(key: SessionKey, session: UpstreamSession, holder: string): void {
    this.#bySession.set(session, holder);
    const text = keyText(key);
    const seen = this.#byKey.get(text);
    if (seen) {
      if (!seen.includes(holder)) seen.push(holder);
      return;
    }
    this.#byKey.set(text, [holder]);
    if (this.#byKey.size > MAX_KEYS) this.#byKey.delete(this.#byKey.keys().next().value!);
  }

  /**
   * Whether the server on `session` holds roots that may not be `caller`'s: it was answered
   * `roots/list` before, by another holder or by an anonymous caller.
   */
  stale(session: UpstreamSession, caller: string): boolean {
    const held = this.#bySession.get(session);
    return held !== undefined && differs(held, caller);
  }

  /**
   * Whether a call of `caller` may find roots not its own on a session of `key`: then it must
   * have the session alone while it runs (its roots are asked again first, and no other caller's
   * call may ask them again meanwhile).
   */
  mayDiffer(key: SessionKey, caller: string): boolean {
    if (this.#byKey.size === 0) return false;
    const seen = this.#byKey.get(keyText(key));
    return seen !== undefined && seen.some((held) => differs(held, caller));
  }
}
