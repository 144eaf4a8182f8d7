/**
 * The MRTR bench's console report: memory per parked call (with the server alone and the
 * messages, and the goal), the latency cells (round ÷ plain call), the heap profile's top kinds of
 * object, and every wrong answer or failed child. Text only; the JSON report is bench/mrtr.ts's.
 */
import { consoleTable, formatRatio, int, kb, us } from '../shared/format.ts';
import type { HeapGain } from './heapDiff.ts';
import type { LatencyResult } from './latency.ts';
import { perParkedCall } from './perParkedCall.ts';
import type { PerParkedCall } from '../report/types.ts';
import { MRTR_BESIDE_PER_CALL, MRTR_HOISTED } from '../report/figures.ts';
import type { ServerMemoryResult } from './serverMemory.ts';
import type { WrapMemoryResult } from './wrapMemory.ts';

/** Everything one run measured; a part it left out (or whose child failed) is undefined. */
export interface MrtrMeasured {
  readonly n: number;
  readonly goalBytes: number;
  readonly direct?: WrapMemoryResult | undefined;
  readonly http?: WrapMemoryResult | undefined;
  readonly tsx?: WrapMemoryResult | undefined;
  readonly server?: ServerMemoryResult | undefined;
  readonly latency?: LatencyResult | undefined;
  readonly profile?: { readonly run: WrapMemoryResult; readonly top: readonly HeapGain[]; readonly dir: string } | undefined;
  readonly failures: readonly string[];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const WHERE = {
  direct: 'serveModern',
  http: 'wrap.fetch',
  'node-http': 'Node HTTP (serve)',
  stdio: 'stdio front (serve --stdio)',
  'stdio-process': 'serve --stdio, processes',
} as const;

/** The per-call figures of each memory run, keyed as the JSON report keeps them (`direct`, `http`, `direct-tsx`). */
export function perCallSummary(m: MrtrMeasured): Record<string, PerParkedCall> {
  const out: Record<string, PerParkedCall> = {};
  for (const w of [m.direct, m.http, m.tsx]) if (w) out[`${w.transport}${w.loader === 'tsx' ? '-tsx' : ''}`] = perParkedCall(w, m.server);
  return out;
}

function memoryLines(m: MrtrMeasured): string[] {
  const rows: Array<[string, WrapMemoryResult | undefined]> = [
    ['serveModern (in process)', m.direct],
    ['wrap.fetch (Streamable HTTP, in process)', m.http],
    ['serveModern, lib run under the tsx loader', m.tsx],
  ];
  const body = rows
    .filter((r): r is [string, WrapMemoryResult] => r[1] !== undefined)
    .map(([label, w]) => {
      const p = perParkedCall(w, m.server);
      return [
        label,
        kb(p.total),
        kb(p.wrapAlone),
        kb(p.session),
        kb(p.call),
        kb(p.beyond),
        kb(p.rss),
        seconds(w.parkMs),
        seconds(w.resumeMs),
        String(w.upstreamSessions),
      ];
    });
  const out = [
    `1. Memory per parked call: ${int.format(m.n)} parked at once, one principal and capability set, each on an upstream session of its own`,
  ];
  out.push(
    consoleTable(
      ['', 'total', 'wrap alone', 'of which session', 'parked call', 'beyond messages', 'rss', 'park', 'resume', 'sessions'],
      body,
    ),
  );
  const s = m.server;
  if (s) {
    out.push(
      `legacy server alone, one per session: ${kb(s.serverPerSuspended)} with its call suspended, ${kb(s.serverPerFinished)} once the call finished`,
    );
    out.push(
      `the messages: pushed request ${s.pushJsonBytes} B of JSON, ${kb(s.pushHeapPerCopy)} of heap per parsed copy; original request params ${s.paramsJsonBytes} B of JSON, ${kb(s.paramsHeapPerCopy)} of heap per parsed copy`,
    );
  }
  if (m.direct) {
    const p = perParkedCall(m.direct, s);
    if (p.beyond !== undefined)
      out.push(
        `goal: under ${m.goalBytes / 1024} KB per parked call beyond the messages → ${kb(p.beyond)} (serveModern), and ${kb(p.session)} more for the upstream session it holds: ${p.beyond < m.goalBytes ? 'met' : 'NOT met'}`,
      );
    const d = m.direct;
    out.push(
      `after resuming all: broker.parked ${d.parkedAfterResuming} (was ${d.parkedAfterParking}), upstream calls in flight ${d.inFlightAfter}, session holds ${d.holdsAfter}, sessions open (idle) ${d.upstreamSessionsAfterResuming}`,
    );
  }
  out.push(
    '(total: heap per parked call, wrap and in-process legacy servers; wrap alone: minus the server alone; of which session: what the wrap keeps per upstream session ' +
      'beyond a bare client of the server, read once the calls resumed; parked call: wrap alone minus its session; beyond messages: minus the original params too)',
  );
  return out;
}

function latencyLines(lat: LatencyResult): string[] {
  const body = lat.cells.flatMap((c) => [
    [
      `${WHERE[c.transport]}, collectMs ${c.collectMs}${c.collectMs === 15 ? ' (default)' : ''}${c.server === 'hoisted' ? MRTR_HOISTED : ''}${c.beside && c.beside !== c.server ? MRTR_BESIDE_PER_CALL : ''}`,
      int.format(c.rounds.round.n),
      us(c.echo.p50Us),
      us(c.echo.p99Us),
      us(c.rounds.round.p50Us),
      us(c.rounds.round.p99Us),
      formatRatio(c.ratioP50),
      formatRatio(c.ratioP99),
      formatRatio(c.pairedRatio),
    ],
    ['    first call → input_required; retry → result', '', '', '', us(c.rounds.first.p50Us), us(c.rounds.retry.p50Us), '', '', ''],
    ...(c.serverAlone
      ? [
          [
            '    the server alone beside: echo; ask_name answered',
            '',
            us(c.serverAlone.echo.p50Us),
            '',
            us(c.serverAlone.round.p50Us),
            '',
            '',
            '',
            '',
          ],
        ]
      : []),
  ]);
  const alone = lat.serverAlone;
  return [
    '2. Latency, one call at a time: a plain echo and a full round (first call → input_required, retry → result) in turn, through the same wrap',
    consoleTable(['', 'pairs', 'echo p50', 'p99', 'round p50', 'p99', 'round ÷ echo', 'p99', 'paired'], body),
    `legacy server alone, bare in-memory client: echo ${us(alone.echo.p50Us)} / ${us(alone.echo.p99Us)}; ask_name with its push answered ${us(alone.round.p50Us)} / ${us(alone.round.p99Us)} (n ${alone.round.n})`,
  ];
}

/** The wrong answers of every part, counted. */
export function wrongCount(m: MrtrMeasured): number {
  return [m.direct, m.http, m.tsx, m.server, m.latency, m.profile?.run].reduce((sum, r) => sum + (r?.wrong.count ?? 0), 0);
}

/** The report as lines for the console. */
export function summaryLines(m: MrtrMeasured): string[] {
  const out: string[] = [];
  if (m.direct || m.http || m.tsx || m.server) out.push('', ...memoryLines(m));
  if (m.latency) out.push('', ...latencyLines(m.latency));
  if (m.profile) {
    out.push(
      '',
      `3. Heap gained per parked call by kind of object (${m.profile.run.n} parked; snapshots in ${m.profile.dir}/), wrap and in-process server:`,
    );
    for (const row of m.profile.top.slice(0, 30))
      out.push(`   ${row.bytes.toFixed(0).padStart(6)} B ${row.count.toFixed(2).padStart(6)}×  ${row.what.slice(0, 150)}`);
  }
  out.push('');
  for (const r of [m.direct, m.http, m.tsx, m.server, m.latency, m.profile?.run])
    for (const w of r?.wrong.first ?? []) out.push(`WRONG ${w}`);
  for (const f of m.failures) out.push(`FAILED ${f}`);
  return out;
}
