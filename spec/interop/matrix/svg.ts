/**
 * The picture of the matrix (docs/matrix.svg), written by hand as SVG text: client eras down, server
 * eras across, in each cell one line per route with a badge per transport (green: every operation
 * passes; grey: refused without a wrap, as expected; amber: only known gaps; red: a failure).
 */
import { CLIENT_ERAS, SERVER_ERAS, TRANSPORTS, type Route } from './cells.ts';
import { ERA_LABEL, TRANSPORT_LABEL, totals, type Verdict } from './report.ts';
import { OPS } from './script.ts';
import type { TransportKind } from './servers.ts';

const COLOURS = { pass: '#1b7f3b', refused: '#6b6b6b', known: '#a15c00', fail: '#b3261e' } as const;
const FILLS = { pass: '#eaf5ec', fail: '#fbe9e7' } as const;
type Standing = keyof typeof COLOURS;

const ROUTE_SHORT: Record<Route, string> = {
  native: 'native',
  wrapLegacyServer: 'server wrap: wrapLegacyServer',
  wrapModernServer: 'server wrap: wrapModernServer',
  wrapModernClient: 'client wrap: wrapModernClient',
  wrapLegacyClient: 'client wrap: wrapLegacyClient',
};

const HEAD_W = 130;
const CELL_W = 420;
const LINE_H = 26;
const PAD = 12;
const BADGE_W = 86;
const TITLE_H = 44;
const HEADER_H = 34;
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

function standing(v: Verdict): Standing {
  const r = v.result;
  if (r.variant.expect === 'refused') return r.ok ? 'refused' : 'fail';
  if (v.unexpected.length > 0) return 'fail';
  return v.known.length > 0 ? 'known' : 'pass';
}

function label(v: Verdict): string {
  const { variant } = v.result;
  const base = variant.expect === 'refused' ? 'alone' : ROUTE_SHORT[variant.route];
  return variant.stateless ? `  ${base}` : base;
}

const STATELESS_HEADING = "on createMcpHandler's default (stateless legacy):";

/** The lines of a cell: one per route, the stateless-server variants under a heading of their own. */
function linesOf(vs: readonly Verdict[]): string[] {
  const lines: string[] = [];
  for (const v of vs) {
    if (v.result.variant.stateless && !lines.includes(STATELESS_HEADING)) lines.push(STATELESS_HEADING);
    if (!lines.includes(label(v))) lines.push(label(v));
  }
  return lines;
}

function badge(x: number, y: number, transport: TransportKind, v: Verdict): string {
  const s = standing(v);
  const r = v.result;
  const passed = r.ops.filter((o) => o.ok).length;
  const text =
    s === 'refused'
      ? `${TRANSPORT_LABEL[transport]} refused`
      : s === 'pass'
        ? `${TRANSPORT_LABEL[transport]} ✓`
        : `${TRANSPORT_LABEL[transport]} ${passed}/${OPS.length}`;
  const tip = r.variant.expect === 'refused' ? (r.ops[0]?.detail ?? '') : `${passed} of ${OPS.length} operations pass`;
  return (
    `<g><title>${esc(`${r.id}: ${tip}`)}</title>` +
    `<rect x="${x}" y="${y}" width="${BADGE_W}" height="18" rx="9" fill="${COLOURS[s]}"/>` +
    `<text x="${x + BADGE_W / 2}" y="${y + 13}" text-anchor="middle" font-size="11" fill="#fff" ${FONT}>${esc(text)}</text></g>`
  );
}

/** The SVG document for `verdicts`. */
export function svg(verdicts: readonly Verdict[]): string {
  const cell = (client: string, server: string) =>
    verdicts.filter((v) => v.result.variant.client === client && v.result.variant.server === server);
  const rowHeights = CLIENT_ERAS.map(
    (client) => Math.max(...SERVER_ERAS.map((server) => linesOf(cell(client, server)).length)) * LINE_H + 2 * PAD - 8,
  );
  const width = HEAD_W + SERVER_ERAS.length * CELL_W;
  const gridH = HEADER_H + rowHeights.reduce((a, b) => a + b, 0);
  const height = TITLE_H + gridH + 64;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`);
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(
    `<text x="${PAD}" y="28" font-size="17" font-weight="bold" fill="#222" ${FONT}>mcp-dual-era: client era × server era, over stdio and Streamable HTTP</text>`,
  );
  const top = TITLE_H;
  out.push(`<text x="${PAD}" y="${top + 22}" font-size="12" fill="#555" ${FONT}>client \\ server</text>`);
  SERVER_ERAS.forEach((server, i) => {
    out.push(
      `<text x="${HEAD_W + i * CELL_W + CELL_W / 2}" y="${top + 22}" text-anchor="middle" font-size="14" font-weight="bold" fill="#222" ${FONT}>${ERA_LABEL[server]}</text>`,
    );
  });
  let y = top + HEADER_H;
  CLIENT_ERAS.forEach((client, row) => {
    const h = rowHeights[row]!;
    out.push(`<text x="${PAD}" y="${y + h / 2 + 5}" font-size="14" font-weight="bold" fill="#222" ${FONT}>${ERA_LABEL[client]}</text>`);
    SERVER_ERAS.forEach((server, col) => {
      const x = HEAD_W + col * CELL_W;
      const vs = cell(client, server);
      const fill = vs.some((v) => standing(v) === 'fail') ? FILLS.fail : FILLS.pass;
      out.push(`<rect x="${x + 3}" y="${y + 3}" width="${CELL_W - 6}" height="${h - 6}" rx="6" fill="${fill}" stroke="#d0d0d0"/>`);
      linesOf(vs).forEach((name, line) => {
        const ly = y + PAD + line * LINE_H;
        const indent = name.startsWith('  ') ? 14 : 0;
        const style = name === STATELESS_HEADING ? 'font-style="italic" fill="#555"' : 'fill="#222"';
        out.push(`<text x="${x + PAD + indent}" y="${ly + 13}" font-size="12" ${style} ${FONT}>${esc(name.trim())}</text>`);
        TRANSPORTS.forEach((transport, t) => {
          const v = vs.find((c) => label(c) === name && c.result.variant.transport === transport);
          if (v) out.push(badge(x + CELL_W - PAD - (TRANSPORTS.length - t) * (BADGE_W + 6) + 6, ly, transport, v));
        });
      });
    });
    y += h;
  });
  const legendY = top + gridH + 22;
  const legend: Array<[Standing, string]> = [
    ['pass', `every operation of the script (${OPS.length}) passes`],
    ['refused', 'refused without a wrap, as expected'],
    ['known', 'known gaps of that server setup'],
    ['fail', 'failure'],
  ];
  let lx = PAD;
  for (const [s, text] of legend) {
    out.push(`<rect x="${lx}" y="${legendY - 11}" width="14" height="14" rx="7" fill="${COLOURS[s]}"/>`);
    out.push(`<text x="${lx + 20}" y="${legendY}" font-size="12" fill="#444" ${FONT}>${esc(text)}</text>`);
    lx += 40 + text.length * 6.2;
  }
  out.push(`<text x="${PAD}" y="${legendY + 24}" font-size="12" fill="#444" ${FONT}>${esc(totals(verdicts))}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
