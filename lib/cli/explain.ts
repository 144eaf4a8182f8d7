/**
 * `mcp-dual-era explain <transcript>`: a recorded exchange (JSONL of JSON-RPC messages, either era)
 * side by side with what the other era carries in its place, and why. Colour on a terminal, plain
 * when piped; `--json` for scripts.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { EXPLAIN_USAGE } from './explainUsage.ts';
import { usageError } from './options.ts';
import type { ExplainedMessage } from './explainedMessage.ts';
import { explainTranscript } from './transcript.ts';
import { isRecord } from '../core/primitives.ts';

/** Reads a JSONL transcript; a line that is not JSON is an error naming it. */
export function readTranscript(text: string, name: string): unknown[] {
  const out: unknown[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('//')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new Error(`${name}:${i + 1}: not JSON (${e instanceof Error ? e.message : String(e)})`);
    }
    const wrapped = isRecord(value) && 'message' in value && !('jsonrpc' in value);
    out.push(wrapped ? (value as { message: unknown }).message : value);
  }
  return out;
}

/** Splits text into pieces of at most `width` characters. */
function chunks(text: string, width: number): string[] {
  if (width <= 0) return [text];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += width) out.push(text.slice(i, i + width));
  return out.length > 0 ? out : [''];
}

/** The side-by-side view of an explanation. */
export function renderExplanation(explained: readonly ExplainedMessage[], options: { width: number; colour: boolean }): string {
  const paint = (code: number, text: string) => (options.colour ? `\x1b[${code}m${text}\x1b[0m` : text);
  const gutter = 6;
  const column = Math.max(24, Math.floor((options.width - gutter - 3) / 2));
  const from = explained[0]?.era ?? 'legacy';
  const to = from === 'legacy' ? 'modern' : 'legacy';
  const lines: string[] = [];
  const pad = (text: string) => text + ' '.repeat(Math.max(0, column - text.length));
  lines.push(`${' '.repeat(gutter)}${paint(1, pad(`${from} (as recorded)`))} │ ${paint(1, `${to} (through mcp-dual-era)`)}`);
  for (const [i, e] of explained.entries()) {
    const arrow = e.from === 'client' ? 'client → server' : 'server → client';
    lines.push('');
    lines.push(`${paint(2, String(i + 1).padStart(4))}  ${paint(e.from === 'client' ? 33 : 36, arrow)}`);
    const left = chunks(JSON.stringify(e.message), column);
    const right =
      e.becomes.length === 0
        ? [paint(2, '(nothing)')]
        : e.becomes.flatMap((m, j) => [...(j > 0 ? [''] : []), ...chunks(JSON.stringify(m), column)]);
    const rows = Math.max(left.length, right.length);
    for (let r = 0; r < rows; r++) {
      const l = left[r] ?? '';
      lines.push(`${' '.repeat(gutter)}${pad(l)} │ ${right[r] ?? ''}`);
    }
    lines.push(`${' '.repeat(gutter)}${paint(2, `↳ ${e.note}`)}`);
    if (e.problem) lines.push(`${' '.repeat(gutter)}${paint(31, `! ${e.problem}`)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Runs the explain command. */
export async function explain(argv: readonly string[]): Promise<number> {
  const usage = usageError('explain');
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        to: { type: 'string' },
        width: { type: 'string' },
        json: { type: 'boolean' },
        'no-color': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(EXPLAIN_USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    return usage('name one transcript file (or - for standard input)');
  }
  if (values.to !== undefined && values.to !== 'legacy' && values.to !== 'modern') {
    return usage(`--to is legacy or modern, not ${values.to}`);
  }
  const file = positionals[0]!;
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    return usage(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let messages: unknown[];
  try {
    messages = readTranscript(text, file);
  } catch (e) {
    return usage(e instanceof Error ? e.message : String(e));
  }
  const era = values.to === undefined ? undefined : values.to === 'modern' ? 'legacy' : 'modern';
  const explained = explainTranscript(messages, era ? { era } : {});
  if (values.json) {
    process.stdout.write(`${JSON.stringify(explained, null, 2)}\n`);
    return 0;
  }
  const colour = process.stdout.isTTY === true && !values['no-color'] && !process.env['NO_COLOR'];
  const width = values.width ? Number(values.width) : (process.stdout.columns ?? 160);
  if (!Number.isInteger(width) || width < 40) {
    return usage('--width must be a whole number of at least 40');
  }
  process.stdout.write(renderExplanation(explained, { width, colour }));
  return 0;
}
