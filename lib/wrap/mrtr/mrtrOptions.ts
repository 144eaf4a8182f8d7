/**
 * The options of the MRTR broker: how a legacy server's pushes become rounds (suspend or replay
 * mode), how long and how many calls stay parked, and a replica's part in a fleet.
 */
import type { Keyring } from '../../state/keyring.ts';
import type { UsedStates } from '../../state/usedStates.ts';

/** How a legacy server's pushes become MRTR rounds: suspend mode (parked calls sealed, bounded, released) or replay mode. */
export interface MrtrOptions {
  /** Seals `requestState`; default a random key per process (retries cannot cross processes). */
  readonly keyring?: Keyring;
  /** How long a parked call waits for its retry before it is released (default 5 minutes). */
  readonly parkTimeoutMs?: number;
  /**
   * A round is sent as soon as the server answered a `ping` asked after the pushes seen so far (a
   * server answers in order, so whatever it pushed before is in). This is the longest a round
   * waits for that answer from a server that once left one unanswered that long (default 15 ms);
   * a server that answers them is waited for up to 2 s, since on a loaded machine its answer may
   * take longer and a round cut short splits what the server asked at once. 0 sends each round
   * after one turn of the event loop, without asking.
   */
  readonly collectMs?: number;
  /** Most calls parked at once (default 10,000; in a wrap, also within the sessions it may hold). */
  readonly maxParked?: number;
  /**
   * Calls one principal may have parked at once (default 16): when one more of its calls parks,
   * its oldest parked call is released (its pushes are answered `cancel`, the call is cancelled
   * upstream), so calls a client abandoned give way to the ones it is answering.
   */
  readonly maxParkedPerPrincipal?: number;
  /** Clock (ms); default `Date.now`. */
  readonly now?: () => number;
  /**
   * Replay mode instead of suspend mode, for every call (`true`) or for these targets (tool or
   * prompt names, resource URIs): stateless, nothing parked, every round re-runs the call.
   */
  readonly replay?: boolean | readonly string[];
  /**
   * Replay mode: where used states are remembered (default in this process). A fleet shares one
   * store, so a state is served once whichever replica it lands on.
   */
  readonly usedStates?: UsedStates;
  /** This replica's id in a fleet: written into each suspend state as the owner of the parked call. */
  readonly replica?: string;
}
