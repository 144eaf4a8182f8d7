/**
 * A call in flight on an upstream session, as the session keeps it: its upstream id and progress
 * token, the hooks it hears through, and how it is answered. Types only; the session that makes and
 * settles them is `upstreamSession.ts`, the reading of the server's pushes that ties them to one
 * is `upstreamPushes.ts`.
 */
import type { CallHooks, RpcOutcome } from './callHooks.ts';

/** A call in flight. Settled once, through `UpstreamSession.#settle`. */
export interface Pending {
  readonly upstreamId: number;
  readonly method: string;
  readonly hooks: CallHooks;
  readonly progressToken: string | undefined;
  readonly callerToken: string | number | undefined;
  readonly pushable: boolean;
  /** Resolves the caller's promise. */
  resolve: (outcome: RpcOutcome) => void;
  /** Set when the call listens to a signal or hands out a cancel function. */
  onAbort: (() => void) | undefined;
  settled: boolean;
}
