/**
 * Newline-delimited JSON framing (MCP stdio, both eras): splits a byte stream into lines without
 * holding more than a bounded partial line, and serialises messages one per line. A line past the
 * bound is skipped to its newline and reported once, with its first and last characters; framing
 * goes on with the next line. What a caller does about such a line is its own business.
 */
import { StringDecoder } from 'node:string_decoder';

/** The default bound on one line (64 MiB); transports reading a server pass their own (`DEFAULT_MAX_MESSAGE_BYTES`). */
const DEFAULT_MAX_LINE = 64 * 1024 * 1024;
/** How many characters of each end of an oversized line are kept for `onOverflow`. */
const OVERFLOW_END_CHARS = 256;

/** Options of {@link LineFramer}. */
export interface LineFramerOptions {
  /**
   * The most a line may hold (default 64 MiB). Counted in characters (UTF-16 code units) as an
   * approximation of bytes: exact for ASCII, which JSON on the wire nearly always is.
   */
  readonly maxLineBytes?: number;
  /**
   * Called once per line past the bound, at its newline (or at `end()`), with the characters seen
   * and the first and last 256 of them (enough to find a JSON-RPC `id`).
   */
  readonly onOverflow?: (size: number, head: string, tail: string) => void;
}

/** Feeds chunks in, calls `onLine` for each complete line (without the newline, `\r` trimmed). */
export class LineFramer {
  #partial = '';
  /** Set while skipping a line past the bound: what was seen of it. */
  #over: { size: number; head: string; tail: string } | undefined;
  /** UTF-8 across chunk boundaries (a tenth of what a streaming `TextDecoder` costs a chunk, in Node). */
  readonly #decoder = new StringDecoder('utf8');
  /** No text has been decoded from bytes yet. */
  #atStart = true;
  readonly #maxLine: number;
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: (size: number, head: string, tail: string) => void;

  constructor(onLine: (line: string) => void, options: LineFramerOptions = {}) {
    this.#onLine = onLine;
    this.#maxLine = options.maxLineBytes ?? DEFAULT_MAX_LINE;
    this.#onOverflow = options.onOverflow ?? (() => {});
  }

  push(chunk: Uint8Array | string): void {
    this.#take(typeof chunk === 'string' ? chunk : this.#decoded(this.#decoder.write(chunk)));
  }

  /** Text decoded from bytes, without a byte order mark at the very start of the stream (as `TextDecoder` leaves it out). */
  #decoded(text: string): string {
    if (this.#atStart && text.length > 0) {
      this.#atStart = false;
      if (text.charCodeAt(0) === 0xfeff) return text.slice(1);
    }
    return text;
  }

  #take(text: string): void {
    let start = 0;
    while (start < text.length) {
      const nl = text.indexOf('\n', start);
      const end = nl === -1 ? text.length : nl;
      const over = this.#over;
      if (over) {
        over.size += end - start;
        over.tail = (over.tail + text.slice(Math.max(start, end - OVERFLOW_END_CHARS), end)).slice(-OVERFLOW_END_CHARS);
      } else if (this.#partial.length + (end - start) > this.#maxLine) {
        // Past the bound: only its two ends are kept from here on, the rest is skipped.
        const partial = this.#partial;
        this.#partial = '';
        this.#over = {
          size: partial.length + (end - start),
          head: (partial.slice(0, OVERFLOW_END_CHARS) + text.slice(start, start + OVERFLOW_END_CHARS)).slice(0, OVERFLOW_END_CHARS),
          tail: (partial.slice(-OVERFLOW_END_CHARS) + text.slice(Math.max(start, end - OVERFLOW_END_CHARS), end)).slice(
            -OVERFLOW_END_CHARS,
          ),
        };
      } else if (nl === -1) {
        this.#partial += text.slice(start);
        return;
      } else {
        const line = this.#partial + text.slice(start, nl);
        this.#partial = '';
        this.#deliver(line);
      }
      if (nl === -1) return;
      if (this.#over) this.#overflowed();
      start = nl + 1;
    }
  }

  #deliver(line: string): void {
    const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (trimmed.trim().length > 0) this.#onLine(trimmed);
  }

  #overflowed(): void {
    const { size, head, tail } = this.#over!;
    this.#over = undefined;
    const cr = tail.endsWith('\r');
    this.#onOverflow(cr ? size - 1 : size, head, cr ? tail.slice(0, -1) : tail);
  }

  /** What is left after the stream ended (an unterminated last line), delivered if non-empty. */
  end(): void {
    this.#take(this.#decoded(this.#decoder.end()));
    if (this.#over) return this.#overflowed();
    const rest = this.#partial;
    this.#partial = '';
    this.#deliver(rest);
  }
}

/** One message as one line. JSON.stringify never emits a raw newline, so the framing is safe. */
export function frame(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
