/**
 * The chart of bench/RESULTS.md: one horizontal bar per headline ratio, grouped by section, each
 * section on its own log scale with bars drawn from 1×, each goal a mark on its row. Plain SVG
 * text, no dependencies; the same figures give the same bytes.
 */
import { formatRatio } from '../shared/format.ts';
import { goalHolds, SECTIONS, type Figure } from './figures.ts';

const WIDTH = 980;
const LABEL_X = 16;
const PLOT_X0 = 360;
const PLOT_X1 = 880;
const ROW = 22;
const SECTION_HEAD = 22;
const SECTION_GAP = 10;
const TOP = 70;
const COLORS = {
  met: '#2e7d32',
  missed: '#c62828',
  none: '#5c6f82',
  goal: '#111111',
  grid: '#d9dde3',
  one: '#7a8591',
  text: '#1f2328',
  muted: '#57606a',
};

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** An axis label for 10^d: 100×, 1×, 0.01×, 1e-5×. */
function decade(d: number): string {
  if (d >= 0) return `${10 ** d}×`;
  return d >= -3 ? `${(10 ** d).toFixed(-d)}×` : `1e${d}×`;
}

export interface ChartOptions {
  readonly title: string;
  readonly subtitle: string;
}

/** Whole decades around 1× and every value and goal of a section, at least two, at most 1e-6 … 1e4. */
function decadesOf(figures: readonly Figure[]): { lo: number; hi: number } {
  const values = [1, ...figures.map((f) => f.value), ...figures.flatMap((f) => (f.goal ? [f.goal.value] : []))];
  let lo = Math.max(-6, Math.floor(Math.log10(Math.min(...values)) + 1e-9));
  let hi = Math.min(4, Math.ceil(Math.log10(Math.max(...values)) - 1e-9));
  if (hi - lo < 2) {
    if (hi < 4) hi++;
    if (hi - lo < 2) lo--;
  }
  return { lo, hi };
}

/** The SVG document for `figures`: each section on its own log scale, so that no section squeezes another. */
export function renderChart(figures: readonly Figure[], options: ChartOptions): string {
  const finite = figures.filter((f) => Number.isFinite(f.value) && f.value > 0);
  const sections = SECTIONS.filter((s) => finite.some((f) => f.section === s));
  const height = TOP + sections.length * (SECTION_HEAD + SECTION_GAP) + finite.length * ROW + 12;
  const out: string[] = [];
  const n = (v: number) => (Math.round(v * 10) / 10).toString();
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${LABEL_X}" y="24" font-size="15" font-weight="600" fill="${COLORS.text}">${escapeXml(options.title)}</text>`);
  out.push(`<text x="${LABEL_X}" y="42" fill="${COLORS.muted}">${escapeXml(options.subtitle)}</text>`);
  const legend: Array<[string, string]> = [
    [COLORS.met, 'goal met'],
    [COLORS.missed, 'goal missed'],
    [COLORS.none, 'no goal'],
  ];
  let lx = LABEL_X;
  for (const [color, text] of legend) {
    out.push(
      `<rect x="${lx}" y="52" width="12" height="10" fill="${color}"/><text x="${lx + 16}" y="61" fill="${COLORS.muted}">${text}</text>`,
    );
    lx += 30 + text.length * 6.5;
  }
  out.push(
    `<line x1="${lx}" y1="50" x2="${lx}" y2="64" stroke="${COLORS.goal}" stroke-width="2"/><text x="${lx + 6}" y="61" fill="${COLORS.muted}">goal</text>`,
  );
  out.push(`<text x="${lx + 46}" y="61" fill="${COLORS.muted}">↑ higher is better, ↓ lower is better; log scales, bars from 1×</text>`);

  let y = TOP;
  for (const section of sections) {
    const rows = finite.filter((g) => g.section === section);
    const { lo, hi } = decadesOf(rows);
    const x = (v: number) => PLOT_X0 + ((Math.log10(Math.min(Math.max(v, 10 ** lo), 10 ** hi)) - lo) / (hi - lo)) * (PLOT_X1 - PLOT_X0);
    y += SECTION_GAP;
    out.push(`<text x="${LABEL_X}" y="${y + 14}" font-weight="600" fill="${COLORS.text}">${escapeXml(section)}</text>`);
    const top = y + SECTION_HEAD - 2;
    const bottom = top + rows.length * ROW + 2;
    for (let d = lo; d <= hi; d++) {
      const gx = n(x(10 ** d));
      out.push(`<text x="${gx}" y="${y + 14}" text-anchor="middle" fill="${COLORS.muted}">${decade(d)}</text>`);
      out.push(
        `<line x1="${gx}" y1="${top}" x2="${gx}" y2="${bottom}" stroke="${d === 0 ? COLORS.one : COLORS.grid}" stroke-width="${d === 0 ? 1.5 : 1}"/>`,
      );
    }
    y += SECTION_HEAD;
    for (const f of rows) {
      const holds = goalHolds(f);
      const color = holds === undefined ? COLORS.none : holds ? COLORS.met : COLORS.missed;
      const a = x(1);
      const b = x(f.value);
      const mid = y + ROW / 2;
      out.push(
        `<text x="${LABEL_X + 8}" y="${n(mid + 4)}" fill="${COLORS.text}">${escapeXml(`${f.label} ${f.better === 'higher' ? '↑' : '↓'}`)}</text>`,
      );
      out.push(
        `<rect x="${n(Math.min(a, b))}" y="${n(y + 4)}" width="${n(Math.max(1.5, Math.abs(b - a)))}" height="${ROW - 8}" fill="${color}"><title>${escapeXml(`${f.label}: ${formatRatio(f.value)}${f.goal ? ` (goal ${f.goal.op} ${formatRatio(f.goal.value)})` : ''}`)}</title></rect>`,
      );
      if (f.goal) {
        const gx = n(x(f.goal.value));
        out.push(`<line x1="${gx}" y1="${n(y + 1)}" x2="${gx}" y2="${n(y + ROW - 1)}" stroke="${COLORS.goal}" stroke-width="2"/>`);
      }
      out.push(`<text x="${PLOT_X1 + 12}" y="${n(mid + 4)}" fill="${COLORS.text}">${escapeXml(formatRatio(f.value))}</text>`);
      y += ROW;
    }
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
