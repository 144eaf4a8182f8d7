/**
 * Reading Server-Sent Events bodies (eventsource-parser underneath): what every HTTP client of the
 * library does with a `text/event-stream` answer, with an optional bound on one event. Not the
 * writing side (`httpEdge.ts`) and not what a transport makes of the events.
 */
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';

/** The media type of a response, lower case, without parameters. */
export function mediaType(res: Response): string {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

export interface SseHandlers {
  readonly onEvent: (event: EventSourceMessage) => void;
  readonly onRetry?: (ms: number) => void;
  readonly onError?: (error: ParseError) => void;
  /** Checked after each chunk: true stops reading (the body is then cancelled). */
  readonly done?: () => boolean;
  /**
   * The most one event may hold (default: no bound), in characters (an approximation of bytes): what
   * the parser keeps for it while it arrives, and its data once whole. Past it, the event is not
   * delivered, reading stops, the body is cancelled, `onTooLarge` is called and the read resolves as
   * if the stream had ended. Memory stays within the bound plus one 64 KiB piece.
   */
  readonly maxEventBytes?: number;
  /** An event went past `maxEventBytes`: `size` is the bytes fed to the parser since the last event. */
  readonly onTooLarge?: (size: number) => void;
}

/** How much of a chunk is fed to the parser at once, so that an event cannot pass the bound by more. */
const FEED_BYTES = 64 * 1024;

/**
 * Reads an SSE body to its end (or until `done()`, or until an event goes past `maxEventBytes`),
 * handing each event over as it arrives. A body that breaks off rejects.
 */
export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers): Promise<void> {
  const max = handlers.maxEventBytes ?? Infinity;
  let dispatched = false;
  let tooLarge = false;
  // The parser's own bound measures what it holds for the event being built (partial line plus
  // data so far), so comments and keep-alives between events never add up to a false alarm; an
  // event that completes within the piece that took it past the bound is caught on dispatch.
  const parser = createParser({
    onEvent: (event) => {
      if (tooLarge) return;
      dispatched = true;
      if (event.data.length > max) tooLarge = true;
      else handlers.onEvent(event);
    },
    ...(handlers.onRetry ? { onRetry: handlers.onRetry } : {}),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') tooLarge = true;
      else handlers.onError?.(error);
    },
    ...(handlers.maxEventBytes !== undefined ? { maxBufferSize: handlers.maxEventBytes } : {}),
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let since = 0;
  try {
    while (!handlers.done?.()) {
      const { done, value } = await reader.read();
      if (done) {
        parser.feed(decoder.decode());
        return;
      }
      for (let at = 0; at < value.byteLength && !tooLarge; at += FEED_BYTES) {
        const piece = value.subarray(at, at + FEED_BYTES);
        dispatched = false;
        parser.feed(decoder.decode(piece, { stream: true }));
        since = dispatched && !tooLarge ? piece.byteLength : since + piece.byteLength;
      }
      if (tooLarge) {
        handlers.onTooLarge?.(since);
        break;
      }
    }
    void reader.cancel().catch(() => {});
  } finally {
    reader.releaseLock();
  }
}

/** Options of {@link readSseMessages}: the bound on one event, as for {@link readSse}. */
export type SseMessagesOptions = Pick<SseHandlers, 'maxEventBytes' | 'onTooLarge'>;

/** Reads the JSON-RPC messages of an SSE body (`message` events), handing each to `onMessage` as it arrives. */
export function readSseMessages(
  body: ReadableStream<Uint8Array>,
  onMessage: (message: unknown) => void,
  options: SseMessagesOptions = {},
): Promise<void> {
  return readSse(body, {
    ...options,
    onEvent: (event) => {
      if (event.event !== undefined && event.event !== 'message') return;
      if (event.data.trim() === '') return;
      try {
        onMessage(JSON.parse(event.data));
      } catch {
        // not JSON: skipped, like any garbage on a stream
      }
    },
  });
}
