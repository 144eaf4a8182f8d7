/**
 * The headline ratios of a run, in one list: what the chart draws and the summary table lists.
 * Each is a ratio measured side by side in the same run, with the goal it is held to, if any.
 */
import type { Run } from './types.ts';

export type Section = 'Translator' | 'Wrapped calls' | 'Tracing' | 'MRTR' | 'Probe' | 'Cached probe' | 'First answer' | 'Fleet' | 'Tasks';

export interface Figure {
  readonly section: Section;
  readonly label: string;
  /** The ratio (×). */
  readonly value: number;
  readonly better: 'higher' | 'lower';
  readonly goal?: { readonly op: '≥' | '≤'; readonly value: number };
}

export const SECTIONS: readonly Section[] = [
  'Translator',
  'Wrapped calls',
  'Tracing',
  'MRTR',
  'Probe',
  'Cached probe',
  'First answer',
  'Fleet',
  'Tasks',
];

/** Whether a figure meets its goal; `undefined` when it has none. */
export function goalHolds(f: Figure): boolean | undefined {
  if (!f.goal) return undefined;
  return f.goal.op === '≥' ? f.value >= f.goal.value : f.value <= f.goal.value;
}

/** A fresh probe, at most this many legacy connects (p50), by target. */
export const PROBE_GOALS: Readonly<Record<string, number>> = { 'Streamable HTTP': 1.5, stdio: 1.3 };

/** A full MRTR round, at most this many plain calls (p50), on the fronts users call through. */
export const MRTR_ROUND_GOAL = 4;

/** How a figure names a cell whose server builds its requested schema once (`LatencyServer` `hoisted`). */
export const MRTR_HOISTED = ', schema built once';

/**
 * How a figure names a cell whose wrap is in front of the server that builds its schema once while
 * the server that compiles it per elicitation runs in turn in the same process (`beside`).
 */
export const MRTR_BESIDE_PER_CALL = ', beside a per-call server';

/** Where the MRTR latency was taken: the Node HTTP front (as `serve` runs the wrap) when measured. */
export const MRTR_WHERE = {
  'node-http': 'Node HTTP',
  stdio: 'stdio',
  'stdio-process': 'stdio (processes)',
  http: 'wrap.fetch',
  direct: 'serveModern',
} as const;

export function figuresOf(run: Run): Figure[] {
  const out: Figure[] = [];
  const { translate, wrap, mrtr, probe, first, fleet, front, tasks } = run.parts;

  if (translate) {
    const goal = translate.goal;
    const worst = new Map<string, number>();
    for (const r of translate.results) {
      if (r.ratio === undefined || !goal.sizes.includes(r.size)) continue;
      const key = `${r.case} ${r.direction}`;
      worst.set(key, Math.max(worst.get(key) ?? 0, r.ratio));
    }
    for (const [key, value] of worst)
      out.push({ section: 'Translator', label: `${key}, ≤ 10 KB`, value, better: 'lower', goal: { op: '≤', value: goal.maxRatio } });
  }

  if (wrap) {
    const g = wrap.goals.definition;
    const c = wrap.comparisons;
    for (const x of c.vsPassthrough)
      out.push({
        section: 'Wrapped calls',
        label: `wrap ÷ pass-through, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
        goal: { op: '≥', value: g.minVsPassthrough },
      });
    for (const x of c.vsProxy)
      out.push({
        section: 'Wrapped calls',
        label: `wrap ÷ mcp-proxy, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
        goal: { op: '≥', value: g.minVsMcpProxy },
      });
    for (const x of c.vsDirectSdk)
      out.push({ section: 'Wrapped calls', label: `wrap (HTTP) ÷ direct, c=${x.concurrency}`, value: x.throughputRatio, better: 'higher' });
    for (const x of c.stdioVsSdk)
      out.push({
        section: 'Wrapped calls',
        label: `wrap (stdio) ÷ direct, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
      });
    for (const x of c.stdioVsRelay ?? []) {
      out.push({
        section: 'Wrapped calls',
        label: `wrap (stdio) ÷ stdio relay, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
        ...(g.minStdioVsRelay !== undefined ? { goal: { op: '≥' as const, value: g.minStdioVsRelay } } : {}),
      });
    }
    for (const x of c.parsingRelayVsRelay ?? [])
      out.push({
        section: 'Wrapped calls',
        label: `parsing relay ÷ stdio relay, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
      });
    for (const x of c.stdioVsParsingRelay ?? [])
      out.push({
        section: 'Wrapped calls',
        label: `wrap (stdio) ÷ parsing relay, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
      });
    for (const x of c.translatingRelayVsRelay ?? [])
      out.push({
        section: 'Wrapped calls',
        label: `translating relay ÷ stdio relay, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
      });
    for (const x of c.stdioVsTranslatingRelay ?? []) {
      out.push({
        section: 'Wrapped calls',
        label: `wrap (stdio) ÷ translating relay, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
        ...(g.minStdioVsTranslatingRelay !== undefined ? { goal: { op: '≥' as const, value: g.minStdioVsTranslatingRelay } } : {}),
      });
    }
    for (const x of c.stdioLegacyVsRelay ?? [])
      out.push({
        section: 'Wrapped calls',
        label: `wrap (stdio), legacy client ÷ stdio relay, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
      });
    for (const x of c.observedVsPlain ?? []) {
      out.push({
        section: 'Wrapped calls',
        label: `traced + metrics ÷ both off, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
        ...(g.minObservedVsPlain !== undefined ? { goal: { op: '≥' as const, value: g.minObservedVsPlain } } : {}),
      });
    }
    for (const x of c.sampledVsPlain ?? []) {
      out.push({
        section: 'Wrapped calls',
        label: `traced at 10% + metrics ÷ both off, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
        ...(g.minSampledVsPlain !== undefined ? { goal: { op: '≥' as const, value: g.minSampledVsPlain } } : {}),
      });
    }
    for (const x of c.metricsVsPlain ?? [])
      out.push({
        section: 'Wrapped calls',
        label: `metrics alone ÷ both off, c=${x.concurrency}`,
        value: x.throughputRatio,
        better: 'higher',
      });
  }

  if (mrtr) {
    const cells = mrtr.latency?.cells ?? [];
    // Where users wait on a round: the Node HTTP front and the stdio front (as `serve` runs them, in process and as processes), else what the run measured.
    const fronts = (['node-http', 'stdio', 'stdio-process'] as const).filter((t) => cells.some((c) => c.transport === t));
    const wheres = fronts.length > 0 ? fronts : [cells.some((c) => c.transport === 'http') ? ('http' as const) : ('direct' as const)];
    for (const where of wheres) {
      const here = cells.filter((x) => x.transport === where);
      /** A cell whose wrap is in front of the once-built server beside a per-call one, at `collectMs`. */
      const besideAt = (collectMs: number) =>
        here.find((x) => x.collectMs === collectMs && x.beside !== undefined && x.beside !== x.server);
      for (const c of [...here].sort((a, b) => b.collectMs - a.collectMs)) {
        const held = where !== 'http' && where !== 'direct' ? { goal: { op: '≤' as const, value: MRTR_ROUND_GOAL } } : {};
        const besidePerCall = c.beside !== undefined && c.beside !== c.server;
        // With a server that builds its schema once, the round is held to the goal. With one that
        // compiles it per elicitation, our own part of it is: measured, where the run has it, as the
        // same wrap's round in front of the once-built server with the per-call one running in the
        // same process (what that server does to the process then counts as the server's); else as
        // the round less what the server spends alone (its share, beside it, no front can save).
        const perCall = mrtr.latency !== undefined && c.server !== 'hoisted' && cells.some((x) => x.server === 'hoisted');
        out.push({
          section: 'MRTR',
          label: `round ÷ plain call, ${MRTR_WHERE[where]}, collectMs ${c.collectMs}${c.server === 'hoisted' ? MRTR_HOISTED : ''}${besidePerCall ? MRTR_BESIDE_PER_CALL : ''}`,
          value: c.ratioP50,
          better: 'lower',
          ...(perCall ? {} : held),
        });
        if (perCall) {
          const share = c.serverAlone
            ? c.serverAlone.round.p50Us - c.serverAlone.echo.p50Us
            : mrtr.latency!.serverAlone.round.p50Us - mrtr.latency!.serverAlone.echo.p50Us;
          out.push({
            section: 'MRTR',
            label: `round without the server's share ÷ plain call, ${MRTR_WHERE[where]}, collectMs ${c.collectMs}`,
            value: (c.rounds.round.p50Us - share) / c.echo.p50Us,
            better: 'lower',
            ...(besideAt(c.collectMs) ? {} : held),
          });
        }
      }
    }
    const beyond = mrtr.perParkedCall['direct']?.beyond;
    if (beyond !== undefined)
      out.push({
        section: 'MRTR',
        label: `parked call beyond messages ÷ ${mrtr.goalBeyondMessagesBytes / 1024} KB`,
        value: beyond / mrtr.goalBeyondMessagesBytes,
        better: 'lower',
        goal: { op: '≤', value: 1 },
      });
  }

  if (probe) {
    const names: Record<string, string> = { probe: 'fresh probe', 'probe+connect': 'probe + connect', cached: 'cached probe' };
    for (const key of ['probe', 'probe+connect', 'cached']) {
      for (const t of probe.targets) {
        const row = t.rows.find((r) => r.key === key);
        const goal = key === 'probe' ? PROBE_GOALS[t.label] : undefined;
        if (row && Number.isFinite(row.ratioP50))
          out.push({
            section: key === 'cached' ? 'Cached probe' : 'Probe',
            label: `${names[key]} ÷ connect, ${t.label}`,
            value: row.ratioP50,
            better: 'lower',
            ...(goal !== undefined ? { goal: { op: '≤' as const, value: goal } } : {}),
          });
      }
    }
  }

  if (first) {
    // The time a stdio host waits for our first answer, against the goal's time (a ratio to it).
    for (const t of first.targets) {
      for (const r of t.rows) {
        if (r.key === 'alone' || !Number.isFinite(r.stats.p50Ms)) continue;
        out.push({
          section: 'First answer',
          label: `${r.label.split(':')[0]} p50 ÷ ${first.goal.p50Ms} ms, ${t.label}`,
          value: r.stats.p50Ms / first.goal.p50Ms,
          better: 'lower',
          goal: { op: '≤', value: 1 },
        });
      }
    }
  }

  if (front?.traced) {
    const t = front.traced;
    // Every request traced: our own part of its cost against the time it may take (the SDK's own beside it, no goal).
    out.push({
      section: 'Tracing',
      label: `our own part of a traced request ÷ ${t.goalOwnUs} µs`,
      value: Math.max(0, t.ownUsPerCall) / t.goalOwnUs,
      better: 'lower',
      goal: { op: '≤', value: 1 },
    });
  }

  if (fleet) {
    const g = fleet.goals;
    const r = fleet.retry;
    if (r && Number.isFinite(r.ratioP50)) {
      out.push({ section: 'Fleet', label: 'forwarded retry ÷ local retry, p50', value: r.ratioP50, better: 'lower' });
      // What forwarding adds, against the time it may add (nothing added draws no bar).
      out.push({
        section: 'Fleet',
        label: `forwarded retry's added p50 ÷ ${g.maxAddedP50Ms} ms`,
        value: Math.max(0, r.addedP50Ms) / g.maxAddedP50Ms,
        better: 'lower',
        goal: { op: '≤', value: 1 },
      });
      // The floor on this machine, and our part over it (no goal of their own).
      if (r.bare)
        out.push({
          section: 'Fleet',
          label: `a bare Node hop's added p50 ÷ ${g.maxAddedP50Ms} ms`,
          value: Math.max(0, r.bare.p50Us - r.local.p50Us) / 1000 / g.maxAddedP50Ms,
          better: 'lower',
        });
      if (r.pairedOverBareMs !== undefined)
        out.push({
          section: 'Fleet',
          label: `forwarding over the bare hop, paired p50 ÷ ${g.maxAddedP50Ms} ms`,
          value: Math.max(0, r.pairedOverBareMs) / g.maxAddedP50Ms,
          better: 'lower',
        });
    }
    const t = fleet.throughput;
    if (t && Number.isFinite(t.ratio))
      out.push({
        section: 'Fleet',
        label: `replica in a fleet ÷ serve alone, plain calls c=${t.concurrency}`,
        value: t.ratio,
        better: 'higher',
        goal: { op: '≥', value: g.minThroughputRatio },
      });
  }

  if (tasks) {
    // A poll of a working task against a plain call (and, forwarded, against a local poll), at p50; no goal.
    for (const cell of [tasks.oneProcess, tasks.fleet])
      for (const r of cell?.ratios ?? [])
        if (Number.isFinite(r.ratioP50)) out.push({ section: 'Tasks', label: `${r.label}, p50`, value: r.ratioP50, better: 'lower' });
  }
  return out;
}
