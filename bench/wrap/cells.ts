/**
 * The wrap bench's cells (one contender at one concurrency): a measured slice with the CPU each
 * process spent meanwhile, what a cell's slices add up to, the comparisons the goals are about
 * (candidate ÷ reference at each concurrency), and the console table. Not the schedule of slices
 * (bench/wrap.ts) nor how a call is made (bench/wrap/load.ts).
 */
import { cpus } from 'node:os';
import { consoleTable, fixed1, int, pct } from '../shared/format.ts';
import { mean, percentile } from '../shared/stats.ts';
import type { Contender, Running } from './contenders.ts';
import { runPhase, type Driver, type PhaseResult } from './load.ts';
import { cpuMicros, machineBusyMicros } from './procs.ts';

export interface CpuShare {
  /** CPU time per correct call, in microseconds: the load generator (this process), the front, the server. */
  readonly generatorUs: number;
  readonly frontUs: number | null;
  readonly serverUs: number;
  /** All of it over the wall time, as a share of the machine's cores. */
  readonly machineBusy: number;
  /** CPU the rest of the machine (processes not in this cell) used meanwhile, as a share of its cores. */
  readonly otherBusy: number | null;
}

export interface Cell {
  readonly contender: Contender['key'];
  readonly label: string;
  readonly concurrency: number;
  readonly calls: number;
  readonly callsPerSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
  readonly errors: number;
  readonly errorSamples: readonly string[];
  readonly cpu: CpuShare | null;
}

function sumCpu(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += cpuMicros(pid) ?? 0;
  return total;
}

/** What a cell's slices add up to. */
export interface Tally {
  latenciesNs: number[];
  inWindow: number;
  windowNs: number;
  errors: number;
  errorSamples: string[];
  genUs: number;
  frontUs: number | null;
  serverUs: number;
  otherUs: number | null;
}

export function newTally(hasFront: boolean): Tally {
  return {
    latenciesNs: [],
    inWindow: 0,
    windowNs: 0,
    errors: 0,
    errorSamples: [],
    genUs: 0,
    frontUs: hasFront ? 0 : null,
    serverUs: 0,
    otherUs: 0,
  };
}

export function addErrors(t: Tally, phase: PhaseResult): void {
  t.errors += phase.errors;
  for (const e of phase.errorSamples) if (t.errorSamples.length < 5) t.errorSamples.push(e);
}

/** One measured slice of a cell, with the CPU each process spent meanwhile. */
export async function measureSlice(
  running: Running,
  driver: Driver,
  concurrency: number,
  tally: Tally,
  timing: { readonly leadInMs: number; readonly sliceMs: number },
): Promise<void> {
  if (timing.leadInMs > 0) addErrors(tally, await runPhase(driver, concurrency, timing.leadInMs));
  const servers = running.serverPids();
  const before = {
    gen: process.cpuUsage(),
    front: running.frontPid ? cpuMicros(running.frontPid) : undefined,
    server: sumCpu(servers),
    machine: machineBusyMicros(),
  };
  const phase = await runPhase(driver, concurrency, timing.sliceMs);
  const gen = process.cpuUsage(before.gen);
  const frontAfter = running.frontPid ? cpuMicros(running.frontPid) : undefined;
  const serverAfter = sumCpu(servers);
  const machineAfter = machineBusyMicros();
  for (const v of phase.latenciesNs) tally.latenciesNs.push(v);
  // A call still in flight at the deadline counts half: the slice began with every worker idle, so
  // as much work is missing at its start as spills over its end (unbiased for a closed loop).
  tally.inWindow += (phase.completedInWindow + phase.latenciesNs.length) / 2;
  tally.windowNs += phase.windowNs;
  addErrors(tally, phase);
  const genUs = gen.user + gen.system;
  const frontUs = before.front !== undefined && frontAfter !== undefined ? frontAfter - before.front : null;
  const serverUs = serverAfter - before.server;
  tally.genUs += genUs;
  if (tally.frontUs !== null) tally.frontUs = frontUs === null ? null : tally.frontUs + frontUs;
  tally.serverUs += serverUs;
  if (tally.otherUs !== null)
    tally.otherUs =
      before.machine !== undefined && machineAfter !== undefined
        ? tally.otherUs + Math.max(0, machineAfter - before.machine - genUs - (frontUs ?? 0) - serverUs)
        : null;
}

export function cellOf(c: Contender, concurrency: number, t: Tally): Cell {
  const sorted = Float64Array.from(t.latenciesNs).sort();
  const calls = sorted.length;
  const wallS = t.windowNs / 1e9;
  const cores = cpus().length;
  return {
    contender: c.key,
    label: c.label,
    concurrency,
    calls,
    callsPerSecond: wallS > 0 ? t.inWindow / wallS : 0,
    p50Us: percentile(sorted, 0.5) / 1e3,
    p99Us: percentile(sorted, 0.99) / 1e3,
    meanUs: mean(sorted) / 1e3,
    errors: t.errors,
    errorSamples: t.errorSamples,
    cpu:
      calls > 0
        ? {
            generatorUs: t.genUs / calls,
            frontUs: t.frontUs === null ? null : t.frontUs / calls,
            serverUs: t.serverUs / calls,
            machineBusy: (t.genUs + (t.frontUs ?? 0) + t.serverUs) / 1e6 / wallS / cores,
            otherBusy: t.otherUs === null ? null : t.otherUs / 1e6 / wallS / cores,
          }
        : null,
  };
}

/** Every cell as a console table, one block per contender. */
export function cellTable(cells: readonly Cell[]): string {
  const head = [
    'contender',
    'conc',
    'calls/s',
    'p50 µs',
    'p99 µs',
    'errors',
    'cpu µs/call gen',
    'front',
    'server',
    'cores busy',
    'other load',
  ];
  const body = cells.map((c) => [
    c.label,
    String(c.concurrency),
    int.format(c.callsPerSecond),
    int.format(c.p50Us),
    int.format(c.p99Us),
    String(c.errors),
    c.cpu ? fixed1.format(c.cpu.generatorUs) : '-',
    c.cpu?.frontUs != null ? fixed1.format(c.cpu.frontUs) : '-',
    c.cpu ? fixed1.format(c.cpu.serverUs) : '-',
    c.cpu ? pct(c.cpu.machineBusy) : '-',
    c.cpu?.otherBusy != null ? pct(c.cpu.otherBusy) : '-',
  ]);
  return consoleTable(head, body, { groupBy: 0 });
}

export interface Comparison {
  readonly concurrency: number;
  readonly candidate: Contender['key'];
  readonly reference: Contender['key'];
  /** candidate calls/s ÷ reference calls/s. */
  readonly throughputRatio: number;
  /** candidate p50 − reference p50, µs. */
  readonly addedP50Us: number;
  readonly addedP99Us: number;
}

/** candidate ÷ reference at each concurrency both were measured at (with calls). */
export function compare(cells: readonly Cell[], candidate: Contender['key'], reference: Contender['key']): Comparison[] {
  const out: Comparison[] = [];
  for (const concurrency of [...new Set(cells.map((c) => c.concurrency))].sort((a, b) => a - b)) {
    const a = cells.find((c) => c.contender === candidate && c.concurrency === concurrency);
    const b = cells.find((c) => c.contender === reference && c.concurrency === concurrency);
    if (!a || !b || a.calls === 0 || b.calls === 0) continue;
    out.push({
      concurrency,
      candidate,
      reference,
      throughputRatio: a.callsPerSecond / b.callsPerSecond,
      addedP50Us: a.p50Us - b.p50Us,
      addedP99Us: a.p99Us - b.p99Us,
    });
  }
  return out;
}

export interface GoalCheck {
  readonly goal: string;
  readonly concurrency: number;
  readonly value: number;
  readonly holds: boolean;
}
