import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { README_END, README_START, readRun, renderReport, updateReadme, writeReport } from '../../bench/report.ts';
import { figuresOf, goalHolds } from '../../bench/report/figures.ts';
import type { Run } from '../../bench/report/types.ts';

const comparison = (concurrency: number, throughputRatio: number) => ({
  concurrency,
  candidate: 'wrap-http' as const,
  reference: 'passthrough' as const,
  throughputRatio,
  addedP50Us: 80,
  addedP99Us: 400,
});
const latency = (p50Us: number) => ({ n: 100, p50Us, p99Us: p50Us * 3, meanUs: p50Us * 1.2 });
const timing = (p50Ms: number, p99Ms: number, n = 60) => ({ n, p50Ms, p99Ms, meanMs: p50Ms * 1.1 });

/** A small combined run with one of each kind of figure. */
function sampleRun(): Run {
  return {
    schema: 1,
    generatedAt: '2026-11-30T12:34:56.000Z',
    args: [],
    quick: false,
    commit: { hash: '0123456789abcdef0123456789abcdef01234567', dirty: false },
    machine: { cpuModel: 'Test CPU', cores: 2, memoryBytes: 8 * 2 ** 30, os: 'Test OS', kernel: '6.0', arch: 'x64', node: 'v20.0.0' },
    load: { start: [0.5, 0.4, 0.3], end: [0.7, 0.5, 0.3] },
    peers: [{ name: 'mcp-proxy', version: '6.7.19', role: 'comparison' }],
    exitCodes: { translate: 0, wrap: 0, mrtr: 0, probe: 0 },
    elapsedSeconds: 900,
    parts: {
      translate: {
        options: { sampleMs: 200, samples: 5, quick: false },
        goal: { maxRatio: 1.5, sizes: ['small', 'medium'] },
        results: [
          {
            case: 'tools/call request',
            direction: 'legacy→modern',
            size: 'small',
            bytes: 200,
            baselineNsPerMsg: 2000,
            translateNsPerMsg: 1000,
            ratio: 0.5,
            pairedRatio: 0.5,
          },
          {
            case: 'tools/call request',
            direction: 'legacy→modern',
            size: 'medium',
            bytes: 10_000,
            baselineNsPerMsg: 40_000,
            translateNsPerMsg: 2000,
            ratio: 0.05,
            pairedRatio: 0.05,
          },
          {
            case: 'tools/call request',
            direction: 'legacy→modern',
            size: 'large',
            bytes: 1_000_000,
            baselineNsPerMsg: 4_000_000,
            translateNsPerMsg: 8_000_000,
            ratio: 2,
            pairedRatio: 2,
          },
        ],
      },
      wrap: {
        wrap: { commit: '0123456', source: 'lib/ of the working tree, as committed' },
        options: { quick: false, slices: 5, sliceMs: 1000, warmupMs: 3000, startWarmupMs: 15_000 },
        goals: { definition: { minVsPassthrough: 0.85, minVsMcpProxy: 2.5, maxAddedP50Us: 100, addedP50Concurrency: 1 } },
        comparisons: {
          vsPassthrough: [comparison(1, 0.8), comparison(16, 0.9)],
          vsProxy: [comparison(1, 4)],
          vsDirectSdk: [comparison(1, 0.3)],
          stdioVsSdk: [comparison(1, 0.6)],
          stdioVsRaw: [],
        },
        cells: [
          {
            contender: 'wrap-http',
            label: 'wrap (HTTP)',
            concurrency: 1,
            calls: 1000,
            callsPerSecond: 1600,
            p50Us: 550,
            p99Us: 2000,
            meanUs: 600,
            errors: 0,
            errorSamples: [],
            cpu: { generatorUs: 200, frontUs: 300, serverUs: 150, otherBusy: 0.02, machineBusy: 0.9 },
          },
        ],
        failures: [],
      },
      mrtr: {
        quick: false,
        n: 5000,
        goalBeyondMessagesBytes: 4096,
        perParkedCall: {
          direct: {
            total: 35_000,
            rss: 40_000,
            idle: 30_000,
            wrapAlone: 3800,
            session: 100,
            call: 3700,
            beyond: 3072,
            beyondWithSession: 3500,
          },
        },
        memory: {
          server: {
            pushJsonBytes: 206,
            paramsJsonBytes: 240,
            paramsHeapPerCopy: 280,
            serverPerSuspended: 31_000,
            serverPerFinished: 28_000,
          },
        },
        latency: {
          cells: [
            {
              transport: 'node-http',
              collectMs: 15,
              echo: latency(400),
              rounds: { first: latency(16_000), retry: latency(2000), round: latency(18_000) },
              ratioP50: 45,
              ratioP99: 40,
              pairedRatio: 44,
            },
          ],
          serverAlone: { echo: latency(30), round: latency(400) },
        },
        failures: [],
      },
      probe: {
        options: { quick: false },
        targets: [
          {
            key: 'stdio',
            label: 'stdio',
            server: 'echo server',
            rounds: 60,
            rows: [
              { key: 'connect', label: 'legacy client connects', stats: timing(200, 300), ratioP50: 1, ratioP99: 1, pairedRatio: 1 },
              { key: 'probe', label: 'probe, fresh', stats: timing(210, 320), ratioP50: 1.05, ratioP99: 1.07, pairedRatio: 1.04 },
              {
                key: 'cached',
                label: 'probe, cached',
                stats: timing(0.004, 0.05, 6000),
                ratioP50: 2e-5,
                ratioP99: 1.7e-4,
                pairedRatio: 2e-5,
              },
            ],
            errors: 0,
            errorSamples: [],
          },
        ],
        failures: [],
      },
      first: {
        options: { quick: false, rounds: 30 },
        goal: { p50Ms: 500, aiSdkDiscoveryMs: 1000 },
        targets: [
          {
            key: 'everything',
            label: 'server-everything',
            rows: [
              {
                key: 'alone',
                label: 'the server alone: initialize',
                stats: { n: 30, p50Ms: 360, p99Ms: 400, meanMs: 365 },
                ratioP50: 1,
                addedP50Ms: 0,
                withinDiscovery: 30,
              },
              {
                key: 'connect',
                label: 'connect: server/discover',
                stats: { n: 30, p50Ms: 450, p99Ms: 520, meanMs: 455 },
                ratioP50: 1.25,
                addedP50Ms: 90,
                withinDiscovery: 30,
              },
              {
                key: 'serve-stdio',
                label: 'serve --stdio: server/discover',
                stats: { n: 30, p50Ms: 600, p99Ms: 1100, meanMs: 640 },
                ratioP50: 1.67,
                addedP50Ms: 240,
                withinDiscovery: 28,
              },
            ],
            errors: 0,
            errorSamples: [],
          },
        ],
        failures: [],
      },
    },
  };
}

const figures = suite('figuresOf');
figures('should hold each figure to its goal', () => {
  const all = figuresOf(sampleRun());
  const find = (label: string) => all.find((f) => f.label === label);
  // The translator figure is the worst of the sizes the goal covers (small and medium), not the large one.
  assert.is(find('tools/call request legacy→modern, ≤ 10 KB')?.value, 0.5);
  assert.is(goalHolds(find('tools/call request legacy→modern, ≤ 10 KB')!), true);
  assert.is(goalHolds(find('wrap ÷ pass-through, c=1')!), false);
  assert.is(goalHolds(find('wrap ÷ pass-through, c=16')!), true);
  assert.is(goalHolds(find('wrap ÷ mcp-proxy, c=1')!), true);
  assert.is(find('parked call beyond messages ÷ 4 KB')?.value, 0.75);
  assert.is(goalHolds(find('round ÷ plain call, Node HTTP, collectMs 15')!), false, 'a round of 45 plain calls misses the goal of 4');
  assert.is(find('cached probe ÷ connect, stdio')?.value, 2e-5);
  assert.is(find('connect p50 ÷ 500 ms, server-everything')?.value, 0.9);
  assert.is(goalHolds(find('connect p50 ÷ 500 ms, server-everything')!), true);
  assert.is(goalHolds(find('serve --stdio p50 ÷ 500 ms, server-everything')!), false);
});
figures('should leave out what a run did not measure', () => {
  const run = sampleRun();
  const partial: Run = { ...run, parts: { translate: run.parts.translate! } };
  const left = figuresOf(partial);
  assert.ok(left.length > 0, 'the translator figures are still there');
  assert.ok(left.every((f) => f.section === 'Translator'));
});
figures.run();

const report = suite('renderReport');
report('should write the conditions, every table with its ratio column, and the chart link', () => {
  const { markdown } = renderReport(sampleRun());
  assert.match(markdown, '| CPU | Test CPU, 2 cores (x64) |');
  assert.match(markdown, '`0123456789`');
  assert.match(markdown, '![Headline ratios](chart.svg)');
  assert.match(markdown, '| Wrapped calls | wrap ÷ pass-through, c=1 | 0.80× | ≥ 0.85× | **missed** |');
  assert.match(markdown, '| Wrapped calls | wrap ÷ mcp-proxy, c=1 | 4.00× | ≥ 2.50× | met |');
  assert.match(markdown, '| 1 | 0.80× (missed) | +80 µs | 4.00× | 0.30× | 0.60× | – |');
  assert.match(markdown, '| stdio | probe, fresh | 60 | 210 | 320 | 1.05× | 1.07× | 1.04× |');
  assert.match(markdown, '| server-everything | connect: server/discover | 30 | 450 | 520 | 1.25× | +90.0 ms | 30/30 | ✓ |');
  assert.match(markdown, '| server-everything | serve --stdio: server/discover | 30 | 600 | 1100 | 1.67× | +240 ms | 28/30 | ✗ |');
  assert.match(markdown, '| serveModern | 34.18 KB | 3.71 KB | 0.10 KB | 3.61 KB | 3.00 KB | 0.75× |');
  assert.not.match(markdown, 'Not a full run');
});
report("should take away the server's share measured beside each MRTR cell, where the run has it", () => {
  const run = sampleRun();
  const mrtr = run.parts.mrtr!;
  const { markdown: after } = renderReport(run);
  // Without a share of its own, a cell has the one measured after every cell: 400 − 30 µs.
  assert.match(after, '| 45.0× | 40.0× | 44.0× | 44.1× |');
  const cell = { ...mrtr.latency!.cells[0]!, serverAlone: { echo: latency(30), round: latency(2030) } };
  const { markdown: beside } = renderReport({
    ...run,
    parts: { ...run.parts, mrtr: { ...mrtr, latency: { ...mrtr.latency!, cells: [cell] } } },
  });
  assert.match(beside, "| paired | server's share | without the server's share |");
  assert.match(beside, '| 44.0× | 2,000 µs | 40.0× |');
});
report(
  'should report a round in front of the server with its schema built once beside the one that builds it per call, each held to the goal',
  () => {
    const run = sampleRun();
    const mrtr = run.parts.mrtr!;
    const perCall = { ...mrtr.latency!.cells[0]!, server: 'inline' as const };
    const once = {
      ...perCall,
      server: 'hoisted' as const,
      rounds: { ...perCall.rounds, round: latency(1400) },
      ratioP50: 3.5,
      ratioP99: 3.5,
      pairedRatio: 3.5,
      serverAlone: { echo: latency(30), round: latency(50) },
    };
    const both: Run = { ...run, parts: { ...run.parts, mrtr: { ...mrtr, latency: { ...mrtr.latency!, cells: [perCall, once] } } } };
    const all = figuresOf(both);
    const find = (label: string) => all.find((f) => f.label === label);
    // With the schema compiled per elicitation, the round is reported as it is and our own part of it held to the goal.
    assert.is(find('round ÷ plain call, Node HTTP, collectMs 15')?.goal, undefined);
    const own = find("round without the server's share ÷ plain call, Node HTTP, collectMs 15")!;
    const share = perCall.serverAlone
      ? perCall.serverAlone.round.p50Us - perCall.serverAlone.echo.p50Us
      : mrtr.latency!.serverAlone.round.p50Us - mrtr.latency!.serverAlone.echo.p50Us;
    assert.is(own.value, (perCall.rounds.round.p50Us - share) / perCall.echo.p50Us);
    assert.is(own.goal?.value, 4);
    assert.is(find('round ÷ plain call, Node HTTP, collectMs 15, schema built once')?.value, 3.5);
    assert.is(goalHolds(find('round ÷ plain call, Node HTTP, collectMs 15, schema built once')!), true);
    const { markdown } = renderReport(both);
    assert.match(markdown, '| front | schema | collectMs | pairs |');
    assert.match(markdown, '| Node HTTP | per call | 15 | ');
    assert.match(markdown, '| Node HTTP | once | 15 | ');
    const dir = mkdtempSync(join(tmpdir(), 'readme-'));
    try {
      const file = join(dir, 'README.md');
      writeFileSync(file, `# x\n\n${README_START}\n${README_END}\n`);
      assert.ok(updateReadme(file, both));
      const readme = readFileSync(file, 'utf8');
      assert.not.match(readme, '| round ÷ plain call, Node HTTP | 45.0×');
      assert.match(readme, "| round without the server's share ÷ plain call, Node HTTP |");
      assert.match(readme, '| round ÷ plain call, Node HTTP, server with its schema built once | 3.50× ✓ | ≤ 4.00× |');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
report('should read our own part of a round beside a per-call server from the cell that measured it, where the run has one', () => {
  const run = sampleRun();
  const mrtr = run.parts.mrtr!;
  const perCall = { ...mrtr.latency!.cells[0]!, server: 'inline' as const };
  const once = { ...perCall, server: 'hoisted' as const, ratioP50: 3.5, serverAlone: { echo: latency(30), round: latency(50) } };
  const beside = { ...once, beside: 'inline' as const, ratioP50: 3.2, serverAlone: { echo: latency(60), round: latency(600) } };
  const all = figuresOf({
    ...run,
    parts: { ...run.parts, mrtr: { ...mrtr, latency: { ...mrtr.latency!, cells: [perCall, once, beside] } } },
  });
  const find = (label: string) => all.find((f) => f.label === label);
  const own = find('round ÷ plain call, Node HTTP, collectMs 15, schema built once, beside a per-call server')!;
  assert.is(own.value, 3.2);
  assert.is(own.goal?.value, 4, 'the cell beside a per-call server is held to the goal');
  assert.ok(
    find("round without the server's share ÷ plain call, Node HTTP, collectMs 15"),
    'the round less the share alone is still reported',
  );
  assert.is(find("round without the server's share ÷ plain call, Node HTTP, collectMs 15")!.goal, undefined, '…without the goal');
  assert.is(find('round ÷ plain call, Node HTTP, collectMs 15, schema built once')?.goal?.value, 4);
  const { markdown } = renderReport({
    ...run,
    parts: { ...run.parts, mrtr: { ...mrtr, latency: { ...mrtr.latency!, cells: [perCall, once, beside] } } },
  });
  assert.match(markdown, '| Node HTTP | once, beside per call | 15 | ');
  assert.match(markdown, 'read from the "once, beside per call" row');
  // Without such a cell, the round less the share alone keeps the goal.
  const without = figuresOf({ ...run, parts: { ...run.parts, mrtr: { ...mrtr, latency: { ...mrtr.latency!, cells: [perCall, once] } } } });
  assert.is(without.find((f) => f.label === "round without the server's share ÷ plain call, Node HTTP, collectMs 15")?.goal?.value, 4);
});
report('should report a legacy client through serve --stdio against the byte relay, with no goal, where the run measured it', () => {
  const run = sampleRun();
  const wrap = run.parts.wrap!;
  const legacyCell = { ...wrap.cells[0]!, contender: 'wrap-stdio-legacy' as const, label: 'wrap (stdio), legacy client' };
  const measured: Run = {
    ...run,
    parts: {
      ...run.parts,
      wrap: {
        ...wrap,
        cells: [...wrap.cells, legacyCell],
        comparisons: { ...wrap.comparisons, stdioLegacyVsRelay: [comparison(1, 0.93)] },
      },
    },
  };
  const figure = figuresOf(measured).find((f) => f.label === 'wrap (stdio), legacy client ÷ stdio relay, c=1');
  assert.is(figure?.value, 0.93);
  assert.is(figure?.goal, undefined);
  const { markdown } = renderReport(measured);
  assert.match(markdown, '| wrap (stdio), legacy client ÷ stdio relay |');
  assert.match(markdown, 'a legacy client of `serve --stdio`');
  assert.not.match(renderReport(run).markdown, 'legacy client ÷ stdio relay', 'a run without it has no such column');
});
report('should hold a round through serve --stdio as its own process to the goal too, and say what that front is', () => {
  const run = sampleRun();
  const mrtr = run.parts.mrtr!;
  const http = mrtr.latency!.cells[0]!;
  const processes = {
    ...http,
    transport: 'stdio-process' as const,
    server: 'hoisted' as const,
    ratioP50: 3.1,
    ratioP99: 1.5,
    pairedRatio: 3.05,
  };
  const both: Run = { ...run, parts: { ...run.parts, mrtr: { ...mrtr, latency: { ...mrtr.latency!, cells: [http, processes] } } } };
  const found = figuresOf(both).find((f) => f.label === 'round ÷ plain call, stdio (processes), collectMs 15, schema built once');
  assert.is(found?.value, 3.1);
  assert.is(goalHolds(found!), true);
  const { markdown } = renderReport(both);
  assert.match(markdown, '"stdio (processes)" is `serve --stdio` as users run it');
  assert.match(markdown, '| stdio (processes) | once | 15 | ');
  assert.not.match(renderReport(run).markdown, 'stdio (processes)', 'a run without that front does not describe it');
});
report('should report the callers waves with answered counts and p99 over mcp-proxy for the same callers', () => {
  const run = sampleRun();
  const wave = (front: string, label: string, callers: number, answered: number, p99Ms: number) => ({
    front,
    label,
    callers,
    answered,
    wallMs: 1000,
    perSecond: answered,
    p50Ms: p99Ms / 2,
    p99Ms,
    servers: 1,
    memoryMb: 200,
    failures: {},
  });
  const callers = {
    callers: [1000],
    concurrency: 32,
    waves: [
      wave('wrap-shared', 'serve --share-sessions', 1000, 1000, 75),
      wave('mcp-proxy', 'mcp-proxy 6.7.19', 1000, 1000, 150),
      wave('wrap', 'serve (isolated)', 1000, 990, 9000),
    ],
  };
  const { markdown } = renderReport({ ...run, parts: { ...run.parts, callers } });
  assert.match(markdown, '## 7. Many callers: distinct callers through one front');
  assert.match(markdown, '| serve --share-sessions | 1,000 | 1000/1000 | 1,000 | 37.5 | 75.0 | 0.50× | 1 | 200 |');
  assert.match(markdown, '| serve (isolated) | 1,000 | 990/1000 |');
  assert.match(renderReport(run).markdown, /## 7\. Many callers[^\n]*\n\n_Not measured in this run\._/);
});

report("should hold our own part of a traced request to its goal and report the SDK's own beside it", () => {
  const run = sampleRun();
  const m = (usPerCall: number) => ({ usPerCall, bytesPerCall: 1000 });
  const front = {
    calls: 30_000,
    rounds: 7,
    minimal: m(9),
    wrapped: m(13),
    traced: { standIn: m(16), sdk: m(30), spansPerCall: 2, ownUsPerCall: 2, sdkUsPerCall: 15, propagatorUsPerCall: 1, goalOwnUs: 3 },
  };
  const withFront: Run = { ...run, parts: { ...run.parts, front } };
  const figure = figuresOf(withFront).find((f) => f.section === 'Tracing')!;
  assert.is(figure.label, 'our own part of a traced request ÷ 3 µs');
  assert.is(goalHolds(figure), true);
  const missed = figuresOf({ ...run, parts: { ...run.parts, front: { ...front, traced: { ...front.traced, ownUsPerCall: 4 } } } }).find(
    (f) => f.section === 'Tracing',
  )!;
  assert.is(goalHolds(missed), false);
  const { markdown } = renderReport(withFront);
  assert.match(markdown, "## 8. The front's own cost, and tracing");
  assert.match(markdown, "our own part 2.0 µs (goal ≤ 3 µs: met), the SDK's own 15.0 µs");
  assert.not.match(markdown, 'A tenth of the requests sampled', 'a run without the sampled rounds says nothing of them');
  const sampled = { bothOff: m(13), standIn: m(15.5), sdk: m(17), ownUsPerCall: 2.5, sdkUsPerCall: 1.5 };
  const withSampled = renderReport({ ...run, parts: { ...run.parts, front: { ...front, sampled } } }).markdown;
  assert.match(withSampled, '| a tenth sampled by the OpenTelemetry SDK, metrics on | 17.0 | 1,000 |');
  assert.match(
    withSampled,
    "A tenth of the requests sampled, metrics on, adds 4.0 µs a call: our own part 2.5 µs (metrics included), the SDK's own 1.5 µs.",
  );
  const metrics = { metrics: m(14.5), traced: { ...front.traced, plain: m(13) } };
  const byRounds = renderReport({ ...run, parts: { ...run.parts, front: { ...front, ...metrics, metricsUsPerCall: 1.2 } } }).markdown;
  assert.match(byRounds, 'Metrics on add 1.2 µs a call.', 'the figure the bench read from rounds side by side');
  const older = renderReport({ ...run, parts: { ...run.parts, front: { ...front, ...metrics } } }).markdown;
  assert.match(older, 'Metrics on add 1.5 µs a call.', 'a run from before it was: the difference of the medians');
});

report('should report a tasks/get poll against a plain call, in one process and forwarded, with no goal', () => {
  const run = sampleRun();
  const ratio = (label: string, candidate: string, baseline: string, ratioP50: number) => ({
    label,
    candidate,
    baseline,
    ratioP50,
    ratioP99: ratioP50 * 2,
    pairedRatio: ratioP50,
  });
  const tasks = {
    date: run.generatedAt,
    quick: false,
    node: 'v20.0.0',
    cpus: 2,
    loadAverage: 0.5,
    lib: 'lib/ compiled',
    server: 'the conformance fixture',
    serveOptions: ['--limit', 'sessions-per-caller=1'],
    oneProcess: {
      rounds: 2000,
      warm: 300,
      kinds: { poll: latency(700), plain: latency(875) },
      ratios: [ratio('tasks/get ÷ plain call, one process', 'poll', 'plain', 0.8)],
    },
    redis: { url: 'redis://127.0.0.1:6379', version: '7.0.0' },
    fleet: {
      rounds: 2000,
      warm: 300,
      kinds: { forwardedPoll: latency(2400), plainOnB: latency(1600), localPoll: latency(1200), plainOnA: latency(1300) },
      ratios: [
        ratio('forwarded tasks/get ÷ plain call, fleet', 'forwardedPoll', 'plainOnB', 1.5),
        ratio('forwarded tasks/get ÷ local tasks/get, fleet', 'forwardedPoll', 'localPoll', 2),
      ],
    },
    wrongAnswers: 0,
    wrongSamples: [],
    failures: [],
    elapsedSeconds: 60,
  };
  const measured: Run = { ...run, parts: { ...run.parts, tasks } };
  const all = figuresOf(measured).filter((f) => f.section === 'Tasks');
  assert.equal(
    all.map((f) => [f.label, f.value, f.goal]),
    [
      ['tasks/get ÷ plain call, one process, p50', 0.8, undefined],
      ['forwarded tasks/get ÷ plain call, fleet, p50', 1.5, undefined],
      ['forwarded tasks/get ÷ local tasks/get, fleet, p50', 2, undefined],
    ],
  );
  const { markdown } = renderReport(measured);
  assert.match(markdown, '## 9. Tasks: a `tasks/get` poll against a plain call, in one process and forwarded');
  assert.match(markdown, '| Tasks | forwarded tasks/get ÷ local tasks/get, fleet, p50 | 2.00× | – |  |');
  assert.match(markdown, '| tasks/get of a working task | 100 | 700 µs | 2,100 µs | 840 µs |');
  assert.match(markdown, '| tasks/get to B, forwarded to A | 100 | 2,400 µs |');
  assert.match(markdown, '| forwarded tasks/get ÷ plain call, fleet | 1.50× | 3.00× | 1.50× |');
  // Without a Redis, the forwarded part says why it is missing; a run without the bench says so too.
  const { fleet: _, redis: __, ...alone } = tasks;
  const skipped = renderReport({ ...run, parts: { ...run.parts, tasks: { ...alone, fleetSkipped: 'no Redis at redis://x' } } }).markdown;
  assert.match(skipped, '**Forwarded.** _Not measured in this run: no Redis at redis://x._');
  assert.match(renderReport(run).markdown, /## 9\. Tasks[^\n]*\n\n_Not measured in this run\._/);
});

report('should mark a quick run and a bench that failed', () => {
  const { markdown, chart } = renderReport({ ...sampleRun(), args: ['--quick'], quick: true, exitCodes: { translate: 0, wrap: 1 } });
  assert.match(markdown, '**Not a full run**');
  assert.match(markdown, 'wrap: exit 1');
  assert.match(chart, 'quick run');
});
report('should draw one bar per figure, coloured by its goal, in a well-formed SVG', () => {
  const run = sampleRun();
  const { chart } = renderReport(run);
  assert.ok(chart.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(chart.trimEnd().endsWith('</svg>'));
  const bars = [...chart.matchAll(/<rect [^>]*><title>([^<]*)<\/title><\/rect>/g)].map((m) => m[1]!);
  assert.is(bars.length, figuresOf(run).length);
  assert.ok(bars.some((t) => t.startsWith('wrap ÷ pass-through, c=1: 0.80× (goal ≥ 0.85×)')));
  assert.ok(chart.includes('fill="#c62828"'), 'a missed goal is drawn red');
  assert.is(renderReport(run).chart, chart, 'the same run gives the same bytes');
});
report("should list the ratios of a full run on another Node beside this run's, marking those far apart", () => {
  const run = sampleRun();
  const wrap = run.parts.wrap!;
  const other: Run = {
    ...run,
    machine: { ...run.machine, node: 'v24.22.3' },
    parts: {
      ...run.parts,
      wrap: {
        ...wrap,
        comparisons: {
          ...wrap.comparisons,
          vsPassthrough: wrap.comparisons.vsPassthrough.map((x) => ({
            ...x,
            throughputRatio: x.concurrency === 1 ? 0.95 : x.throughputRatio,
          })),
        },
      },
    },
  };
  const { markdown } = renderReport(run, [other]);
  assert.match(markdown, '## 10. On other Node lines');
  assert.match(markdown, `| section | ratio | Node ${run.machine.node} | Node v24.22.3 | goal |  |`);
  // c=1 moved from 0.80× to 0.95×: marked; the mcp-proxy ratio did not move.
  assert.match(markdown, '| Wrapped calls | wrap ÷ pass-through, c=1 | 0.80× (missed) | 0.95× | ≥ 0.85× | apart by more than 10% |');
  assert.match(markdown, '| Wrapped calls | wrap ÷ mcp-proxy, c=1 | 4.00× | 4.00× | ≥ 2.50× |  |');
  assert.not.match(renderReport(run).markdown, '## 10.', 'no section without another run');
});
report.run();

const files = suite('writeReport');
files('should rebuild RESULTS.md and the chart from a saved run, and refuse a file that is not one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
  try {
    const saved = join(dir, 'latest.json');
    writeFileSync(saved, JSON.stringify(sampleRun()));
    const written = writeReport(readRun(saved), dir);
    assert.match(readFileSync(written.results, 'utf8'), '# Benchmark results');
    assert.match(readFileSync(written.chart, 'utf8'), '<svg');
    const other = join(dir, 'other.json');
    writeFileSync(other, JSON.stringify({ results: [] }));
    assert.throws(() => readRun(other), /not a combined bench run/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
files.run();

const readme = suite('updateReadme');
readme('should put the wrap table between the markers, again the same on a second pass, and leave a file without markers alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-readme-'));
  try {
    const file = join(dir, 'README.md');
    writeFileSync(file, `# Title\n\nbefore\n\n${README_START}\nold table\n${README_END}\n\nafter\n`);
    assert.ok(updateReadme(file, sampleRun()));
    const once = readFileSync(file, 'utf8');
    assert.not.match(once, 'old table');
    assert.match(once, /\| wrap \(HTTP\) \| 1,600 \| 550 µs \|/);
    assert.match(once, /\| 1 \| 0\.80× ✗ \| \+80 µs ✓ \|/, 'c=1 misses 0.85× but holds the added p50');
    assert.ok(once.startsWith('# Title\n\nbefore\n\n') && once.endsWith(`${README_END}\n\nafter\n`), 'the rest of the file is kept');
    assert.ok(updateReadme(file, sampleRun()));
    assert.is(readFileSync(file, 'utf8'), once, 'idempotent');
    const plain = join(dir, 'PLAIN.md');
    writeFileSync(plain, '# no markers\n');
    assert.not.ok(updateReadme(plain, sampleRun()));
    assert.is(readFileSync(plain, 'utf8'), '# no markers\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
readme.run();
