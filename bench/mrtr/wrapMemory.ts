/**
 * The MRTR memory scenario through the wrap: N `ask_name` calls parked at once, in process, one
 * principal and one capability set, each on an upstream session of its own (room in the pool for
 * all of them). Heap after warm-up and gc, the warm-up's sessions closed (baseline) → park N (each
 * answered `input_required`) → gc → heap → resume all N (each must answer "Hello, <name>!"; the
 * sessions stay open, idle) → gc → heap. Optionally heap snapshots at baseline and parked.
 */
import { writeHeapSnapshot } from 'node:v8';
import { createRelatedPushServer, directCaller, httpCaller } from './callers.ts';
import { askText, checkText, forEachLimit, PARK_TIMEOUT_MS, retryText, settle, sleep, stateOf, Wrong } from './requests.ts';
import type { Lib, ScenarioOptions } from './scenario.ts';

export interface Usage {
  readonly heapUsed: number;
  readonly rss: number;
  readonly external: number;
}

const usage = (u: NodeJS.MemoryUsage): Usage => ({ heapUsed: u.heapUsed, rss: u.rss, external: u.external + u.arrayBuffers });

export interface WrapMemoryResult {
  readonly kind: 'wrap-memory';
  readonly transport: 'direct' | 'http';
  readonly loader: string;
  readonly n: number;
  /** After warm-up, with the warm-up's upstream sessions closed again. */
  readonly baseline: Usage;
  /** N calls parked, each on an upstream session of its own. */
  readonly parked: Usage;
  /** Every call resumed and answered; its upstream session still open, idle. */
  readonly resumed: Usage;
  readonly parkMs: number;
  readonly resumeMs: number;
  readonly upstreamSessions: number;
  readonly upstreamSessionsAfterResuming: number;
  readonly parkedAfterParking: number;
  readonly parkedAfterResuming: number;
  /** Upstream calls in flight and session holds once every call was resumed (both should be 0). */
  readonly inFlightAfter: number;
  readonly holdsAfter: number;
  readonly wrong: Wrong;
  readonly snapshots?: { readonly baseline: string; readonly parked: string };
}

/** Parks and resumes N calls through one wrap, reading the heap at each stage. */
export async function wrapMemory(lib: Lib, o: ScenarioOptions): Promise<WrapMemoryResult> {
  // Every call parks at once, for one principal, each holding an upstream session of its own: room
  // in the broker and the pool for all of them (past their per-principal defaults), and no session
  // closed for idleness before the heap is read after resuming.
  const room = o.n + 1000;
  const broker = new lib.MrtrBroker({ parkTimeoutMs: PARK_TIMEOUT_MS, maxParked: room, maxParkedPerPrincipal: room });
  const wrap = lib.wrapLegacyServer({
    upstream: () => createRelatedPushServer(),
    mrtr: broker,
    sessions: { max: room, perKey: room, perPrincipal: room, idleMs: PARK_TIMEOUT_MS },
  });
  const call = o.transport === 'http' ? httpCaller(wrap) : directCaller(wrap);
  const wrong = new Wrong();
  const limit = 256;

  const park = async (count: number, firstId: number, states: string[]) => {
    await forEachLimit(count, limit, async (i) => {
      const id = firstId + i;
      const got = stateOf(await call(askText(id), 'ask_name'), id);
      if ('wrong' in got) wrong.add(`park ${id}: ${got.wrong}`);
      else states[i] = got.state;
    });
  };
  const resume = async (states: string[], firstId: number) => {
    await forEachLimit(states.length, limit, async (i) => {
      const state = states[i];
      if (state === undefined) return;
      const id = firstId + i;
      const name = `u${i}`;
      const problem = checkText(await call(retryText(id, state, name), 'ask_name'), id, `Hello, ${name}!`);
      if (problem) wrong.add(`resume ${id}: ${problem}`);
    });
  };
  const idle = () => wrap.pool.sessions().every(({ session }) => session.inFlight === 0 && session.holds === 0);
  const untilIdle = async () => {
    for (let i = 0; i < 100 && !idle(); i++) await sleep(10);
  };

  // Warm-up: every code path hot (the broker learns that ask_name pushes); then its sessions are
  // closed, so the measured calls open theirs from the baseline on.
  const warm = o.quick ? { rounds: 2, calls: 100 } : { rounds: 3, calls: 200 };
  for (let round = 0; round < warm.rounds; round++) {
    const states: string[] = new Array(warm.calls);
    await park(warm.calls, 1_000_000 + round * 1000, states);
    await resume(states, 2_000_000 + round * 1000);
  }
  await untilIdle();
  await Promise.all(wrap.pool.sessions().map(({ session }) => session.close()));
  const states: string[] = new Array(o.n);
  const prefix = o.snapshotPrefix;
  const baseline = usage(await settle());
  const baselineSnapshot = prefix ? writeHeapSnapshot(`${prefix}-baseline.heapsnapshot`) : undefined;

  let t = performance.now();
  await park(o.n, 0, states);
  const parkMs = performance.now() - t;
  const parkedAfterParking = broker.parked;
  const upstreamSessions = wrap.pool.sessions().length;
  const parked = usage(await settle());
  const parkedSnapshot = prefix ? writeHeapSnapshot(`${prefix}-parked.heapsnapshot`) : undefined;

  t = performance.now();
  await resume(states, 10_000_000);
  const resumeMs = performance.now() - t;
  states.length = 0;
  await untilIdle();
  const resumed = usage(await settle());
  const sessions = wrap.pool.sessions();
  const result: WrapMemoryResult = {
    kind: 'wrap-memory',
    transport: o.transport,
    loader: o.loader,
    n: o.n,
    baseline,
    parked,
    resumed,
    parkMs,
    resumeMs,
    upstreamSessions,
    upstreamSessionsAfterResuming: sessions.length,
    parkedAfterParking,
    parkedAfterResuming: broker.parked,
    inFlightAfter: sessions.reduce((s, x) => s + x.session.inFlight, 0),
    holdsAfter: sessions.reduce((s, x) => s + x.session.holds, 0),
    wrong,
    ...(baselineSnapshot && parkedSnapshot ? { snapshots: { baseline: baselineSnapshot, parked: parkedSnapshot } } : {}),
  };
  await wrap.close();
  return result;
}
