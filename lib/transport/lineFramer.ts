/**
 * Newline-delimited JSON framing (MCP stdio, both eras): splits a byte stream into lines without
 * holding more than a bounded partial line, and serialises messages one per line.
 */

/** Feeds chunks in, calls `onLine` for each complete line (without the newline, `\r` trimmed). */
export class LineFramer {
  #partial = '';
  readonly #decoder = new TextDecoder('utf-8');
  readonly #maxLine: number;
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: (size: number) => void;

  constructor(onLine: (line: string) => void, options: { maxLineBytes?: number; onOverflow?: (size: number) => void } = {}) {
    this.#onLine = onLine;
    this.#maxLine = options.maxLineBytes ?? 64 * 1024 * 1024;
    this.#onOverflow = options.onOverflow ?? (() => {});
  }

  push(chunk: Uint8Array | string): void {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl = text.indexOf('\n');
    if (nl === -1) {
      this.#partial += text;
      if (this.#partial.length > this.#maxLine) {
        this.#onOverflow(this.#partial.length);
        this.#partial = '';
      }
      return;
    }
    let line = this.#partial + text.slice(0, nl);
    this.#partial = '';
    for (;;) {
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.trim().length > 0) this.#onLine(line);
      start = nl + 1;
      nl = text.indexOf('\n', start);
      if (nl === -1) break;
      line = text.slice(start, nl);
    }
    this.#partial = text.slice(start);
  }

  /** What is left after the stream ended (an unterminated last line), delivered if non-empty. */
  end(): void {
    const rest = this.#partial + this.#decoder.decode();
    this.#partial = '';
    if (rest.trim().length > 0) this.#onLine(rest.endsWith('\r') ? rest.slice(0, -1) : rest);
  }
}

/** One message as one line. JSON.stringify never emits a raw newline, so the framing is safe. */
export function frame(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
