/**
 * Reading Server-Sent Events bodies (eventsource-parser underneath): what every HTTP client of the
 * library does with a `text/event-stream` answer.
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
}

/** Reads an SSE body to its end (or until `done()`), handing each event over as it arrives. */
export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers): Promise<void> {
  const parser = createParser({
    onEvent: handlers.onEvent,
    ...(handlers.onRetry ? { onRetry: handlers.onRetry } : {}),
    ...(handlers.onError ? { onError: handlers.onError } : {}),
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    while (!handlers.done?.()) {
      const { done, value } = await reader.read();
      if (done) {
        parser.feed(decoder.decode());
        return;
      }
      parser.feed(decoder.decode(value, { stream: true }));
    }
    void reader.cancel().catch(() => {});
  } finally {
    reader.releaseLock();
  }
}

/** Reads the JSON-RPC messages of an SSE body (`message` events), handing each to `onMessage` as it arrives. */
export function readSseMessages(body: ReadableStream<Uint8Array>, onMessage: (message: unknown) => void): Promise<void> {
  return readSse(body, {
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
