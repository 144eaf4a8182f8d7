/**
 * The legacy session a stdio pipe relays to (`stdioFront.ts`): the one pipe the wrap opens for it,
 * message for message both ways, its requests remembered until the upstream answers them and
 * answered with an error saying why once the upstream is gone (or could not be started).
 */
import { errorResponse, isRequestId, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../core/jsonrpc.ts';
import { closedReason, describeFailure, upstreamUnavailable, type UpstreamFailure } from '../util/upstreamFailure.ts';
import { LONE, type Transport } from '../transport/transport.ts';
import type { SessionSource } from './served.ts';
import type { RelayTelemetry } from '../observe/relayTelemetry.ts';

/** Writes a message to the pipe; `lone`: it answers the session's one request in flight. */
export type LegacyWrite = (message: JsonRpcMessage, lone?: boolean) => void;

/** The one legacy session of a stdio pipe, opened when its first message comes. */
export class StdioLegacySession {
  readonly #source: SessionSource;
  readonly #write: LegacyWrite;
  #upstream: Transport | undefined;
  /** What is observed of the session, when anything is. */
  #observed: RelayTelemetry | undefined;
  #opening: Promise<Transport | undefined> | undefined;
  /** Requests of the session the upstream has not answered: answered with an error if it goes. */
  readonly #unanswered = new Set<RequestId>();
  /** Why the session's upstream is gone (once it is). */
  #gone: { detail: string; failure: UpstreamFailure | undefined } | undefined;
  /** Resolves when the session's upstream has closed (and `#gone` says why). */
  #closed: Promise<void> = Promise.resolve();

  constructor(source: SessionSource, write: LegacyWrite) {
    this.#source = source;
    this.#write = write;
  }

  /** Whether the session is opened or being opened (what is not modern on the pipe is its own then). */
  get started(): boolean {
    return this.#upstream !== undefined || this.#opening !== undefined;
  }

  /** Opens the session, unless it was opened already. */
  open(): void {
    this.#opening ??= this.#open();
  }

  #goneError() {
    return upstreamUnavailable(this.#gone?.detail ?? 'it could not be started', this.#gone?.failure);
  }

  async #open(): Promise<Transport | undefined> {
    let upstream: Transport | undefined;
    let spoke = false;
    try {
      upstream = await this.#source.connect();
      const own = upstream;
      const observed = this.#source.observe?.('pipe');
      let closed!: () => void;
      this.#closed = new Promise((resolve) => (closed = resolve));
      own.onmessage = (m) => {
        spoke = true;
        // The answer to the one request in flight is all that is due this turn.
        const answer = !('method' in m) && isRequestId(m.id) && this.#unanswered.delete(m.id);
        observed?.answered(m);
        this.#write(m, answer && this.#unanswered.size === 0);
      };
      own.onclose = () => {
        if (this.#upstream === own) this.#upstream = undefined;
        const failure = own.failure;
        this.#gone = {
          detail: `it ${failure ? closedReason(failure, spoke ? undefined : 'before it answered initialize') : 'closed the connection'}`,
          failure,
        };
        // One that never said a word did not start: the wrap's owner hears of it.
        if (!spoke) this.#source.failed?.(this.#gone.detail);
        for (const id of this.#unanswered) this.#write(errorResponse(id, this.#goneError()));
        this.#unanswered.clear();
        observed?.closed(this.#gone.detail);
        closed();
      };
      await own.start();
      this.#upstream = own;
      this.#observed = observed;
      return own;
    } catch (e) {
      const failure = upstream?.failure;
      this.#gone = {
        detail: failure
          ? (describeFailure(failure) ?? (e instanceof Error ? e.message : String(e)))
          : e instanceof Error
            ? e.message
            : String(e),
        failure,
      };
      this.#source.failed?.(this.#gone.detail);
      return undefined;
    }
  }

  /** Relays a message (or a batch) of the client to the session; its requests get an error if the session is gone. */
  async relay(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    // A batch is relayed as it is, and what the server makes of it is its own (2025-03-26 alone has them).
    const requests = Array.isArray(message)
      ? []
      : [message].filter((m): m is JsonRpcRequest => 'method' in m && 'id' in m && isRequestId(m.id));
    const upstream = this.#upstream ?? (await this.#opening);
    if (upstream && upstream === this.#upstream) {
      for (const r of requests) this.#unanswered.add(r.id);
      try {
        const sent = (this.#observed ? this.#observed.sent(message) : message) as JsonRpcMessage;
        // The session's one request in flight: nothing else is due on the pipe this turn.
        await (requests.length === 1 && this.#unanswered.size === 1 ? upstream.send(sent, LONE) : upstream.send(sent));
        return;
      } catch {
        // Going: its close answers them with its own account of why; if it does not come soon, below.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([this.#closed, new Promise((r) => (timer = setTimeout(r, 1000)))]);
        clearTimeout(timer);
        if (requests.every((r) => !this.#unanswered.has(r.id))) return;
      }
    }
    for (const r of requests) {
      this.#unanswered.delete(r.id);
      this.#write(errorResponse(r.id, this.#goneError()));
    }
  }

  /** Closes the session's upstream, if it is open. */
  async close(): Promise<void> {
    await this.#upstream?.close();
  }
}
