/**
 * The MRTR latency scenario, one call at a time: a plain `echo` and a full `ask_name` round (first
 * call → `input_required`, retry → result) taken in turn through the same wrap and the same caller,
 * so round ÷ echo is measured side by side; through `serveModern`, `wrap.fetch`, Node's HTTP server
 * on loopback and the stdio front, in process, with the broker's default `collectMs` (15 ms, the
 * bound of a round's gathering) and with 0, in front of unmodified pushServer; with the default also
 * in front of pushServer with its requested schema built once (`LatencyServer`); through `serve
 * --stdio` as users run it (the CLI a process of its own, the server its child), with either server;
 * and, for scale, the legacy server alone (a bare client answering the push).
 */
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { microStats, pairedRatio, type Stats } from '../shared/stats.ts';
import {
  bareClient,
  bareProcessClient,
  directCaller,
  httpCaller,
  nodeHttpCaller,
  stdioCaller,
  stdioProcessCaller,
  type BareClient,
  type PushServerProcess,
} from './callers.ts';
import { askText, checkText, echoText, PARK_TIMEOUT_MS, retryText, stateOf, textOf, Wrong, type Json } from './requests.ts';
import type { Lib, Processes, ScenarioOptions } from './scenario.ts';

export type { Stats } from '../shared/stats.ts';

export interface RoundStats {
  readonly first: Stats;
  readonly retry: Stats;
  readonly round: Stats;
}

/**
 * The legacy server behind the wrap: pushServer as written (`inline`: its `ask_name` builds the
 * requested schema in the call, so the v1 SDK compiles it with ajv on every elicitation and keeps
 * each), or the same server with that schema built once (`hoisted`, compiled once).
 */
export type LatencyServer = 'inline' | 'hoisted';

const SERVERS: Readonly<Record<LatencyServer, () => ReturnType<typeof createPushServer>>> = {
  inline: () => createPushServer(),
  hoisted: () => createPushServer({ schemaBuiltOnce: true }),
};

/**
 * Where the calls enter the wrap: `serveModern` (no transport), `wrap.fetch` (Web), Node's HTTP
 * server on loopback (as `serve` runs it), or the stdio front (as `serve --stdio` runs it), all in
 * one process with the server; or `serve --stdio` itself (`stdio-process`: the CLI and the server
 * each a process of their own, the default `collectMs`).
 */
type LatencyTransport = 'direct' | 'http' | 'node-http' | 'stdio' | 'stdio-process';

/**
 * One wrap, one caller: plain `echo` calls and full `ask_name` rounds taken in turn (echo then
 * round, round then echo), so both see the same machine and the same warm wrap.
 */
export interface LatencyCell {
  readonly transport: LatencyTransport;
  /** The broker's `collectMs` (15 is the default). */
  readonly collectMs: number;
  /** The legacy server behind the wrap (absent in results from before there was a choice: `inline`). */
  readonly server?: LatencyServer;
  /**
   * The server measured alone in turn with the cell's calls, in the same process: the wrap's own
   * (absent), or the other one (`inline` beside a wrap in front of `hoisted`: what a server that
   * compiles a schema per elicitation does to everything else in its process, the wrap included).
   */
  readonly beside?: LatencyServer;
  readonly echo: Stats;
  readonly rounds: RoundStats;
  /** round ÷ echo, at p50 and at p99. */
  readonly ratioP50: number;
  readonly ratioP99: number;
  /** Median over the pairs of round ÷ the echo taken next to it. */
  readonly pairedRatio: number;
  /** The legacy server alone, taken in turn with this cell's calls (absent in results from before it was). */
  readonly serverAlone?: { readonly echo: Stats; readonly round: Stats };
}

export interface LatencyResult {
  readonly kind: 'latency';
  readonly cells: LatencyCell[];
  /** The legacy server alone, driven by a bare in-memory client: `echo`, and `ask_name` with its push answered. */
  readonly serverAlone: { readonly echo: Stats; readonly round: Stats };
  readonly wrong: Wrong;
}

/**
 * The legacy server alone (pushServer, or its `hoisted` variant; a bare client on an in-memory pipe,
 * or on the stdio of its own process): a timed `echo` and a timed `ask_name` with its push answered
 * (ms; undefined when wrong).
 */
async function serverAlone(
  lib: Lib,
  wrong: Wrong,
  server: LatencyServer = 'inline',
  own?: PushServerProcess,
): Promise<{ echo(): Promise<number | undefined>; round(): Promise<number | undefined>; close(): Promise<void> }> {
  const client: BareClient & { close?(): Promise<void> } = own ? await bareProcessClient(own) : await bareClient(lib, SERVERS[server]());
  let id = 0;
  return {
    close: async () => await client.close?.(),
    async echo() {
      const n = ++id;
      const t = performance.now();
      const m = await client.request('tools/call', { name: 'echo', arguments: { text: `e${n}` } });
      const ms = performance.now() - t;
      if (textOf(m) === `e${n}`) return ms;
      wrong.add(`server alone echo ${n}: ${JSON.stringify(m).slice(0, 160)}`);
      return undefined;
    },
    async round() {
      const n = ++id;
      const t = performance.now();
      const pushed = new Promise<Json>((resolve) => (client.onPush = resolve));
      const answer = client.request('tools/call', { name: 'ask_name', arguments: {} });
      const push = await pushed;
      client.answer(push['id'] as number, { action: 'accept', content: { name: `s${n}` } });
      const m = await answer;
      const ms = performance.now() - t;
      if (textOf(m) === `Hello, s${n}!`) return ms;
      wrong.add(`server alone ask ${n}: ${JSON.stringify(m).slice(0, 160)}`);
      return undefined;
    },
  };
}

/** The legacy server's own share of a call, measured alone after every cell. */
async function serverAloneLatency(lib: Lib, counts: { warm: number; n: number }, wrong: Wrong): Promise<LatencyResult['serverAlone']> {
  const alone = await serverAlone(lib, wrong);
  const times = async (count: number, op: () => Promise<number | undefined>): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const ms = await op();
      if (ms !== undefined) out.push(ms);
    }
    return out;
  };
  await times(counts.warm, alone.echo);
  await times(counts.warm, alone.round);
  return { echo: microStats(await times(counts.n, alone.echo)), round: microStats(await times(counts.n, alone.round)) };
}

/** One cell: a wrap with `collectMs` in front of `server`, reached through `transport`, echoes and rounds in turn. */
async function latencyCell(
  lib: Lib,
  transport: LatencyTransport,
  collectMs: number,
  server: LatencyServer,
  counts: { warm: number; n: number },
  nextId: () => number,
  wrong: Wrong,
  processes?: Processes,
  beside: LatencyServer = server,
): Promise<LatencyCell> {
  const own =
    transport === 'stdio-process' && processes ? { script: processes.pushServer, schemaBuiltOnce: server === 'hoisted' } : undefined;
  // `serve --stdio` runs its own wrap, with the default collectMs.
  const wrap = own
    ? undefined
    : lib.wrapLegacyServer({ upstream: () => SERVERS[server](), mrtr: new lib.MrtrBroker({ parkTimeoutMs: PARK_TIMEOUT_MS, collectMs }) });
  const node = own
    ? stdioProcessCaller(processes!.cli, own)
    : transport === 'node-http'
      ? await nodeHttpCaller(lib, wrap!)
      : transport === 'stdio'
        ? stdioCaller(lib, wrap!)
        : undefined;
  const call = node?.call ?? (transport === 'http' ? httpCaller(wrap!) : directCaller(wrap!));
  const echo = async (): Promise<number | undefined> => {
    const n = nextId();
    const t = performance.now();
    const answer = await call(echoText(n, `e${n}`), 'echo');
    const ms = performance.now() - t;
    const problem = checkText(answer, n, `e${n}`);
    if (!problem) return ms;
    wrong.add(`${transport} echo ${n}: ${problem}`);
    return undefined;
  };
  const round = async (): Promise<{ first: number; retry: number } | undefined> => {
    const n = nextId();
    const t0 = performance.now();
    const got = stateOf(await call(askText(n), 'ask_name'), n);
    const t1 = performance.now();
    if ('wrong' in got) {
      wrong.add(`${transport} ask ${n}: ${got.wrong}`);
      return undefined;
    }
    const r = nextId();
    const answer = await call(retryText(r, got.state, `v${n}`), 'ask_name');
    const t2 = performance.now();
    const problem = checkText(answer, r, `Hello, v${n}!`);
    if (!problem) return { first: t1 - t0, retry: t2 - t1 };
    wrong.add(`${transport} retry ${r}: ${problem}`);
    return undefined;
  };
  // The server alone, taken in turn with the wrap's calls: what it spends on an elicitation is
  // measured in the same state (warmth of its schema compiler included) as the rounds beside it.
  const alone = await serverAlone(lib, wrong, beside, own);
  const echoes: number[] = [];
  const first: number[] = [];
  const retry: number[] = [];
  const rounds: number[] = [];
  const aloneEchoes: number[] = [];
  const aloneRounds: number[] = [];
  for (let i = 0; i < counts.warm + counts.n; i++) {
    // Alternate which goes first, so neither always follows the other.
    let e: number | undefined;
    let r: { first: number; retry: number } | undefined;
    if (i % 2 === 0) {
      e = await echo();
      r = await round();
    } else {
      r = await round();
      e = await echo();
    }
    const ae = await alone.echo();
    const ar = await alone.round();
    if (i >= counts.warm && ae !== undefined && ar !== undefined) {
      aloneEchoes.push(ae);
      aloneRounds.push(ar);
    }
    if (i < counts.warm || e === undefined || r === undefined) continue;
    echoes.push(e);
    first.push(r.first);
    retry.push(r.retry);
    rounds.push(r.first + r.retry);
  }
  await node?.close();
  await wrap?.close();
  await alone.close();
  const echoStats = microStats(echoes);
  const roundStats = { first: microStats(first), retry: microStats(retry), round: microStats(rounds) };
  return {
    transport,
    collectMs,
    server,
    ...(beside !== server ? { beside } : {}),
    echo: echoStats,
    rounds: roundStats,
    ratioP50: roundStats.round.p50Us / echoStats.p50Us,
    ratioP99: roundStats.round.p99Us / echoStats.p99Us,
    pairedRatio: pairedRatio(rounds, echoes),
    serverAlone: { echo: microStats(aloneEchoes), round: microStats(aloneRounds) },
  };
}

/** Every cell (those through processes when `o.processes` names what they run), then the server alone. */
export async function latency(lib: Lib, o: ScenarioOptions): Promise<LatencyResult> {
  const wrong = new Wrong();
  const cells: LatencyCell[] = [];
  // Pairs (an echo and a round) per cell: a round waits a quiet turn of the event loop for further pushes, with collectMs (15 ms by default) its bound.
  const counts = o.quick ? { warm: 100, n: 300 } : { warm: 500, n: 2000 };
  let id = 0;
  const nextId = () => ++id;
  for (const transport of ['direct', 'http', 'node-http', ...(lib.serveStdio ? (['stdio'] as const) : [])] as const) {
    for (const collectMs of [0, 15]) cells.push(await latencyCell(lib, transport, collectMs, 'inline', counts, nextId, wrong));
    cells.push(await latencyCell(lib, transport, 15, 'hoisted', counts, nextId, wrong));
    // On the fronts held to the goals: the same wrap in front of the server that builds its schema
    // once, with the server that compiles it per elicitation run in turn in the same process. The
    // wrap's round is the same work as in front of that server; what changes is the process it
    // runs in, so this is the wrap's own part of a round beside such a server.
    if (transport === 'node-http' || transport === 'stdio')
      for (const collectMs of [0, 15])
        cells.push(await latencyCell(lib, transport, collectMs, 'hoisted', counts, nextId, wrong, undefined, 'inline'));
  }
  if (o.processes)
    for (const server of ['inline', 'hoisted'] as const)
      cells.push(await latencyCell(lib, 'stdio-process', 15, server, counts, nextId, wrong, o.processes));
  const serverAlone = await serverAloneLatency(lib, counts, wrong);
  return { kind: 'latency', cells, serverAlone, wrong };
}
