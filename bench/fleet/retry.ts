/**
 * A retry forwarded to the replica that owns its parked call, against one resumed where it was
 * parked. Each sample is a full round: the first `ask_name` call to replica A (answered
 * `input_required` with a signed `requestState`), then its retry, sent to A (resumed locally) or to
 * B (which looks up A in the directory and forwards it there, signed). Local and forwarded rounds
 * alternate, and which of the two goes first alternates too, so drift hits both alike; only the
 * retry is timed. When a bare hop runs in front of A (bench/fleet/bareHop.mjs: Node's HTTP passing
 * the request on, nothing else), a third round sends its retry there: the floor of any forwarding
 * on Node, so what forwarding itself adds beside the extra hop is read apart. Every answer is checked ("Hello, <name>!"). The CPU time each replica's process
 * spends on a retry is read from /proc around it (in clock ticks, so a mean over many retries).
 */
import type { JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
import { askText, checkText, retryText, stateOf, Wrong } from '../mrtr/requests.ts';
import { ascending, microStats, percentile, type Stats } from '../shared/stats.ts';
import { cpuMicros } from '../wrap/procs.ts';
import type { Call } from './calls.ts';

export interface RetryResult {
  /** Pairs measured (one local and one forwarded retry each), after `warm` unmeasured ones. */
  readonly pairs: number;
  readonly warm: number;
  /** The first call of a round, to A: answered `input_required` once the broker's `collectMs` passed. */
  readonly first: Stats;
  /** The retry sent to A, where the call is parked. */
  readonly local: Stats;
  /** The retry sent to B, forwarded to A. */
  readonly forwarded: Stats;
  /** The retry sent through the bare hop to A (when one ran). */
  readonly bare?: Stats;
  /** bare − local at p50, and the median over the rounds of forwarded − the bare one next to it, in ms (when a bare hop ran). */
  readonly bareAddedP50Ms?: number;
  readonly pairedOverBareMs?: number;
  /** forwarded − local, at p50 and p99, in ms. */
  readonly addedP50Ms: number;
  readonly addedP99Ms: number;
  /** The median over the pairs of forwarded − the local retry of the same pair, in ms. */
  readonly pairedAddedMs: number;
  /** forwarded ÷ local at p50. */
  readonly ratioP50: number;
  /** Mean CPU time of replica A's and B's processes per retry (µs), by where the retry went. */
  readonly cpuUsPerRetry: { readonly local: CpuPair; readonly forwarded: CpuPair; readonly bare?: CpuPair };
}

/** CPU time (µs) of replica A's and B's processes. */
interface CpuPair {
  readonly a: number;
  readonly b: number;
}

type Kind = 'local' | 'forwarded' | 'bare';

const problemOf = (answer: JsonRpcResponse | string, check: (m: JsonRpcResponse | undefined) => string | undefined): string | undefined =>
  typeof answer === 'string' ? answer : check(answer);

/** A replica: how to call it, and its process (for its CPU time). */
export interface Replica {
  readonly call: Call;
  readonly pid: number;
}

/** Runs `warm` + `pairs` sets of rounds; `a` parks, `b` forwards to it, `bare` (if given) passes the retry on to `a`. */
export async function forwardedRetry(
  a: Replica,
  b: Replica,
  counts: { warm: number; pairs: number },
  nextId: () => number,
  wrong: Wrong,
  bare?: Call,
): Promise<RetryResult> {
  const cpu = { local: { a: 0, b: 0 }, forwarded: { a: 0, b: 0 }, bare: { a: 0, b: 0 } };
  const sentTo = (kind: Kind): Call => (kind === 'local' ? a.call : kind === 'forwarded' ? b.call : bare!);
  /** One round whose retry goes to `kind`'s replica: the retry's ms and the first call's, or undefined on a wrong answer. */
  const round = async (kind: Kind, measured: boolean): Promise<{ first: number; retry: number } | undefined> => {
    const id = nextId();
    const t0 = performance.now();
    const firstAnswer = await a.call(askText(id), 'ask_name');
    const t1 = performance.now();
    const got = typeof firstAnswer === 'string' ? { wrong: firstAnswer } : stateOf(firstAnswer, id);
    if ('wrong' in got) {
      wrong.add(`first call ${id} (${kind} round): ${got.wrong}`);
      return undefined;
    }
    const r = nextId();
    const name = `${kind[0]}${r}`;
    const cpuA = cpuMicros(a.pid) ?? 0;
    const cpuB = cpuMicros(b.pid) ?? 0;
    const t2 = performance.now();
    const answer = await sentTo(kind)(retryText(r, got.state, name), 'ask_name');
    const t3 = performance.now();
    if (measured) {
      cpu[kind].a += (cpuMicros(a.pid) ?? cpuA) - cpuA;
      cpu[kind].b += (cpuMicros(b.pid) ?? cpuB) - cpuB;
    }
    const problem = problemOf(answer, (m) => checkText(m, r, `Hello, ${name}!`));
    if (problem) {
      wrong.add(`${kind} retry ${r}: ${problem}`);
      return undefined;
    }
    return { first: t1 - t0, retry: t3 - t2 };
  };
  const first: number[] = [];
  const local: number[] = [];
  const forwarded: number[] = [];
  const bareRetries: number[] = [];
  const added: number[] = [];
  const overBare: number[] = [];
  const kinds: Kind[] = bare ? ['local', 'forwarded', 'bare'] : ['local', 'forwarded'];
  for (let i = 0; i < counts.warm + counts.pairs; i++) {
    // Each kind goes first in turn (and, of two, last in turn), so drift hits them alike.
    const order = kinds.map((_, k) => kinds[(i + k) % kinds.length]!);
    const got: Partial<Record<Kind, { first: number; retry: number } | undefined>> = {};
    for (const kind of order) got[kind] = await round(kind, i >= counts.warm);
    if (i < counts.warm || !got.local || !got.forwarded || (bare && !got.bare)) continue;
    first.push(got.local.first, got.forwarded.first);
    local.push(got.local.retry);
    forwarded.push(got.forwarded.retry);
    added.push(got.forwarded.retry - got.local.retry);
    if (got.bare) {
      bareRetries.push(got.bare.retry);
      overBare.push(got.forwarded.retry - got.bare.retry);
    }
  }
  const l = microStats(local);
  const f = microStats(forwarded);
  const bareStats = bare ? microStats(bareRetries) : undefined;
  return {
    ...(bareStats
      ? { bare: bareStats, bareAddedP50Ms: (bareStats.p50Us - l.p50Us) / 1000, pairedOverBareMs: percentile(ascending(overBare), 0.5) }
      : {}),
    pairs: local.length,
    warm: counts.warm,
    first: microStats(first),
    local: l,
    forwarded: f,
    addedP50Ms: (f.p50Us - l.p50Us) / 1000,
    addedP99Ms: (f.p99Us - l.p99Us) / 1000,
    pairedAddedMs: percentile(ascending(added), 0.5),
    ratioP50: f.p50Us / l.p50Us,
    cpuUsPerRetry: {
      local: { a: cpu.local.a / counts.pairs, b: cpu.local.b / counts.pairs },
      forwarded: { a: cpu.forwarded.a / counts.pairs, b: cpu.forwarded.b / counts.pairs },
      ...(bare ? { bare: { a: cpu.bare.a / counts.pairs, b: cpu.bare.b / counts.pairs } } : {}),
    },
  };
}
