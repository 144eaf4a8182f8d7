/**
 * The codemod's report for people and for scripts: unified diffs of what changes (dry run), a
 * summary table (file, rewrites, markers), each marker with its line, and each file left as it
 * was with the reason. Paths are shown relative to a base directory.
 */
import { relative } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { MigrateReport } from './migrate.ts';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The report as text: diffs (dry run only), the table, markers, notes and errors. */
export function renderReport(report: MigrateReport, base: string): string {
  const shown = (path: string) => relative(base, path) || path;
  const out: string[] = [];
  const changed = report.files.filter((f) => f.changed);
  if (!report.write) {
    for (const f of changed)
      out.push(createTwoFilesPatch(`a/${shown(f.path)}`, `b/${shown(f.path)}`, f.before, f.after).replace(/^=+\n/, ''));
  }
  const rows = report.files.filter((f) => f.changed || f.markers.length > 0 || f.error);
  const header = `mcp-dual-era migrate --mode ${report.mode}${report.write ? '' : ' (dry run)'}`;
  out.push(header);
  if (rows.length === 0) {
    out.push(`${plural(report.files.length, 'file')} looked at; nothing to change.`);
    return `${out.join('\n')}\n`;
  }
  const width = Math.max(4, ...rows.map((f) => shown(f.path).length));
  out.push('');
  out.push(`${'file'.padEnd(width)}  rewrites  markers  status`);
  for (const f of rows) {
    const status = f.error ? 'left as it was' : f.changed ? (report.write ? 'written' : 'would change') : 'unchanged';
    const markers =
      f.markersAdded > 0 && f.markersAdded !== f.markers.length ? `${f.markers.length} (${f.markersAdded} new)` : String(f.markers.length);
    out.push(`${shown(f.path).padEnd(width)}  ${String(f.rewrites.length).padStart(8)}  ${markers.padStart(7)}  ${status}`);
  }
  const rewrites = rows.reduce((n, f) => n + f.rewrites.length, 0);
  const markers = rows.reduce((n, f) => n + f.markers.length, 0);
  const errors = rows.filter((f) => f.error);
  out.push('');
  out.push(
    `${plural(report.files.length, 'file')} looked at; ${plural(changed.length, 'file')} ${report.write ? 'written' : 'to change'}, ${plural(rewrites, 'rewrite')}, ${plural(markers, 'marker')}` +
      `${errors.length > 0 ? `, ${plural(errors.length, 'file')} left as ${errors.length === 1 ? 'it was' : 'they were'}` : ''}.` +
      (report.write || changed.length === 0 ? '' : ' Nothing written: run again with --write to apply.'),
  );
  const rewritten = rows.filter((f) => f.rewrites.length > 0);
  if (rewritten.length > 0) {
    out.push('', 'Rewrites:');
    for (const f of rewritten) for (const r of f.rewrites) out.push(`  ${shown(f.path)}:${r.line}  ${r.what}`);
  }
  const marked = rows.filter((f) => f.markers.length > 0);
  if (marked.length > 0) {
    out.push('', `Markers (grep '@mcp-dual-era'; lines of the ${report.write ? 'written' : 'rewritten'} files):`);
    for (const f of marked) for (const m of f.markers) out.push(`  ${shown(f.path)}:${m.line}  ${m.code}  ${m.message}`);
  }
  const notes = report.files.filter((f) => f.note);
  if (notes.length > 0) {
    out.push('', 'Notes:');
    for (const f of notes) out.push(`  ${shown(f.path)}: ${f.note}`);
  }
  if (errors.length > 0) {
    out.push('', 'Left as they were:');
    for (const f of errors) out.push(`  ${shown(f.path)}: ${f.error}`);
  }
  return `${out.join('\n')}\n`;
}

/** The report as JSON for scripts (no file contents). */
export function reportJson(report: MigrateReport, base: string): unknown {
  return {
    mode: report.mode,
    write: report.write,
    files: report.files.map((f) => ({
      file: relative(base, f.path) || f.path,
      changed: f.changed,
      rewrites: f.rewrites,
      markers: f.markers,
      markersAdded: f.markersAdded,
      ...(f.error ? { error: f.error } : {}),
      ...(f.note ? { note: f.note } : {}),
    })),
  };
}
