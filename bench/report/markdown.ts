/**
 * bench/RESULTS.md from a combined run: the conditions (machine, load, peers, commit), the
 * headline ratios, then each bench's table with its ratio column. Text only; the chart is a
 * separate file it links to.
 */
import { formatRatio, int, kb, markdownTable as table, ms, pct, signedUs, us } from '../shared/format.ts';
import { median } from '../shared/stats.ts';
import { figuresOf, goalHolds, MRTR_HOISTED, MRTR_ROUND_GOAL, MRTR_WHERE, SECTIONS } from './figures.ts';
import { FIRST_ANSWER_NOTE, FLEET_COUNT_NOTE, MEMORY_REDUCER_NOTE, WRAP_PATH_NOTE } from './notes.ts';
import { tasksSection } from './tasks.ts';
import type { Run, WrapComparison } from './types.ts';

/** When the run was taken, to the minute, in UTC. */
export function runDate(run: Run): string {
  return `${run.generatedAt.slice(0, 10)} ${run.generatedAt.slice(11, 16)} UTC`;
}

export function runCommit(run: Run): string {
  return run.commit.hash ? `${run.commit.hash.slice(0, 10)}${run.commit.dirty ? ' (with uncommitted changes)' : ''}` : 'unknown';
}

function conditions(run: Run): string {
  const m = run.machine;
  const wrap = run.parts.wrap;
  const other = (wrap?.cells ?? []).map((c) => c.cpu?.otherBusy).filter((v): v is number => typeof v === 'number');
  const rows: Array<[string, string]> = [
    ['Date', runDate(run)],
    ['Commit', `\`${runCommit(run)}\``],
    [
      'Run',
      run.args.length === 0
        ? `full (\`npm run bench\`), ${Math.round(run.elapsedSeconds / 60)} min`
        : `\`npm run bench -- ${run.args.join(' ')}\`${run.quick ? ' (quick: a smoke check, not figures to quote)' : ''}`,
    ],
    ['CPU', `${m.cpuModel}, ${m.cores} cores (${m.arch})`],
    ['Memory', `${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB`],
    ['OS', `${m.os}, kernel ${m.kernel}`],
    ['Node', m.node],
    ['Load average (1 min)', `${run.load.start[0]?.toFixed(2) ?? '?'} at the start, ${run.load.end[0]?.toFixed(2) ?? '?'} at the end`],
  ];
  if (other.length > 0)
    rows.push(['Other processes during the wrap cells', `${pct(median(other))} of the cores (median), up to ${pct(Math.max(...other))}`]);
  const lines = [table(['', ''], rows)];
  lines.push('');
  lines.push(
    `Every process runs on this one machine: the load generator shares the ${m.cores} cores with the fronts and the servers it drives, ` +
      'so absolute numbers are for scale only. The figures are ratios, each measured side by side in the same run (baseline and candidate ' +
      'alternating, or taken in turn slice by slice), so whatever else the machine does lands on both sides alike; it still widens the spread, ' +
      'and runs on a busy machine differ by several percent or more.',
  );
  return lines.join('\n');
}

function peers(run: Run): string {
  return table(
    ['package', 'version', 'role in the bench'],
    run.peers.map((p) => [`\`${p.name}\``, p.version ?? 'not installed', p.role]),
  );
}

function headline(run: Run): string {
  const figures = figuresOf(run);
  if (figures.length === 0) return 'No figures in this run.';
  const rows = SECTIONS.flatMap((s) =>
    figures
      .filter((f) => f.section === s)
      .map((f) => {
        const holds = goalHolds(f);
        return [
          s,
          f.label,
          formatRatio(f.value),
          f.goal ? `${f.goal.op} ${formatRatio(f.goal.value)}` : '–',
          holds === undefined ? '' : holds ? 'met' : '**missed**',
        ];
      }),
  );
  return table(['section', 'ratio', 'value', 'goal', ''], rows, new Set([2]));
}

function translator(run: Run): string {
  const t = run.parts.translate;
  if (!t) return '_Not measured in this run._';
  const intro =
    `Per message: \`classify\` + validate + translate of the decoded message, against \`JSON.parse\` + \`JSON.stringify\` of the same message text ` +
    `(what any JSON-RPC hop pays). ${t.options.samples} alternating samples of at least ${t.options.sampleMs} ms per side; medians. ` +
    `Ratio = translate ÷ (parse + stringify), lower is better; goal ≤ ${t.goal.maxRatio} for ${t.goal.sizes.join(' and ')} messages (up to 10 KB).`;
  const rows = t.results.map((r) => [
    `\`${r.case}\``,
    r.direction,
    r.size,
    int.format(r.bytes),
    r.baselineNsPerMsg === undefined ? '–' : int.format(r.baselineNsPerMsg),
    r.translateNsPerMsg === undefined ? '–' : int.format(r.translateNsPerMsg),
    r.ratio === undefined ? `FAILED: ${r.failure ?? ''}` : formatRatio(r.ratio),
  ]);
  return `${intro}\n\n${table(['message', 'direction', 'size', 'bytes', 'parse + stringify ns', 'translate ns', 'ratio'], rows, new Set([3, 4, 5, 6]))}`;
}

/** The comparison at concurrency `conc`, if measured. */
function at(list: readonly WrapComparison[], conc: number): WrapComparison | undefined {
  return list.find((x) => x.concurrency === conc);
}

/** The concurrencies the cells were measured at, ascending. */
function concurrenciesOf(cells: ReadonlyArray<{ readonly concurrency: number }>): number[] {
  return [...new Set(cells.map((x) => x.concurrency))].sort((a, b) => a - b);
}

function wrapped(run: Run): string {
  const w = run.parts.wrap;
  if (!w) return '_Not measured in this run._';
  const g = w.goals.definition;
  const o = w.options;
  const intro =
    'Modern `tools/call` requests (full `_meta`, routing headers) from one closed-loop load generator at concurrency 1, 16 and 64, every answer ' +
    'checked, against one legacy stdio server (a v1 SDK echo server) behind: the wrap (`mcp-dual-era serve`, HTTP, and `serve --stdio`); the wrap over ' +
    'HTTP observed (`--metrics`, and the OpenTelemetry SDK registered with spans batched to memory), and with `--metrics` alone; a bare ' +
    'HTTP-to-stdio pass-through that translates nothing (the ceiling for any HTTP front of a stdio server here); `mcp-proxy` on its 2026-07-28 ' +
    "route; a legacy client on the server's own stdio (the v1 SDK `Client`, and raw lines); and, for the stdio front, a stdio relay (a second " +
    'process that pipes bytes to the server and back, parsing nothing: the ceiling for any stdio front of a stdio server), and the same relay ' +
    'parsing every line (decoded and encoded again, nothing else: the ceiling for any stdio front that reads the messages it passes on), and ' +
    'translating (modern request lines in, legacy ones to the server under ids of its own, modern answers back, and nothing else: no checks, ' +
    'sessions, cancellation or deadlines; the ceiling for any translating stdio front). ' +
    (w.cells.some((x) => x.contender === 'wrap-stdio-legacy')
      ? 'The relays and the direct raw client send legacy request lines (after `initialize`), and so does a legacy client of `serve --stdio` ("wrap (stdio), legacy client"), whose session the wrap relays: what a legacy host gets. '
      : '') +
    `Each contender warmed ${o.startWarmupMs / 1000} s, then per cell ${o.warmupMs / 1000} s of warm-up and ${(o.slices * o.sliceMs) / 1000} s measured in ` +
    `${o.slices} slices taken in turn with the other contenders${o.leadInMs ? `, each after an unmeasured lead-in of ${o.leadInMs} ms` : ''}${o.nodeFlags?.length ? `; every Node process ran with \`${o.nodeFlags.join(' ')}\` (why: below)` : ''}. The wrap measured: ${w.wrap.source}${w.wrap.commit ? ` (${w.wrap.commit})` : ''}.`;
  const cells = w.cells.map((c) => [
    c.label,
    String(c.concurrency),
    int.format(c.callsPerSecond),
    us(c.p50Us),
    us(c.p99Us),
    String(c.errors),
    c.cpu?.otherBusy != null ? pct(c.cpu.otherBusy) : '–',
  ]);
  const c = w.comparisons;
  const concs = concurrenciesOf(w.cells);
  const ratio = (x: WrapComparison | undefined, goal?: number) =>
    x ? `${formatRatio(x.throughputRatio)}${goal === undefined ? '' : x.throughputRatio >= goal ? '' : ' (missed)'}` : '–';
  const legacyRelayed = (c.stdioLegacyVsRelay ?? []).length > 0;
  const sampled = (c.sampledVsPlain ?? []).length > 0;
  const ratios = concs.map((conc) => {
    const p = at(c.vsPassthrough, conc);
    return [
      String(conc),
      ratio(p, g.minVsPassthrough),
      p ? signedUs(p.addedP50Us) : '–',
      ratio(at(c.vsProxy, conc), g.minVsMcpProxy),
      ratio(at(c.vsDirectSdk, conc)),
      ratio(at(c.stdioVsSdk, conc)),
      ratio(at(c.stdioVsRaw, conc)),
      ratio(at(c.stdioVsRelay ?? [], conc), g.minStdioVsRelay),
      ratio(at(c.parsingRelayVsRelay ?? [], conc)),
      ratio(at(c.stdioVsParsingRelay ?? [], conc)),
      ratio(at(c.translatingRelayVsRelay ?? [], conc)),
      ratio(at(c.stdioVsTranslatingRelay ?? [], conc), g.minStdioVsTranslatingRelay),
      ratio(at(c.observedVsPlain ?? [], conc), g.minObservedVsPlain),
      ...(sampled ? [ratio(at(c.sampledVsPlain ?? [], conc), g.minSampledVsPlain)] : []),
      ratio(at(c.metricsVsPlain ?? [], conc)),
      ...(legacyRelayed ? [ratio(at(c.stdioLegacyVsRelay ?? [], conc))] : []),
    ];
  });
  const goals =
    `Goals for the wrap over HTTP: throughput ≥ ${g.minVsPassthrough}× the pass-through and ≥ ${g.minVsMcpProxy}× mcp-proxy at every concurrency, ` +
    `and at most ${g.maxAddedP50Us} µs added p50 over the pass-through at concurrency ${g.addedP50Concurrency}` +
    (g.minStdioVsRelay !== undefined ? `; for the wrap over stdio, throughput ≥ ${g.minStdioVsRelay}× the stdio relay` : '') +
    (g.minStdioVsTranslatingRelay !== undefined
      ? `; for the wrap over stdio, throughput ≥ ${g.minStdioVsTranslatingRelay}× the translating stdio relay (the ceiling of any translating stdio front)`
      : '') +
    (g.minObservedVsPlain !== undefined
      ? `; with spans recorded by the OpenTelemetry SDK (batched to memory) and metrics on, throughput ≥ ${g.minObservedVsPlain}× both off`
      : '') +
    (g.minSampledVsPlain !== undefined
      ? `; with the SDK sampling 10% of requests (a parent-based ratio sampler: its remote-parent branch at the same ratio, as the requests' traceparent says sampled) and metrics on, throughput ≥ ${g.minSampledVsPlain}× both off (every request traced is held instead to our own part of its cost, in section 1b of \`npm run bench:front\`).`
      : '.');
  return [
    intro,
    '',
    'Ratios of throughput (calls per second, same concurrency, same run; higher is better):',
    '',
    table(
      [
        'concurrency',
        'wrap ÷ pass-through',
        'added p50',
        'wrap ÷ mcp-proxy',
        'wrap (HTTP) ÷ direct SDK client',
        'wrap (stdio) ÷ direct SDK client',
        'wrap (stdio) ÷ direct raw lines',
        'wrap (stdio) ÷ stdio relay',
        'parsing relay ÷ stdio relay',
        'wrap (stdio) ÷ parsing relay',
        'translating relay ÷ stdio relay',
        'wrap (stdio) ÷ translating relay',
        'traced + metrics ÷ both off',
        ...(sampled ? ['traced at 10% + metrics ÷ both off'] : []),
        'metrics alone ÷ both off',
        ...(legacyRelayed ? ['wrap (stdio), legacy client ÷ stdio relay'] : []),
      ],
      ratios,
      new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
    ),
    '',
    goals,
    '',
    'Every cell ("other load": the share of the cores that processes outside the cell used meanwhile):',
    '',
    table(['contender', 'concurrency', 'calls/s', 'p50', 'p99', 'wrong answers', 'other load'], cells, new Set([1, 2, 3, 4, 5, 6])),
    '',
    WRAP_PATH_NOTE,
    '',
    MEMORY_REDUCER_NOTE,
  ].join('\n');
}

function mrtrSection(run: Run): string {
  const m = run.parts.mrtr;
  if (!m) return '_Not measured in this run._';
  const parts: string[] = [];
  const lat = m.latency;
  if (lat) {
    const serverShareUs = lat.serverAlone.round.p50Us - lat.serverAlone.echo.p50Us;
    /** The server's share of a round as measured beside the cell's own calls (after every cell, in results from before that). */
    const shareOf = (c: (typeof lat.cells)[number]): number =>
      c.serverAlone ? c.serverAlone.round.p50Us - c.serverAlone.echo.p50Us : serverShareUs;
    const beside = lat.cells.some((c) => c.serverAlone !== undefined);
    /** Whether the run measured the server with its schema built once beside the one that builds it per call. */
    const servers = lat.cells.some((c) => c.server === 'hoisted');
    /** Whether the run measured the wrap with the once-built server beside the per-call one. */
    const besidePerCall = lat.cells.some((c) => c.beside !== undefined && c.beside !== c.server);
    /** Whether the run measured a round through `serve --stdio` as processes. */
    const processes = lat.cells.some((c) => c.transport === 'stdio-process');
    const mrtrHeader = [
      'front',
      ...(servers ? ['schema'] : []),
      'collectMs',
      'pairs',
      'plain call p50',
      'p99',
      'round p50',
      'p99',
      'round ÷ plain p50',
      'p99',
      'paired',
      ...(beside ? ["server's share"] : []),
      "without the server's share",
    ];
    parts.push(
      'A full round (the first call answered `input_required`, then the retry with the answer and `requestState`, answered with the result) ' +
        'against a plain `echo` call, taken in turn, one at a time, through the same wrap with the same caller, in one process (upstream: ' +
        `the v1 push server in process)${processes ? ' but for "stdio (processes)"' : ''}. ` +
        'The broker sends a round once the server answered a `ping` asked after the pushes seen (a server answers ' +
        'in order, so every push it wrote before is in); `collectMs` bounds that wait (default 15 ms), and 0 sends the round after one turn of the ' +
        'event loop without asking (the floor, but it splits the pushes of one turn over stdio). "stdio" is the stdio front (`serve --stdio`) on in-process pipes, "Node HTTP" the HTTP front on loopback (`serve`). ' +
        (processes
          ? '"stdio (processes)" is `serve --stdio` as users run it: the CLI compiled as installed, a process of its own with the push server its child process over stdio, the bench writing request lines to its stdin (its server alone: a bare client on the stdio of a push server process of its own). '
          : '') +
        'Ratio = round ÷ plain call, lower is better; "paired" is the median of each round over the plain call next to it; ' +
        '"without the server\'s share" takes away what the legacy server itself spends on an elicitation beyond a plain call (' +
        (beside
          ? 'measured alone, in turn with the cell\'s own calls so the server is in the same state: "server\'s share" is its call with the push answered less its plain call, at p50; '
          : 'measured alone, below: ') +
        "the v1 SDK compiles the requested schema with ajv on every `elicitInput`, and ajv's compiler gets faster as the process warms up), which no front can save. " +
        (servers
          ? 'The push server\'s `ask_name` builds its requested schema in the call ("per call"), as many servers do: the v1 SDK then compiles it with ajv on every ' +
            "elicitation and keeps every compiled schema, so the server's heap grows with each round and its collections land on whatever runs in its process, the wrap's " +
            'calls here. "Once" is the same server with that schema built once, at module level: its elicitation then costs about what a plain call does, and the ratio is what ' +
            'carries the round. '
          : '') +
        (besidePerCall
          ? '"Once, beside per call" is the wrap in front of the server that builds its schema once while the server that compiles it per elicitation runs in turn in the same process ' +
            "(its share, in that row, is the per-call server's): the wrap's work in a round is the same as in front of the per-call server, but the other server's compiled schemas and " +
            "generated code slow everything in the process, the plain call included, and that row reads what is left of the round as the wrap's own. "
          : '') +
        (servers
          ? besidePerCall
            ? `Goals on the Node HTTP and stdio fronts, at p50: with the schema built once, a round at most ${MRTR_ROUND_GOAL}× a plain call; with it compiled per elicitation, our own part of the round at most ${MRTR_ROUND_GOAL}×, read from the "once, beside per call" row (the server's share, alone and on its process, reported beside it).`
            : `Goals on the Node HTTP and stdio fronts, at p50: with the schema built once, a round at most ${MRTR_ROUND_GOAL}× a plain call; with it compiled per elicitation, the round without the server's share at most ${MRTR_ROUND_GOAL}× (the server's share reported beside it).`
          : `Goal on the Node HTTP and stdio fronts: a round at most ${MRTR_ROUND_GOAL}× a plain call at p50.`),
      '',
      table(
        mrtrHeader,
        lat.cells.map((c) => [
          MRTR_WHERE[c.transport],
          ...(servers
            ? [c.server === 'hoisted' ? (c.beside !== undefined && c.beside !== c.server ? 'once, beside per call' : 'once') : 'per call']
            : []),
          String(c.collectMs),
          int.format(c.rounds.round.n),
          us(c.echo.p50Us),
          us(c.echo.p99Us),
          us(c.rounds.round.p50Us),
          us(c.rounds.round.p99Us),
          formatRatio(c.ratioP50),
          formatRatio(c.ratioP99),
          formatRatio(c.pairedRatio),
          ...(beside ? [us(shareOf(c))] : []),
          formatRatio((c.rounds.round.p50Us - shareOf(c)) / c.echo.p50Us),
        ]),
        // Every column after the text ones (the front, and the schema when there is one) is a number.
        new Set([...mrtrHeader.keys()].filter((i) => i >= (servers ? 2 : 1))),
      ),
      '',
      `The legacy server alone (a bare in-memory client answering the push itself) after every cell: plain call ${us(lat.serverAlone.echo.p50Us)}, call with its push answered ${us(lat.serverAlone.round.p50Us)} (p50): ` +
        `its own share of a round is ${us(serverShareUs)}, in every round whatever carries it${beside ? " (measured last, with the process at its warmest; each cell's own is in the table)" : ''}.`,
    );
  }
  const direct = m.perParkedCall['direct'];
  const http = m.perParkedCall['http'];
  if (direct || http) {
    const s = m.memory.server;
    parts.push(
      '',
      `Memory per parked call: ${int.format(m.n)} calls parked at once (one principal), in process; heap after gc. A call that pushes holds an ` +
        'upstream session of its own while parked, so each parked call here also has its own in-process legacy server. ' +
        '"Wrap alone" takes away the legacy servers measured alone (one per session, each with one call suspended); "session" is what the wrap ' +
        'keeps per upstream session beyond what a bare client of the server keeps (read once every call resumed, the sessions idle); ' +
        `"beyond messages" also takes away the original request's params. Goal: under ${m.goalBeyondMessagesBytes / 1024} KB per parked call beyond the messages.`,
      '',
      table(
        ['front', 'total (wrap + server)', 'wrap alone', 'of which session', 'parked call', 'beyond messages', '÷ goal'],
        (
          [
            ['serveModern', direct],
            ['wrap.fetch', http],
          ] as const
        )
          .filter(([, p]) => p)
          .map(([label, p]) => [
            label,
            kb(p!.total),
            kb(p!.wrapAlone),
            kb(p!.session),
            kb(p!.call),
            kb(p!.beyond),
            p!.beyond === undefined ? '–' : formatRatio(p!.beyond / m.goalBeyondMessagesBytes),
          ]),
        new Set([1, 2, 3, 4, 5, 6]),
      ),
    );
    if (s)
      parts.push(
        '',
        `The legacy server alone: ${kb(s.serverPerSuspended)} per server with its call suspended, ${kb(s.serverPerFinished)} once it finished; the messages: pushed request ${s.pushJsonBytes} B of JSON, original params ${s.paramsJsonBytes} B (${kb(s.paramsHeapPerCopy)} of heap parsed).`,
      );
  }
  return parts.join('\n');
}

function probeSection(run: Run): string {
  const p = run.parts.probe;
  if (!p) return '_Not measured in this run._';
  const intro =
    '`probe()` against legacy servers, against what a legacy client pays to connect to the same server anyway, measured in the same rounds ' +
    '(the order rotating every round). Fresh: no verdict cache (`cache: false`); cached: a verdict cache hit. On stdio the probe keeps the ' +
    'process it spawned and hands it over (as `wrapModernClient` does), so "probe + connect" is all a wrapped client pays before its first ' +
    'call. Ratio = the operation ÷ the legacy connect, lower is better.';
  const rows = p.targets.flatMap((t) =>
    t.rows.map((r) => [
      t.label,
      r.label,
      int.format(r.stats.n),
      ms(r.stats.p50Ms),
      ms(r.stats.p99Ms),
      formatRatio(r.ratioP50),
      formatRatio(r.ratioP99),
      formatRatio(r.pairedRatio),
    ]),
  );
  const servers = p.targets.map((t) => `${t.label}: ${t.server}`).join('; ');
  return `${intro}\n\n${table(['target', 'operation', 'n', 'p50 ms', 'p99 ms', '÷ connect p50', 'p99', 'paired'], rows, new Set([2, 3, 4, 5, 6, 7]))}\n\nServers: ${servers}.`;
}

function firstSection(run: Run): string {
  const f = run.parts.first;
  if (!f) return '_Not measured in this run._';
  const intro =
    'How long a stdio host waits for its first answer: from starting the command to the first line it reads back, the request written as soon as ' +
    "the process exists. Baseline: the legacy server alone answering `initialize` (its own start is most of it); against it, a modern host's " +
    '`server/discover` through `connect` and `serve --stdio` in front of the same server, compiled as installed. ' +
    `Goal: p50 ≤ ${f.goal.p50Ms} ms; the AI SDK gives \`server/discover\` ${f.goal.aiSdkDiscoveryMs} ms over stdio before it falls back to \`initialize\`.`;
  const rows = f.targets.flatMap((t) =>
    t.rows.map((r) => [
      t.label,
      r.label,
      int.format(r.stats.n),
      ms(r.stats.p50Ms),
      ms(r.stats.p99Ms),
      r.key === 'alone' ? '1.00×' : formatRatio(r.ratioP50),
      r.key === 'alone' ? '–' : `+${ms(r.addedP50Ms)} ms`,
      `${r.withinDiscovery}/${r.stats.n}`,
      r.key === 'alone' ? '' : r.stats.p50Ms <= f.goal.p50Ms ? '✓' : '✗',
    ]),
  );
  return `${intro}\n\n${table(['server', 'first answer', 'n', 'p50 ms', 'p99 ms', '÷ alone p50', 'added p50', `within ${f.goal.aiSdkDiscoveryMs} ms`, 'goal'], rows, new Set([2, 3, 4, 5, 6, 7]))}\n\n${FIRST_ANSWER_NOTE}`;
}

/** Milliseconds with their sign: `+0.412 ms`, `−0.050 ms`. */
const signedMs = (v: number): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(3)} ms` : '–');
/** Commands per call: whole numbers as they are, the rest to three decimals. */
const perCall = (v: number): string => (!Number.isFinite(v) ? '–' : Number.isInteger(v) ? String(v) : v.toFixed(3));

const FLEET_PHASES = {
  idle: 'idle: nothing sent (per second)',
  plain: 'plain call (`echo`), to A',
  first: 'first call of a round (`input_required`), to A',
  local: 'retry resumed where parked (sent to A)',
  forwarded: 'retry forwarded to its owner (sent to B)',
} as const;

function fleetSection(run: Run): string {
  const f = run.parts.fleet;
  if (!f) return '_Not measured in this run._';
  if (f.skipped) return `_Not measured in this run: ${f.skipped}._`;
  const g = f.goals;
  const mark = (holds: boolean) => (holds ? '✓' : '✗');
  const parts: string[] = [
    `Two replicas, A and B, of the real command \`mcp-dual-era serve --fleet ${f.redis?.url ?? 'redis://…'} --fleet-name ${f.fleetName ?? 'bench-…'}\`, and one \`serve\` ` +
      `without \`--fleet\`, compiled as installed, each in front of ${f.server}; on loopback, on the machine's Redis (${f.redis ? `Redis ${f.redis.version}` : 'version unknown'}), ` +
      "in a fleet of the bench's own whose keys it deletes at the end. Every answer checked." +
      (f.serveOptions?.length
        ? ` Every \`serve\` also ran with \`${f.serveOptions.join(' ')}\`: one upstream session for the bench's caller in each, so that all of them serve their calls on the same ` +
          'number of server processes (left to itself, a front opens as many sessions as its first concurrent calls happen to race for, and on two cores the number of server processes moves throughput far more than the front does).'
        : ''),
  ];
  const r = f.retry;
  if (r) {
    parts.push(
      '',
      `**A retry forwarded to its owner, against one resumed where it was parked.** Each round's first call goes to A (answered \`input_required\` with a signed ` +
        '`requestState`, once its round is gathered); its retry goes to A, where the call is parked, or to B, which looks A up in the directory ' +
        '(one Redis GET) and forwards it there signed. One call at a time; local and forwarded rounds alternate, and which of the two goes first alternates ' +
        `too, so drift hits both; ${int.format(r.pairs)} pairs after ${r.warm} unmeasured. Only the retry is timed. Goal: at most ${g.maxAddedP50Ms} ms added at p50.` +
        (r.bare
          ? ' A third round, in turn with the other two, sends its retry through a bare hop to A (bench/fleet/bareHop.mjs: a Node process that passes each request on to A over kept-alive connections and streams the answer back, and does nothing else): ' +
            'what any forwarding through a Node process costs on this machine, so that what ours adds beside it is read apart.'
          : ''),
      '',
      table(
        ['retry', 'n', 'p50', 'p99', 'mean', 'added p50', 'added p99', 'goal'],
        [
          [FLEET_PHASES.local, int.format(r.local.n), us(r.local.p50Us), us(r.local.p99Us), us(r.local.meanUs), '–', '–', ''],
          [
            FLEET_PHASES.forwarded,
            int.format(r.forwarded.n),
            us(r.forwarded.p50Us),
            us(r.forwarded.p99Us),
            us(r.forwarded.meanUs),
            signedMs(r.addedP50Ms),
            signedMs(r.addedP99Ms),
            `${mark(r.addedP50Ms <= g.maxAddedP50Ms)} ≤ ${g.maxAddedP50Ms} ms`,
          ],
          ...(r.bare
            ? [
                [
                  'retry through a bare Node hop to A',
                  int.format(r.bare.n),
                  us(r.bare.p50Us),
                  us(r.bare.p99Us),
                  us(r.bare.meanUs),
                  signedMs((r.bare.p50Us - r.local.p50Us) / 1000),
                  signedMs((r.bare.p99Us - r.local.p99Us) / 1000),
                  '',
                ],
              ]
            : []),
        ],
        new Set([1, 2, 3, 4, 5, 6]),
      ),
      '',
      `Forwarded ÷ local at p50: ${formatRatio(r.ratioP50)}; the median over the pairs of forwarded − local: ${signedMs(r.pairedAddedMs)}. For scale, the first call of a round: p50 ${us(r.first.p50Us)}.` +
        (r.bare && r.pairedOverBareMs !== undefined
          ? ` The bare hop alone adds ${signedMs((r.bare.p50Us - r.local.p50Us) / 1000)} at p50: no forwarding through a second Node process comes in under that here. Ours over the bare hop, the median over the rounds: ${signedMs(r.pairedOverBareMs)} (the directory record read a moment ago, the body passed on as it came, the hop signed and verified).`
          : ''),
      ...(r.cpuUsPerRetry
        ? [
            '',
            `CPU time per retry, read from \`/proc\` around each one (a mean over the retries): resumed locally, A ${us(r.cpuUsPerRetry.local.a)}; ` +
              `forwarded, B ${us(r.cpuUsPerRetry.forwarded.b)} (the lookup, the signed hop and passing the answer back) and A ${us(r.cpuUsPerRetry.forwarded.a)}. ` +
              'Every process shares the same cores, so on this machine CPU time spent on the way is time added to the call.',
          ]
        : []),
    );
  }
  const t = f.throughput;
  if (t) {
    parts.push(
      '',
      `**Plain-call throughput of a replica in a fleet, against \`serve\` alone.** Modern \`tools/call\` of \`echo\` (it never pushes), ${t.concurrency} in flight ` +
        `from one closed-loop load generator, to replica A and to the lone \`serve\` in turn: ${t.warmupMs / 1000} s of warm-up each, then ${t.rounds} rounds of ` +
        `${t.roundMs / 1000} s each (after an unmeasured lead-in of ${t.leadInMs} ms), the order swapping every round. Goal: at least ${g.minThroughputRatio}× the lone \`serve\`.`,
      '',
      table(
        ['front', 'calls/s', 'p50', 'p99', 'wrong answers', 'upstream processes'],
        [
          [
            'replica in a fleet (`serve --fleet`)',
            int.format(t.fleet.callsPerSecond),
            us(t.fleet.p50Us),
            us(t.fleet.p99Us),
            String(t.fleet.errors),
            t.fleet.upstreamProcesses === undefined ? '–' : String(t.fleet.upstreamProcesses),
          ],
          [
            '`serve` alone',
            int.format(t.alone.callsPerSecond),
            us(t.alone.p50Us),
            us(t.alone.p99Us),
            String(t.alone.errors),
            t.alone.upstreamProcesses === undefined ? '–' : String(t.alone.upstreamProcesses),
          ],
        ],
        new Set([1, 2, 3, 4, 5]),
      ),
      '',
      `Replica in a fleet ÷ \`serve\` alone: **${formatRatio(t.ratio)}** ${mark(t.ratio >= g.minThroughputRatio)} (goal ≥ ${g.minThroughputRatio}×); the median of the per-round ratios: ${formatRatio(t.pairedRatio)}.`,
    );
  }
  const c = f.commands;
  if (c) {
    const goalOf = (key: string, v: number): string => {
      if (key === 'plain') return `${mark(v <= g.plainCommandsPerCall)} ${g.plainCommandsPerCall}`;
      if (key === 'forwarded')
        return `${mark(v <= g.forwardedCommandsPerRetry)} ${g.forwardedCommandsPerRetry} (the GET of the owner's record)`;
      return '';
    };
    const which = (by: Readonly<Record<string, number>>) =>
      Object.entries(by)
        .map(([k, n]) => `${k} ×${int.format(n)}`)
        .join(', ') || '–';
    parts.push(
      '',
      `**Redis commands per call.** ${FLEET_COUNT_NOTE} Plain calls ${c.concurrency} at a time; rounds one at a time, local and forwarded alternating.`,
      '',
      table(
        ['phase', 'calls', 'commands', 'per call', 'goal', 'which (replica: command key)'],
        c.phases.map((p) => [
          FLEET_PHASES[p.key],
          p.key === 'idle' ? `${c.idleSeconds.toFixed(1)} s` : int.format(p.calls),
          int.format(p.commands),
          perCall(p.perCall),
          goalOf(p.key, p.perCall),
          which(p.byCommand),
        ]),
        new Set([1, 2, 3]),
      ),
      '',
      `The heartbeat, counted apart: ${int.format(c.heartbeat.commands)} commands in ${c.heartbeat.seconds.toFixed(1)} s, ${c.heartbeat.perReplicaPerSecond.toFixed(2)} per replica per second ` +
        `(${which(c.heartbeat.byCommand)}). Commands on the fleet's keys from connections that are neither a replica's nor the bench's: ${c.unattributed}.`,
    );
  }
  const problems = [...f.wrongSamples.map((w) => `wrong answer: ${w}`), ...f.failures.map((x) => `failure: ${x}`)];
  if (problems.length > 0)
    parts.push(
      '',
      `**${f.wrongAnswers} wrong answer(s), ${f.failures.length} failure(s):**`,
      '',
      ...problems.map((p) => `- ${p.split('\n')[0]}`),
    );
  return parts.join('\n');
}

/**
 * The wrap's table for the README: every contender at each concurrency, the ratios the goals are
 * about, and where the figures come from.
 */
export function renderReadmeWrap(run: Run): string {
  const w = run.parts.wrap;
  if (!w) return '_The last full run did not measure the wrap._';
  const g = w.goals.definition;
  const concs = concurrenciesOf(w.cells);
  const labels = [...new Set(w.cells.map((x) => x.label))];
  const cell = (label: string, conc: number) => w.cells.find((x) => x.label === label && x.concurrency === conc);
  const rows = labels.map((label) => [
    label,
    ...concs.flatMap((conc) => {
      const c = cell(label, conc);
      return c ? [int.format(c.callsPerSecond), us(c.p50Us)] : ['–', '–'];
    }),
  ]);
  const relayed = (w.comparisons.stdioVsRelay ?? []).length > 0;
  const relayRatio = (conc: number): string => {
    const r = at(w.comparisons.stdioVsRelay ?? [], conc);
    if (!r) return '–';
    return g.minStdioVsRelay === undefined
      ? formatRatio(r.throughputRatio)
      : `${formatRatio(r.throughputRatio)} ${r.throughputRatio >= g.minStdioVsRelay ? '✓' : '✗'}`;
  };
  /** A relay below the byte relay, at `conc`: it ÷ the byte relay, and the wrap over stdio ÷ it (none when it was not measured). */
  const floorRatios = (
    floor: readonly WrapComparison[] | undefined,
    ours: readonly WrapComparison[] | undefined,
    conc: number,
    goal?: number,
  ): string[] => {
    if (!floor?.length) return [];
    const f = at(floor, conc);
    const o = at(ours ?? [], conc);
    const held = (r: WrapComparison): string =>
      goal === undefined ? formatRatio(r.throughputRatio) : `${formatRatio(r.throughputRatio)} ${r.throughputRatio >= goal ? '✓' : '✗'}`;
    return [f ? formatRatio(f.throughputRatio) : '–', o ? held(o) : '–'];
  };
  const parsed = (w.comparisons.parsingRelayVsRelay ?? []).length > 0;
  const translated = (w.comparisons.translatingRelayVsRelay ?? []).length > 0;
  const ratioRows = concs.map((conc) => {
    const p = at(w.comparisons.vsPassthrough, conc);
    const m = at(w.comparisons.vsProxy, conc);
    return [
      String(conc),
      p ? `${formatRatio(p.throughputRatio)} ${p.throughputRatio >= g.minVsPassthrough ? '✓' : '✗'}` : '–',
      p && conc === g.addedP50Concurrency
        ? `${signedUs(p.addedP50Us)} ${p.addedP50Us <= g.maxAddedP50Us ? '✓' : '✗'}`
        : p
          ? signedUs(p.addedP50Us)
          : '–',
      m ? `${formatRatio(m.throughputRatio)} ${m.throughputRatio >= g.minVsMcpProxy ? '✓' : '✗'}` : '–',
      ...(relayed ? [relayRatio(conc)] : []),
      ...floorRatios(w.comparisons.parsingRelayVsRelay, w.comparisons.stdioVsParsingRelay, conc),
      ...floorRatios(w.comparisons.translatingRelayVsRelay, w.comparisons.stdioVsTranslatingRelay, conc, g.minStdioVsTranslatingRelay),
    ];
  });
  // The other ratios users wait on: an MRTR round on the fronts they call through, a fresh probe.
  const others = figuresOf(run).filter(
    (f) =>
      (f.section === 'MRTR' && f.goal && /collectMs 15(,|$)/.test(f.label)) ||
      (f.section === 'Probe' && f.label.startsWith('fresh probe ÷')),
  );
  const otherRows = others.map((f) => [
    f.label.replace(', collectMs 15', '').replace(MRTR_HOISTED, ', server with its schema built once'),
    `${formatRatio(f.value)}${f.goal ? ` ${goalHolds(f) ? '✓' : '✗'}` : ''}`,
    f.goal ? `${f.goal.op} ${formatRatio(f.goal.value)}` : '–',
  ]);
  return [
    `From the full run of ${runDate(run)} at commit \`${runCommit(run)}\` (${run.machine.cores} × ${run.machine.cpuModel}; all of [bench/RESULTS.md](../bench/RESULTS.md)). ` +
      'Calls per second and p50 latency of modern `tools/call` requests, one closed-loop load generator, every answer checked:',
    '',
    table(
      ['contender', ...concs.flatMap((conc) => [`c=${conc} calls/s`, `c=${conc} p50`])],
      rows,
      new Set(concs.flatMap((_, i) => [1 + 2 * i, 2 + 2 * i])),
    ),
    '',
    `The wrap against its goals (✓ held, ✗ missed in this run): over HTTP, throughput ≥ ${g.minVsPassthrough}× the pass-through, ` +
      `at most ${g.maxAddedP50Us} µs added p50 at concurrency ${g.addedP50Concurrency}, ≥ ${g.minVsMcpProxy}× mcp-proxy` +
      (relayed && g.minStdioVsRelay !== undefined ? `; over stdio, throughput ≥ ${g.minStdioVsRelay}× the stdio relay` : '') +
      (translated && g.minStdioVsTranslatingRelay !== undefined
        ? `; over stdio, throughput ≥ ${g.minStdioVsTranslatingRelay}× the translating relay`
        : '') +
      ':',
    '',
    table(
      [
        'concurrency',
        'wrap ÷ pass-through',
        'added p50',
        'wrap ÷ mcp-proxy',
        ...(relayed ? ['wrap (stdio) ÷ stdio relay'] : []),
        ...(parsed ? ['parsing relay ÷ stdio relay', 'wrap (stdio) ÷ parsing relay'] : []),
        ...(translated ? ['translating relay ÷ stdio relay', 'wrap (stdio) ÷ translating relay'] : []),
      ],
      ratioRows,
      new Set(ratioRows[0]?.map((_, i) => i) ?? []),
    ),
    ...(parsed
      ? [
          '',
          'The parsing relay decodes and encodes every line and does nothing else: what it keeps of the byte relay is the most any stdio front that reads its messages can keep.',
        ]
      : []),
    ...(translated
      ? [
          '',
          'The translating relay turns modern requests into legacy ones and the answers back, and does nothing else (no checks, sessions, cancellation or deadlines): what it keeps of the byte relay is the most any translating stdio front can keep.',
        ]
      : []),
    ...(otherRows.length > 0
      ? [
          '',
          'An MRTR round (the first call answered `input_required`, then the retry) ÷ a plain call through the same front, and a fresh probe ÷ what a legacy client pays to connect, at p50:',
          '',
          table(['ratio', 'this run', 'goal'], otherRows, new Set([1, 2])),
        ]
      : []),
  ].join('\n');
}

/** How far apart two ratios may be and still count as the same, on this kind of machine. */
const SAME_WITHIN = 0.1;

/**
 * The headline ratios of `run` beside those of full runs on other Node lines: each is measured
 * side by side within its own run, so a ratio that moves says the two Nodes treat the two sides
 * differently, not that one machine was busier.
 */
function otherNodes(run: Run, others: readonly Run[]): string {
  const mine = figuresOf(run);
  const theirs = others.map((o) => new Map(figuresOf(o).map((f) => [`${f.section}|${f.label}`, f])));
  const rows = mine.map((f) => {
    const cells = theirs.map((t) => t.get(`${f.section}|${f.label}`));
    const apart = cells.some((c) => c && Math.abs(c.value / f.value - 1) > SAME_WITHIN);
    const marks = cells.map((c) => {
      if (!c) return '–';
      const holds = goalHolds(c);
      return `${formatRatio(c.value)}${holds === false ? ' (missed)' : ''}`;
    });
    const holds = goalHolds(f);
    return [
      f.section,
      f.label,
      `${formatRatio(f.value)}${holds === false ? ' (missed)' : ''}`,
      ...marks,
      f.goal ? `${f.goal.op} ${formatRatio(f.goal.value)}` : '–',
      apart ? `apart by more than ${SAME_WITHIN * 100}%` : '',
    ];
  });
  const names = [run, ...others].map((r) => `Node ${r.machine.node}`);
  return [
    `The same full bench, run with \`npm run bench -- --node=PATH\` on ${others.map((o) => `Node ${o.machine.node} (${runDate(o)}, commit \`${runCommit(o)}\`)`).join(', ')}, ` +
      `beside this run on Node ${run.machine.node}. Every ratio is measured within its own run, so two runs are compared ratio by ratio; ` +
      `ratios more than ${SAME_WITHIN * 100}% apart are marked (single runs on a shared 2-core machine move by several percent on their own).`,
    '',
    table(['section', 'ratio', ...names, 'goal', ''], rows, new Set([2, 3, 4].slice(0, names.length))),
  ].join('\n');
}

function callersSection(run: Run): string {
  const c = run.parts.callers;
  if (!c) return '_Not measured in this run._';
  const intro =
    `Distinct callers (each a bearer token never seen before), one \`echo\` call each, ${c.concurrency} at a time, through each front of ` +
    'server-everything over stdio: `serve` isolated (a session, so a server process, per caller), `serve --share-sessions`, mcp-proxy ' +
    "(one shared session) and the pass-through (one server, no translation). Servers: server processes at the wave's peak; MB: the front " +
    "and everything under it, at the peak. p99 ÷ mcp-proxy: this front's p99 over mcp-proxy's for the same number of callers.";
  const base = new Map(c.waves.filter((w) => w.front === 'mcp-proxy').map((w) => [w.callers, w.p99Ms]));
  const rows = c.waves.map((w) => {
    const b = base.get(w.callers);
    return [
      w.label,
      int.format(w.callers),
      `${w.answered}/${w.callers}`,
      int.format(w.perSecond),
      ms(w.p50Ms),
      ms(w.p99Ms),
      b === undefined ? '–' : formatRatio(w.p99Ms / b),
      int.format(w.servers),
      int.format(w.memoryMb),
    ];
  });
  return `${intro}\n\n${table(['front', 'callers', 'answered', 'calls/s', 'p50 ms', 'p99 ms', 'p99 ÷ mcp-proxy', 'servers', 'MB'], rows, new Set([1, 2, 3, 4, 5, 6, 7, 8]))}`;
}

function frontSection(run: Run): string {
  const f = run.parts.front;
  if (!f) return '_Not measured in this run._';
  const row = (label: string, m: { usPerCall: number; bytesPerCall: number }) => [
    label,
    m.usPerCall.toFixed(1),
    int.format(m.bytesPerCall),
  ];
  const rows = [row('parse + re-serialise only', f.minimal), row('the wrap (`wrap.node`)', f.wrapped)];
  const t = f.traced;
  if (f.metrics) rows.push(row('metrics on (`--metrics`), no SDK registered', f.metrics));
  if (t)
    rows.push(row('every request traced, spans that cost nothing', t.standIn), row('every request traced, the OpenTelemetry SDK', t.sdk));
  const s = f.sampled;
  if (s)
    rows.push(
      row('both off (in turn with the next two)', s.bothOff),
      row('a tenth sampled, stand-ins that cost nothing, metrics on', s.standIn),
      row('a tenth sampled by the OpenTelemetry SDK, metrics on', s.sdk),
    );
  const intro =
    'What the HTTP front itself costs per modern `tools/call`, with no process, pipe or socket in the way (`npm run bench:front`): CPU time and bytes ' +
    `allocated per call through \`wrap.node\`, median of ${f.rounds} rounds of ${int.format(f.calls)} calls, against a front that only parses and re-serialises the same ` +
    "messages. The wrap is the library compiled as its package ships it (run through tsx, every closure the front makes would also pay for the loader's name-keeping helper); the bench's own code runs through tsx, so compare its figures with each other. Then metrics on, no SDK registered (in turn with the wrap untraced), and every request traced: first with a stand-in SDK whose " +
    'spans record (as far as our code can tell) and a stand-in propagator, both costing nothing, in turn round by round with the wrap untraced (our own ' +
    'part: the median of the differences between rounds taken side by side), then with the OpenTelemetry SDK and its W3C propagator registered as a user would (spans batched ' +
    "to memory: the rest is the SDK's own, the propagator's work timed apart)." +
    (f.sampled
      ? ' Last, as the wrap bench runs its sampled front, a tenth of the requests sampled (a parent-based sampler whose remote-parent branch takes every tenth) with metrics on, ' +
        'in turn round by round with both off: with stand-ins that cost nothing (a tenth of the spans recording, the rest one non-recording span, and the stand-in propagator), ' +
        "our own part (metrics included), then with the OpenTelemetry SDK and its W3C propagator: the rest is the SDK's own."
      : '');
  const split = t
    ? `Tracing every request adds ${(t.sdk.usPerCall - (t.plain ?? f.wrapped).usPerCall).toFixed(1)} µs a call (${t.spansPerCall.toFixed(0)} spans): our own part ${t.ownUsPerCall.toFixed(1)} µs ` +
      `(goal ≤ ${t.goalOwnUs} µs: ${t.ownUsPerCall <= t.goalOwnUs ? 'met' : '**missed**'}), the SDK's own ${t.sdkUsPerCall.toFixed(1)} µs (its W3C propagator's ${t.propagatorUsPerCall.toFixed(1)} µs included).`
    : '';
  const metricsUs = f.metricsUsPerCall ?? (f.metrics && t?.plain ? f.metrics.usPerCall - t.plain.usPerCall : undefined);
  const metrics = metricsUs !== undefined ? `Metrics on add ${metricsUs.toFixed(1)} µs a call. ` : '';
  const sampled = s
    ? ` A tenth of the requests sampled, metrics on, adds ${(s.ownUsPerCall + s.sdkUsPerCall).toFixed(1)} µs a call: our own part ${s.ownUsPerCall.toFixed(1)} µs (metrics included), the SDK's own ${s.sdkUsPerCall.toFixed(1)} µs.`
    : '';
  return `${intro}\n\n${table(['front', 'µs/call', 'bytes/call'], rows, new Set([1, 2]))}${split || metrics || sampled ? `\n\n${metrics}${split}${sampled}` : ''}`;
}

/** The whole of bench/RESULTS.md. */
export function renderResults(run: Run, chartFile: string, others: readonly Run[] = [], othersNote?: string): string {
  const failed = Object.entries(run.exitCodes).filter(([, code]) => code !== 0);
  const out = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${runDate(run)} from commit \`${runCommit(run)}\`; \`npm run bench:report\` writes it again from a saved run ` +
      '(`bench/results/latest.json`, or a file given as its argument). Every figure is a ratio measured side by side in this one run.',
  ];
  if (run.quick || run.args.length > 0)
    out.push('', `> **Not a full run** (\`${run.args.join(' ')}\`): a smoke check; the numbers are not figures to quote.`);
  if (failed.length > 0)
    out.push(
      '',
      `> **Some benches reported wrong answers or failures** (${failed.map(([k, c]) => `${k}: exit ${c}`).join(', ')}); their figures are incomplete.`,
    );
  out.push(
    '',
    `![Headline ratios](${chartFile})`,
    '',
    '## Conditions',
    '',
    conditions(run),
    '',
    '## Peers',
    '',
    peers(run),
    '',
    '## Headline ratios',
    '',
    headline(run),
    '',
    '## 1. Translator against bare JSON parse + serialize',
    '',
    translator(run),
    '',
    '## 2. Wrapped calls against direct calls, a pass-through and mcp-proxy',
    '',
    wrapped(run),
    '',
    '## 3. MRTR: a full round against a plain call; memory per parked call',
    '',
    mrtrSection(run),
    '',
    '## 4. Probe cost',
    '',
    probeSection(run),
    '',
    "## 5. A stdio host's first answer",
    '',
    firstSection(run),
    '',
    '## 6. Fleet: a forwarded retry, plain-call throughput, Redis commands per call',
    '',
    fleetSection(run),
    '',
    '## 7. Many callers: distinct callers through one front',
    '',
    callersSection(run),
    '',
    "## 8. The front's own cost, and tracing",
    '',
    frontSection(run),
    '',
    '## 9. Tasks: a `tasks/get` poll against a plain call, in one process and forwarded',
    '',
    tasksSection(run),
    '',
  );
  if (others.length > 0) out.push('## 10. On other Node lines', '', otherNodes(run, others), '', ...(othersNote ? [othersNote, ''] : []));
  return out.join('\n');
}
