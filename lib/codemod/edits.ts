/**
 * Text edits at node positions: what the codemod changes is spliced into the original text, so
 * everything it does not touch (formatting, comments, blank lines) stays byte for byte. Also the
 * small layout helpers edits need: line starts, indentation, whole-statement ranges.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';

/** Replace `[start, end)` with `text` (an insertion when `start === end`). */
export interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/**
 * Applies non-overlapping edits. Insertions at the same position keep their order; an insertion
 * at the start of a replaced range goes before the replacement. Overlaps are a programming error.
 */
export function applyEdits(text: string, edits: readonly Edit[]): string {
  const insertion = (e: Edit) => (e.start === e.end ? 0 : 1);
  const sorted = edits.map((e, i) => ({ e, i })).sort((a, b) => a.e.start - b.e.start || insertion(a.e) - insertion(b.e) || a.i - b.i);
  let out = '';
  let at = 0;
  for (const { e } of sorted) {
    if (e.start < at) throw new Error(`overlapping edits at ${e.start}`);
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

/** The position of the start of the line holding `pos`. */
export function lineStart(text: string, pos: number): number {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

/** The position just after the end of the line holding `pos` (after its newline, if any). */
export function lineEnd(text: string, pos: number): number {
  const n = text.indexOf('\n', pos);
  return n === -1 ? text.length : n + 1;
}

/** The whitespace that starts the line holding `pos`. */
export function indentAt(text: string, pos: number): string {
  const start = lineStart(text, pos);
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** One level of indentation as the file writes it (tabs, or the smallest step of spaces; default 2). */
export function indentUnit(text: string): string {
  if (/^\t/m.test(text)) return '\t';
  let unit = 0;
  for (const m of text.matchAll(/^( +)\S/gm)) {
    const n = m[1]!.length;
    if (n >= 2 && (unit === 0 || n < unit)) unit = n;
  }
  return ' '.repeat(unit === 0 || unit > 8 ? 2 : unit);
}

/** The quote the file writes strings with (the more frequent of ' and "; default '). */
export function quoteOf(text: string): string {
  return (text.match(/"/g) ?? []).length > (text.match(/'/g) ?? []).length ? '"' : "'";
}

/** The newline the file uses. */
export function newlineOf(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/**
 * The whole lines of a statement: from the start of the line of its first leading comment
 * (comments directly above it belong to it) to the end of its last line.
 */
export function statementLines(sf: TS.SourceFile, node: TS.Node): { start: number; end: number } {
  const text = sf.text;
  const comments = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  // Only comments that are directly above (no blank line between them and the statement).
  let first = node.getStart(sf);
  for (let i = comments.length - 1; i >= 0; i--) {
    const c = comments[i]!;
    const between = text.slice(c.end, first);
    if ((between.match(/\n/g) ?? []).length > 1) break;
    first = c.pos;
  }
  const start = lineStart(text, first);
  return { start: /^[ \t]*$/.test(text.slice(start, first)) ? start : first, end: lineEnd(text, node.getEnd()) };
}

/**
 * Edits that remove statements with their whole lines. Statements next to each other go as one
 * block, and a block between two blank lines takes one of them along.
 */
export function removeStatements(sf: TS.SourceFile, nodes: readonly TS.Node[]): Edit[] {
  const text = sf.text;
  const ranges = nodes.map((n) => statementLines(sf, n)).sort((a, b) => a.start - b.start);
  const merged: Array<{ start: number; end: number }> = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else merged.push({ ...r });
  }
  const blank = (from: number) => from < text.length && /^[ \t]*\r?$/.test(text.slice(from, lineEnd(text, from)).replace(/\n$/, ''));
  return merged.map(({ start, end }) => {
    const surrounded = blank(end) && (start === 0 || blank(lineStart(text, start - 1)));
    return { start, end: surrounded ? lineEnd(text, end) : end, text: '' };
  });
}

/** The comment lines directly above a node (their text), for finding markers already in place. */
export function commentsAbove(sf: TS.SourceFile, node: TS.Node): string[] {
  const text = sf.text;
  return (ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []).map((c) => text.slice(c.pos, c.end));
}
