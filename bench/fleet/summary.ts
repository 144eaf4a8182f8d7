/**
 * The fleet bench's report: the shape of bench/results/fleet.json (which bench/report/ turns into
 * RESULTS.md's Fleet section), its goals, and the same figures as console lines.
 */
import { consoleTable, formatRatio, int, us } from '../shared/format.ts';
import type { BenchOutcome, BenchRunInfo } from '../shared/results.ts';
import type { CommandsResult } from './commands.ts';
import type { RetryResult } from './retry.ts';
import type { ThroughputResult } from './throughput.ts';

/** What the fleet is held to. */
export const FLEET_GOALS = {
  /** A forwarded retry adds at most this much to a local one, at p50. */
  maxAddedP50Ms: 1,
  /** A replica in a fleet serves plain calls at least this fraction as fast as `serve` alone. */
  minThroughputRatio: 0.97,
  /** Redis commands a plain call makes. */
  plainCommandsPerCall: 0,
  /** Redis commands a forwarded retry is expected to make: the directory GET of its owner. */
  forwardedCommandsPerRetry: 1,
} as const;

/** bench/results/fleet.json. */
export interface FleetResults extends BenchRunInfo, BenchOutcome {
  /** Options every `serve` of the bench was given, beyond its port, its fleet and its server. */
  readonly serveOptions?: readonly string[];
  /** Why nothing was measured (no Redis to run a fleet on), if so. */
  readonly skipped?: string;
  readonly redis?: { readonly url: string; readonly version: string };
  readonly fleetName?: string;
  readonly goals: typeof FLEET_GOALS;
  readonly retry?: RetryResult;
  readonly throughput?: ThroughputResult;
  readonly commands?: CommandsResult;
}

const ms = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(3)} ms`;
const per = (v: number) => (Number.isFinite(v) ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : '–');

/** The labels of the command-count phases. */
export const PHASE_LABELS = {
  idle: 'idle (nothing sent), per second',
  plain: 'plain call (echo), per call',
  first: 'first call of a round (input_required), per call',
  local: 'retry resumed where parked, per retry',
  forwarded: 'retry forwarded to its owner, per retry',
} as const;

/** The console report. */
export function summaryLines(r: FleetResults): string[] {
  const out: string[] = [];
  const g = r.goals;
  if (r.skipped) return [`not measured: ${r.skipped}`];
  if (r.retry) {
    const x = r.retry;
    out.push(
      '',
      `1. A retry forwarded to its owner against one resumed locally (${int.format(x.pairs)} pairs after ${x.warm}, one call at a time; the first call of each round, to A: p50 ${us(x.first.p50Us)})`,
      consoleTable(
        ['retry', 'n', 'p50', 'p99', 'mean'],
        [
          ['to A, where the call is parked (local)', int.format(x.local.n), us(x.local.p50Us), us(x.local.p99Us), us(x.local.meanUs)],
          ['to B, forwarded to A', int.format(x.forwarded.n), us(x.forwarded.p50Us), us(x.forwarded.p99Us), us(x.forwarded.meanUs)],
          ...(x.bare
            ? [['through a bare Node hop to A', int.format(x.bare.n), us(x.bare.p50Us), us(x.bare.p99Us), us(x.bare.meanUs)]]
            : []),
        ],
      ),
      ...(x.bare && x.bareAddedP50Ms !== undefined && x.pairedOverBareMs !== undefined
        ? [
            `the bare hop alone adds ${ms(x.bareAddedP50Ms)} at p50; forwarding over the bare hop (paired) ${ms(x.pairedOverBareMs)}${x.cpuUsPerRetry.bare ? `; CPU time per bare-hop retry: A ${us(x.cpuUsPerRetry.bare.a)}` : ''}`,
          ]
        : []),
      `CPU time per retry (from /proc): local: A ${us(x.cpuUsPerRetry.local.a)}, B ${us(x.cpuUsPerRetry.local.b)}; forwarded: A ${us(x.cpuUsPerRetry.forwarded.a)}, B ${us(x.cpuUsPerRetry.forwarded.b)}`,
      `added by forwarding: ${ms(x.addedP50Ms)} at p50 (paired ${ms(x.pairedAddedMs)}), ${ms(x.addedP99Ms)} at p99; forwarded ÷ local p50 ${formatRatio(x.ratioP50)}; goal ≤ ${g.maxAddedP50Ms} ms at p50: ${x.addedP50Ms <= g.maxAddedP50Ms ? 'met' : 'NOT met'}`,
    );
  }
  if (r.throughput) {
    const t = r.throughput;
    out.push(
      '',
      `2. Plain calls (echo), ${t.concurrency} in flight, ${t.rounds} alternating rounds of ${t.roundMs / 1000} s each`,
      consoleTable(
        ['', 'calls/s', 'p50', 'p99', 'errors', 'upstream processes', 'per round'],
        [
          [
            'replica in a fleet (serve --fleet)',
            int.format(t.fleet.callsPerSecond),
            us(t.fleet.p50Us),
            us(t.fleet.p99Us),
            String(t.fleet.errors),
            String(t.fleet.upstreamProcesses),
            t.fleet.perRound.map((x) => int.format(x)).join(' '),
          ],
          [
            'serve alone',
            int.format(t.alone.callsPerSecond),
            us(t.alone.p50Us),
            us(t.alone.p99Us),
            String(t.alone.errors),
            String(t.alone.upstreamProcesses),
            t.alone.perRound.map((x) => int.format(x)).join(' '),
          ],
        ],
      ),
      `fleet ÷ alone ${formatRatio(t.ratio)} (median of the rounds ${formatRatio(t.pairedRatio)}); goal ≥ ${g.minThroughputRatio}×: ${t.ratio >= g.minThroughputRatio ? 'met' : 'NOT met'}`,
    );
  }
  if (r.commands) {
    const c = r.commands;
    out.push(
      '',
      `3. Redis commands (${c.method})`,
      consoleTable(
        ['phase', 'calls', 'commands', 'per call', 'which'],
        c.phases.map((p) => [
          PHASE_LABELS[p.key],
          p.key === 'idle' ? `${c.idleSeconds.toFixed(1)} s` : int.format(p.calls),
          int.format(p.commands),
          per(p.perCall),
          Object.entries(p.byCommand)
            .map(([k, n]) => `${k} ×${n}`)
            .join(', ') || '–',
        ]),
      ),
      `heartbeat, counted apart: ${int.format(c.heartbeat.commands)} commands in ${c.heartbeat.seconds.toFixed(1)} s, ${c.heartbeat.perReplicaPerSecond.toFixed(2)} per replica per second (${Object.entries(
        c.heartbeat.byCommand,
      )
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ')}); ` + `commands on the fleet's keys from other connections: ${c.unattributed}`,
    );
    const plain = c.phases.find((p) => p.key === 'plain');
    const fwd = c.phases.find((p) => p.key === 'forwarded');
    if (plain)
      out.push(
        `goal: ${g.plainCommandsPerCall} commands per plain call → ${per(plain.perCall)}: ${plain.perCall <= g.plainCommandsPerCall ? 'met' : 'NOT met'}`,
      );
    if (fwd)
      out.push(
        `expected: ${g.forwardedCommandsPerRetry} GET per forwarded retry → ${per(fwd.perCall)}: ${fwd.perCall <= g.forwardedCommandsPerRetry ? 'as expected' : 'MORE than expected'}`,
      );
  }
  out.push('');
  for (const w of r.wrongSamples) out.push(`WRONG ${w}`);
  for (const f of r.failures) out.push(`FAILED ${f}`);
  return out;
}
