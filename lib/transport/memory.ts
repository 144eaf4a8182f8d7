/**
 * An in-memory transport pair: what one side sends, the other receives, asynchronously (on a
 * microtask, as a real pipe would), in order. Used to connect an in-process SDK server. The
 * sender's `relatedRequestId` reaches the receiver as `extra.relatedRequestId`, so a push or a log
 * made inside a request handler can be tied to that request.
 */
import type { JsonRpcMessage, RequestId } from '../core/jsonrpc.ts';
import { AdapterError } from '../core/errors.ts';
import type { MessageExtra, Transport } from './transport.ts';

class MemoryTransport implements Transport {
  peer: MemoryTransport | undefined;
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  /** Messages are delivered in the order they were sent. */
  readonly ordered = true;
  sessionId?: string | undefined;
  #closed = false;
  #queue: Array<[JsonRpcMessage, MessageExtra | undefined]> = [];
  #started = false;

  async start(): Promise<void> {
    this.#started = true;
    const queued = this.#queue;
    this.#queue = [];
    for (const [m, extra] of queued) this.deliver(m, extra);
  }

  deliver(message: JsonRpcMessage, extra: MessageExtra | undefined): void {
    if (this.#closed) return;
    if (!this.#started) {
      this.#queue.push([message, extra]);
      return;
    }
    queueMicrotask(() => {
      if (!this.#closed) this.onmessage?.(message, extra);
    });
  }

  async send(message: JsonRpcMessage, options?: unknown): Promise<void> {
    if (this.#closed || !this.peer) throw new AdapterError('closed', 'in-memory transport is closed');
    const related = (options as { relatedRequestId?: RequestId } | undefined)?.relatedRequestId;
    this.peer.deliver(message, related === undefined ? undefined : { relatedRequestId: related });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const peer = this.peer;
    this.peer = undefined;
    this.onclose?.();
    if (peer) await peer.close();
  }
}

/** Two linked transports: `[client side, server side]`. Closing one closes both. */
export function createMemoryPair(): [Transport, Transport] {
  const a = new MemoryTransport();
  const b = new MemoryTransport();
  a.peer = b;
  b.peer = a;
  return [a, b];
}
