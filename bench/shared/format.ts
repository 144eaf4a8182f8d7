/**
 * How the benches show and keep what they measured: number formats (µs, ms, KB, ratios), the
 * console table every bench prints, the opening line naming the machine, and the report files
 * (bench/results/*.json, RESULTS.md), written whole. Not the statistics (bench/shared/stats.ts) nor
 * RESULTS.md's sections (bench/report/markdown.ts).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

/** Where the benches leave their reports (git-ignored), one JSON file each. */
export const RESULTS_DIR = join(import.meta.dirname, '..', 'results');

/** Whole numbers with thousands separators. */
export const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
/** One decimal, always shown. */
export const fixed1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** Microseconds: `534 µs`, `3,472 µs`, from 10 ms on `11.6 ms`; `–` when not a number. */
export const us = (v: number): string => (!Number.isFinite(v) ? '–' : v >= 10_000 ? `${(v / 1000).toFixed(1)} ms` : `${int.format(v)} µs`);
/** Milliseconds without the unit, digits by size: `361`, `5.5`, `0.049`, `5.2e-3`. */
export const ms = (v: number): string =>
  !Number.isFinite(v) ? '–' : v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v >= 0.01 ? v.toFixed(3) : v.toExponential(1);
/** Bytes as KB with two decimals; `–` when unknown. */
export const kb = (bytes: number | undefined): string =>
  bytes === undefined || !Number.isFinite(bytes) ? '–' : `${(bytes / 1024).toFixed(2)} KB`;
/** A share as a whole percentage. */
export const pct = (v: number): string => `${Math.round(v * 100)}%`;
/** A signed difference in microseconds: `+69 µs`, `−12 µs`. */
export const signedUs = (v: number): string => `${v >= 0 ? '+' : '−'}${int.format(Math.abs(v))} µs`;

/** A ratio: 3 significant digits, scientific below 0.001; `–` when not a number. */
export function formatRatio(x: number): string {
  if (!Number.isFinite(x)) return '–';
  if (x === 0) return '0×';
  if (x < 0.001) return `${x.toExponential(1)}×`;
  if (x < 0.1) return `${x.toPrecision(2)}×`;
  if (x < 10) return `${x.toFixed(2)}×`;
  if (x < 100) return `${x.toFixed(1)}×`;
  return `${x.toFixed(0)}×`;
}

/** How a console table lines up: its first `left` columns to the left, the rest to the right; a blank line where column `groupBy` changes. */
export interface TableLayout {
  readonly left?: number;
  readonly groupBy?: number;
}

/** A console table: a head, a rule, the rows, columns padded to their widest cell. */
export function consoleTable(head: readonly string[], rows: ReadonlyArray<readonly string[]>, layout: TableLayout = {}): string {
  const left = layout.left ?? 1;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  ')];
  let last: string | undefined;
  for (const r of rows) {
    const group = layout.groupBy === undefined ? undefined : r[layout.groupBy];
    if (last !== undefined && group !== last) out.push('');
    last = group;
    out.push(line(r));
  }
  return out.join('\n');
}

/** A Markdown table (RESULTS.md, the README); the columns in `right` aligned right. */
export function markdownTable(
  head: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  right: ReadonlySet<number> = new Set(),
): string {
  const align = head.map((_, i) => (right.has(i) ? '---:' : '---'));
  return [head, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

/** The machine as the reports record it. */
export function environment(): { node: string; platform: string; arch: string; cpus: number; cpuModel: string | null } {
  const list = cpus();
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? null,
  };
}

/** The opening line of a bench: what it is and the machine it runs on. */
export function banner(name: string): string {
  const e = environment();
  return `mcp-dual-era ${name} — node ${e.node}, ${e.platform}/${e.arch}, ${e.cpus} × ${e.cpuModel ?? 'unknown CPU'}`;
}

/** Writes `text` to `file` through a temporary file renamed into place, so a reader never sees half of it. */
export function writeAtomic(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** Writes `report` as bench/results/`name` and prints where; returns the path. */
export function writeResults(name: string, report: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, name);
  writeAtomic(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results written to ${join('bench', 'results', name)}`);
  return file;
}
