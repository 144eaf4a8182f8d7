/**
 * The matrix report: judges results against the baseline of known gaps, and renders the Markdown
 * page (docs/matrix.md), the grid summary the README embeds, and the picture (svg.ts). Pure: text
 * in, text out; nothing in the output depends on the clock, so a run that changes nothing leaves
 * the files as they were.
 */
import { CLIENT_ERAS, SERVER_ERAS, TRANSPORTS, type Route, type Variant } from './cells.ts';
import type { ClientEra } from './clients.ts';
import type { VariantResult } from './run.ts';
import { OPS, type OpId } from './script.ts';
import type { ServerEra, TransportKind } from './servers.ts';

/** Known gaps: variant id → operation → why it cannot pass. */
export type Baseline = Record<string, Partial<Record<OpId, string>>>;

export const ERA_LABEL: Record<ClientEra | ServerEra, string> = { modern: 'modern-only', dual: 'dual-era', legacy: 'legacy' };
export const TRANSPORT_LABEL: Record<TransportKind, string> = { stdio: 'stdio', http: 'HTTP' };
const ROUTE_LABEL: Record<Route, string> = {
  native: 'native',
  wrapLegacyServer: 'wrap the server: `wrapLegacyServer`',
  wrapModernServer: 'wrap the server: `wrapModernServer`',
  wrapModernClient: 'wrap the client: `wrapModernClient`',
  wrapLegacyClient: 'wrap the client: `wrapLegacyClient`',
};

/** How a variant is named in a cell: its route, or the unwrapped attempt. */
export function routeLabel(v: Pick<Variant, 'route' | 'expect'>): string {
  return v.expect === 'refused' ? 'alone' : ROUTE_LABEL[v.route];
}

export const STATELESS_SETUP = "on `createMcpHandler`'s default (stateless legacy)";

/** The server column of a variant: its era, and the setup when it is not the fixture's own. */
function serverLabel(v: Pick<Variant, 'server' | 'stateless'>): string {
  return v.stateless ? `${ERA_LABEL[v.server]}, ${STATELESS_SETUP}` : ERA_LABEL[v.server];
}

/** A variant's standing: it did what it must, its failures are all known gaps, or it failed. */
export interface Verdict {
  readonly result: VariantResult;
  /** Operations that failed without a baseline entry. */
  readonly unexpected: readonly OpId[];
  /** Operations that failed as the baseline says, with its reason. */
  readonly known: ReadonlyArray<{ op: OpId; reason: string }>;
  /** Baseline entries for operations that now pass. */
  readonly stale: readonly OpId[];
}

export function judge(result: VariantResult, baseline: Baseline): Verdict {
  const entry = baseline[result.id] ?? {};
  const unexpected: OpId[] = [];
  const known: Array<{ op: OpId; reason: string }> = [];
  if (result.variant.expect === 'refused') {
    if (!result.ok) unexpected.push('connect');
  } else {
    for (const { id } of OPS) {
      const op = result.ops.find((o) => o.op === id);
      const reason = entry[id];
      if (op?.ok) continue;
      if (reason !== undefined) known.push({ op: id, reason });
      else unexpected.push(id);
    }
  }
  const stale = (Object.keys(entry) as OpId[]).filter((id) => result.ops.find((o) => o.op === id)?.ok === true);
  return { result, unexpected, known, stale };
}

/** Baseline entries naming variants that did not run in a full run. */
export function orphans(baseline: Baseline, results: readonly VariantResult[]): string[] {
  return Object.keys(baseline).filter((id) => !results.some((r) => r.id === id));
}

const passed = (r: VariantResult) => r.ops.filter((o) => o.ok).length;

/** `✓ 11/11`, `5/11 (known gaps)`, `✗ 5/11`, or `refused` for a variant. */
function mark(v: Verdict): string {
  const r = v.result;
  if (r.variant.expect === 'refused') return r.ok ? 'refused' : '✗ connected';
  if (!r.ok && v.unexpected.length === 0) return `${passed(r)}/${OPS.length} (known gaps)`;
  return `${r.ok ? '✓' : '✗'} ${passed(r)}/${OPS.length}`;
}

/** The lines of one cell: one per route with its result per transport, the stateless-setup variants under a heading. */
function cellLines(verdicts: readonly Verdict[], client: ClientEra, server: ServerEra): string[] {
  const rows: Array<{ label: string; byTransport: Map<TransportKind, Verdict> }> = [];
  for (const v of verdicts) {
    const { variant } = v.result;
    if (variant.client !== client || variant.server !== server) continue;
    const label = variant.stateless ? `${STATELESS_SETUP}:<br>${routeLabel(variant)}` : routeLabel(variant);
    let row = rows.find((x) => x.label === label);
    if (!row) rows.push((row = { label, byTransport: new Map() }));
    row.byTransport.set(variant.transport, v);
  }
  let headed = false;
  return rows.map(({ label, byTransport }) => {
    const results = TRANSPORTS.filter((t) => byTransport.has(t))
      .map((t) => `${TRANSPORT_LABEL[t]} ${mark(byTransport.get(t)!)}`)
      .join(' · ');
    const shown = label.startsWith(STATELESS_SETUP) && headed ? label.slice(STATELESS_SETUP.length + 5) : label;
    if (label.startsWith(STATELESS_SETUP)) headed = true;
    return `${shown}: ${results}`;
  });
}

/** The grid: rows client era, columns server era; each cell one line per route with its result per transport. */
export function summaryTable(verdicts: readonly Verdict[]): string {
  const lines = ['| client \\ server | modern-only | dual-era | legacy |', '|---|---|---|---|'];
  for (const client of CLIENT_ERAS) {
    const cells = SERVER_ERAS.map((server) => cellLines(verdicts, client, server).join('<br>'));
    lines.push(`| **${ERA_LABEL[client]}** | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** One line on the whole run. */
export function totals(verdicts: readonly Verdict[]): string {
  const cells = new Set(verdicts.map((v) => `${v.result.variant.client}×${v.result.variant.server}/${v.result.variant.transport}`)).size;
  const scripted = verdicts.filter((v) => v.result.variant.expect === 'pass');
  const ops = scripted.reduce((n, v) => n + v.result.ops.length, 0);
  const ok = scripted.reduce((n, v) => n + passed(v.result), 0);
  const refused = verdicts.filter((v) => v.result.variant.expect === 'refused');
  const known = verdicts.reduce((n, v) => n + v.known.length, 0);
  const unexpected = verdicts.reduce((n, v) => n + v.unexpected.length, 0);
  return (
    `${cells} cells, ${scripted.length} scripted variants: ${ok} of ${ops} operations pass` +
    (known ? ` (the other ${known}: known gaps of one server setup, in the baseline)` : '') +
    `; ${refused.filter((v) => v.result.ok).length} of ${refused.length} unwrapped attempts refused as expected` +
    (unexpected ? `; ${unexpected} unexpected failures` : '')
  );
}

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/** docs/matrix.md. */
export function markdown(verdicts: readonly Verdict[], svgName: string): string {
  const out: string[] = [];
  out.push('# The compatibility matrix', '');
  out.push(
    '`npm run matrix` runs every cell of the era matrix — client era × server era, over stdio (real child processes) and over Streamable HTTP (loopback sockets) — with real SDK peers on both sides, through one fixed script of operations, and writes this page and the picture below. Where the eras cannot meet on their own, each remedy mcp-dual-era offers runs as its own variant, after the unwrapped attempt that is refused.',
    '',
  );
  out.push(
    "- **Clients.** modern-only: `@modelcontextprotocol/client` 2.4.0 pinned to 2026-07-28; dual-era: the same client with `versionNegotiation: { mode: 'auto' }`; legacy: `@modelcontextprotocol/sdk` 1.32.2. Each declares elicitation, sampling and roots and answers them with its own handlers.",
  );
  out.push(
    "- **Servers**, one fixture per era with the same operations: modern-only: `@modelcontextprotocol/server` 2.4.0 with `legacy: 'reject'` (`fixtures/servers/modernServer.ts`, asking through `inputRequired`); dual-era: the same server serving both eras (`serveStdio`'s default; over HTTP legacy sessions routed with `isLegacyRequest` to sessionful transports, `fixtures/servers/dualEraHttp.ts`); legacy: `@modelcontextprotocol/sdk` 1.32.2 pushing `elicitation/create`, `sampling/createMessage` and `roots/list` mid-call (`fixtures/servers/legacyServer.ts`).",
  );
  out.push(
    "- **Wraps**: `wrapLegacyServer` and `wrapModernServer` through `mcp-dual-era serve --stdio` (and `--modern`) over stdio, in front of the server's own HTTP endpoint over HTTP; `wrapModernClient` and `wrapLegacyClient` as the client's transport.",
    '',
  );
  out.push(`![The compatibility matrix](${svgName})`, '');
  out.push(summaryTable(verdicts), '');
  out.push(`${totals(verdicts)}.`, '');

  out.push('## Every variant, operation by operation', '');
  out.push(`| client | server | transport | route | ${OPS.map((o) => o.id).join(' | ')} |`);
  out.push(`|---|---|---|---|${OPS.map(() => '---').join('|')}|`);
  for (const v of verdicts) {
    const r = v.result;
    const cells = OPS.map(({ id }) => {
      const op = r.ops.find((o) => o.op === id);
      if (!op) return '';
      if (r.variant.expect === 'refused') return op.ok ? 'refused' : '✗';
      if (op.ok) return '✓';
      return v.known.some((k) => k.op === id) ? '✗ (known)' : '✗';
    });
    out.push(
      `| ${ERA_LABEL[r.variant.client]} | ${serverLabel(r.variant)} | ${TRANSPORT_LABEL[r.variant.transport]} | ${routeLabel(r.variant)} | ${cells.join(' | ')} |`,
    );
  }
  out.push('');

  out.push(
    '## Without a wrap',
    '',
    'What the peers say when they meet alone where the eras do not overlap (the errors are theirs, verbatim):',
    '',
  );
  for (const v of verdicts.filter((x) => x.result.variant.expect === 'refused')) {
    const r = v.result;
    out.push(
      `- ${ERA_LABEL[r.variant.client]} client → ${ERA_LABEL[r.variant.server]} server over ${TRANSPORT_LABEL[r.variant.transport]}: ${r.ok ? '' : '**connected** — '}\`${escapeCell(r.ops[0]?.detail ?? '')}\``,
    );
  }
  out.push('');

  out.push('## Known gaps', '');
  const gaps = verdicts.filter((v) => v.known.length > 0);
  if (gaps.length === 0) out.push('None: every operation of every scripted variant passes.', '');
  for (const v of gaps) {
    const r = v.result;
    const setup = r.variant.stateless ? ` ${STATELESS_SETUP}` : '';
    out.push(
      `${ERA_LABEL[r.variant.client]} client → ${ERA_LABEL[r.variant.server]} server${setup}, over ${TRANSPORT_LABEL[r.variant.transport]}, ${routeLabel(r.variant)} (\`fixtures/matrix/baseline.json\`):`,
      '',
    );
    for (const k of v.known) out.push(`- **${k.op}**: ${k.reason} Seen: \`${escapeCell(r.ops.find((o) => o.op === k.op)?.detail ?? '')}\``);
    out.push('');
  }
  const failing = verdicts.filter((v) => v.unexpected.length > 0);
  if (failing.length > 0) {
    out.push('## Failures', '');
    for (const v of failing)
      for (const id of v.unexpected)
        out.push(`- \`${v.result.id}\` **${id}**: \`${escapeCell(v.result.ops.find((o) => o.op === id)?.detail ?? 'did not run')}\``);
    out.push('');
  }
  out.push('## The script', '', 'Every scripted variant runs these operations in this order on one connection:', '');
  for (const op of OPS) out.push(`1. **${op.id}**: ${op.checks}.`);
  out.push('');
  return out.join('\n');
}

/** The README's block: the picture, the grid and the totals. */
export function readmeBlock(verdicts: readonly Verdict[]): string {
  return ['![The compatibility matrix](docs/matrix.svg)', '', summaryTable(verdicts), '', `${totals(verdicts)}.`].join('\n');
}

/** Replaces what stands between `<!-- matrix:start -->` and `<!-- matrix:end -->` in `readme`. */
export function spliceReadme(readme: string, block: string): string {
  const start = '<!-- matrix:start -->';
  const end = '<!-- matrix:end -->';
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the README has no ${start} … ${end} block`);
  return `${readme.slice(0, from + start.length)}\n${block}\n${readme.slice(to)}`;
}
