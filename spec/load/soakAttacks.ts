/**
 * The clients of `npm run soak`. The attackers run as a process of their own (this file, forked by
 * `spec/load/soak.ts`, so their work does not delay the honest clients' timers): 64 parked calls
 * from 64 callers and 64 from one caller with four capability sets, each never retried and renewed
 * every half minute; 64 listens of 64 callers, reopened when ended; a burst of 256 bare legacy
 * `initialize`s from as many callers, then one a second; oversized bodies, made-up tool names and
 * slowloris sockets; and those of `soakIntrusions.ts` on what a fleet adds. Each reports what it got by
 * outcome (a refusal is what an attacker should get). When told to stop, the attackers end what they
 * hold as a client that leaves does (parked calls retried with `cancel`, legacy sessions deleted), so
 * what the server still holds afterwards is what nobody can end. The honest clients (modern, MRTR
 * rounds, SDK v1 legacy, a listen) run in soak.ts and are timed here.
 */
import { setMaxListeners } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { latencyStats, type LatencyStats } from '../../bench/measure.ts';
import { textOf } from '../helpers/everything.ts';
import { modernPost, openListen, type ModernAnswer } from '../helpers/modernHttp.ts';
import { inTurns } from '../helpers/inTurns.ts';
import { bigIdsAttack, hopsAttack, sessionsAttack, ssrfAttack, type IntrusionCounts, type IntrusionCtx } from './soakIntrusions.ts';

/** What the attacker process is told (as JSON, its one argument). */
export interface AttackConfig {
  readonly url: string;
  readonly port: number;
  /** The origins of the replicas behind `url` (one process: its own), for attacks sent straight to them. */
  readonly direct?: readonly string[];
  /** Stop by itself this long after starting, whatever happens (ms). */
  readonly deadlineMs: number;
  /** Which attacks to run (default all): `parked`, `caps`, `listens`, `legacy`, `oversized`, `names`, `slowloris`, `ssrf`, `hops`, `sessions`, `bigids`. */
  readonly attacks?: readonly string[];
}

/** Every attack `attack()` knows, by the name `--attacks` takes. */
export const ATTACKS = [
  'parked',
  'caps',
  'listens',
  'legacy',
  'oversized',
  'names',
  'slowloris',
  'ssrf',
  'hops',
  'sessions',
  'bigids',
] as const;

/** What it reports when it stops: per attacker kind, per outcome, how many. */
export interface AttackReport {
  readonly outcomes: Record<string, Record<string, number>>;
  /** Seconds from connect to the server closing each slowloris socket. */
  readonly slowlorisClosedAfterS: number[];
  /** CPU seconds the attacker process used. */
  readonly cpuSeconds: number;
  /** What the attacker's own listener received (`ssrf`) and the honest legacy client's 404s (`sessions`). */
  readonly intrusions: IntrusionCounts;
}

/** Parked calls kept in flight at once (distinct callers), and per capability set of the one caller. */
const PARKED_IN_FLIGHT = 64;
const CAPS_SETS = 4;
const PER_CAPS_SET = 16;
/** How long a parked call is left before its slot parks another (it is never retried). */
const PARK_HOLD_MS = 30_000;
/** How long the call that parks may take to be answered. */
const PARK_CALL_MS = 20_000;
const LISTENS_OPEN = 64;
/** Bare legacy `initialize`s sent at once when the attack starts, then a steady trickle. */
const LEGACY_BURST = 256;
const LEGACY_BURST_AT_ONCE = 32;
const LEGACY_PER_SECOND = 1;
/** How long a legacy `initialize` of the attackers may take. */
const LEGACY_INITIALIZE_MS = 20_000;
const OVERSIZED_PER_SECOND = 1;
const OVERSIZED_BYTES = 8 * 1024 * 1024;
const NAMES_PER_SECOND = 20;
const SLOWLORIS_SOCKETS = 4;
/** In flight at once for the paced attackers (beyond it a tick is skipped and counted). */
const PACED_IN_FLIGHT = 64;
/** A loop attacker that was refused waits this long before its next attempt, so it is not a busy loop. */
const REFUSED_PAUSE_MS = 250;
const ELICIT = 'trigger-elicitation-request';
/** Requests at once when the attackers end what they hold. */
const RELEASE_AT_ONCE = 16;
/** The outcome kind of what the attackers end when they stop. */
const RELEASED = 'ended when the attackers stopped';

/** Counts of outcomes by attacker kind. */
export class Outcomes {
  readonly byKind: Record<string, Record<string, number>> = {};
  add(kind: string, outcome: string): void {
    const row = (this.byKind[kind] ??= {});
    row[outcome] = (row[outcome] ?? 0) + 1;
  }
}

/** One modern answer as an outcome: HTTP status and the JSON-RPC error code (and limit) or result type. */
export function outcomeOf(a: ModernAnswer): string {
  const m = a.message;
  if (m['error']) return `${a.status} ${m['error'].code}${m['error'].data?.limit ? ` ${m['error'].data.limit}` : ''}`;
  if (m['result']) return `${a.status} ${m['result'].isError ? 'isError' : (m['result'].resultType ?? 'result')}`;
  return `${a.status} (no JSON-RPC answer)`;
}

/** A thrown error as an outcome (the network error's code where there is one). */
export function errorOutcome(e: unknown): string {
  const err = e as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  if (err.name === 'TimeoutError') return 'error no answer in time';
  return `error ${err.cause?.code ?? err.code ?? err.cause?.name ?? err.name ?? String(e)}`;
}

/** How long a refused attacker waits: the answer's `Retry-After`, or a moment. */
function retryAfterMs(a: ModernAnswer): number {
  const seconds = Number(a.retryAfter ?? a.message['error']?.data?.retryAfterSeconds);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : REFUSED_PAUSE_MS;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** A call parked for the attackers, and what its retry needs. */
interface ParkedCall {
  readonly principal: string;
  readonly capabilities: Record<string, unknown>;
  readonly requestState: string;
  readonly key: string;
}

/** What the attackers hold now: ended when they stop. */
interface Held {
  readonly parked: Set<ParkedCall>;
  /** Legacy sessions by id: where they were opened, and by whom. */
  readonly sessions: Map<string, { url: string; principal: string }>;
}

interface Ctx {
  readonly config: AttackConfig;
  readonly signal: AbortSignal;
  readonly outcomes: Outcomes;
  readonly slowlorisClosedAfterS: number[];
  readonly held: Held;
  readonly intrusions: IntrusionCounts;
}

let sequence = 0;
const next = () => ++sequence;

/** One slot of parked calls: a pushable call an elicitation, answered `input_required`, never retried (until the attackers stop). */
async function parkedSlot(ctx: Ctx, kind: string, principal: () => string, capabilities: Record<string, unknown>): Promise<void> {
  while (!ctx.signal.aborted) {
    try {
      const caller = principal();
      // Not aborted when the attackers stop: a call it parks is known, and ended.
      const a = await modernPost(
        ctx.config.url,
        'tools/call',
        { name: ELICIT, arguments: {} },
        { principal: caller, capabilities, signal: AbortSignal.timeout(PARK_CALL_MS), id: next() },
      );
      const outcome = outcomeOf(a);
      ctx.outcomes.add(kind, outcome);
      // Parked, it is left to hold its session; refused, the slot tries again when told to.
      const r = a.message['result'];
      const key = outcome.endsWith('input_required') ? Object.keys(r?.inputRequests ?? {})[0] : undefined;
      if (key !== undefined && typeof r.requestState === 'string') {
        const call: ParkedCall = { principal: caller, capabilities, requestState: r.requestState, key };
        ctx.held.parked.add(call);
        await sleep(PARK_HOLD_MS, ctx.signal);
        if (!ctx.signal.aborted) ctx.held.parked.delete(call);
      } else await sleep(retryAfterMs(a), ctx.signal);
    } catch (e) {
      if (ctx.signal.aborted) return;
      ctx.outcomes.add(kind, errorOutcome(e));
      await sleep(REFUSED_PAUSE_MS, ctx.signal);
    }
  }
}

/** One listen slot: a `subscriptions/listen` of a new caller kept open; reopened when it ends. */
async function listenSlot(ctx: Ctx): Promise<void> {
  while (!ctx.signal.aborted) {
    try {
      const l = await openListen(ctx.config.url, { principal: `attacker-listen-${next()}`, signal: ctx.signal });
      if (!l.acknowledged) {
        ctx.outcomes.add('listens', outcomeOf(l.answer));
        await sleep(retryAfterMs(l.answer), ctx.signal);
        continue;
      }
      ctx.outcomes.add('listens', 'acknowledged');
      if (ctx.signal.aborted) l.close();
      else ctx.signal.addEventListener('abort', () => l.close(), { once: true });
      await l.ended;
      if (!ctx.signal.aborted) ctx.outcomes.add('listens', 'ended by the server');
      await sleep(REFUSED_PAUSE_MS, ctx.signal);
    } catch (e) {
      if (ctx.signal.aborted) return;
      ctx.outcomes.add('listens', errorOutcome(e));
      await sleep(REFUSED_PAUSE_MS, ctx.signal);
    }
  }
}

/** Runs `fire` `perSecond` times a second, at most PACED_IN_FLIGHT at once, until the signal. */
async function paced(ctx: Ctx, kind: string, perSecond: number, fire: () => Promise<string>): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  const every = 1000 / perSecond;
  let due = performance.now();
  while (!ctx.signal.aborted) {
    if (inFlight.size >= PACED_IN_FLIGHT) ctx.outcomes.add(kind, `skipped (${PACED_IN_FLIGHT} in flight)`);
    else {
      const p: Promise<void> = fire().then(
        (outcome) => ctx.outcomes.add(kind, outcome),
        (e: unknown) => void (ctx.signal.aborted || ctx.outcomes.add(kind, errorOutcome(e))),
      );
      const tracked = p.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    }
    due += every;
    await sleep(Math.max(0, due - performance.now()), ctx.signal);
  }
  await Promise.allSettled([...inFlight]);
}

const LEGACY_INITIALIZE =
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}';

/**
 * A bare legacy `initialize` from a new caller (at `url`, as `principal`), its session never used
 * again (until the attackers stop and delete it). Stopping does not abort one under way: it ends
 * in its own time (at most `LEGACY_INITIALIZE_MS`), so its session is known and deleted.
 */
async function legacyInitialize(ctx: Ctx, url = ctx.config.url, principal = `attacker-legacy-${next()}`): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${principal}` },
    body: LEGACY_INITIALIZE,
    signal: AbortSignal.timeout(LEGACY_INITIALIZE_MS),
  });
  const text = await res.text();
  const session = res.headers.get('mcp-session-id');
  if (session) {
    ctx.held.sessions.set(session, { url, principal });
    return `${res.status} session`;
  }
  const json = /\{.*\}/s.exec(text.replace(/^data: /gm, ''))?.[0];
  try {
    const m = JSON.parse(json ?? '{}') as { error?: { code: number; data?: { limit?: string } } };
    if (m.error) return `${res.status} ${m.error.code}${m.error.data?.limit ? ` ${m.error.data.limit}` : ''}`;
  } catch {
    // not JSON: the status says it
  }
  return `${res.status}`;
}

let oversized: Buffer | undefined;

/** An 8 MiB POST (over the default body limit), on a connection of its own. */
function oversizedPost(ctx: Ctx): Promise<string> {
  oversized ??= Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"'),
    Buffer.alloc(OVERSIZED_BYTES, 'x'),
    Buffer.from('"}}}'),
  ]);
  const url = new URL(ctx.config.url);
  return new Promise<string>((resolve, reject) => {
    let answered: string | undefined;
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'echo',
          authorization: `Bearer attacker-big-${next()}`,
          'content-length': oversized!.length,
        },
        signal: ctx.signal,
        timeout: 30_000,
      },
      (res) => {
        answered = `${res.statusCode}`;
        res.resume();
        res.on('end', () => resolve(answered!));
        res.on('error', () => resolve(answered!));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in 30 s'), { code: 'TIMEOUT (30 s)' })));
    // Writing may fail once the server has answered 413 and closed: the answer is what counts.
    req.on('error', (e) => (answered ? resolve(answered) : reject(e)));
    req.end(oversized);
  });
}

/** A call of a tool that does not exist, by a random name. */
async function madeUpTool(ctx: Ctx): Promise<string> {
  const name = `no-such-tool-${Math.random().toString(36).slice(2)}`;
  return outcomeOf(
    await modernPost(
      ctx.config.url,
      'tools/call',
      { name, arguments: {} },
      { principal: 'attacker-names', signal: ctx.signal, id: next() },
    ),
  );
}

/** A socket that sends the start of a request header, a byte a second, and never finishes it. */
async function slowloris(ctx: Ctx): Promise<void> {
  while (!ctx.signal.aborted) {
    await new Promise<void>((resolve) => {
      const started = performance.now();
      const socket: Socket = connect(ctx.config.port, '127.0.0.1');
      let answer = '';
      const drip = setInterval(() => socket.write('a'), 1000);
      const stop = () => socket.destroy();
      ctx.signal.addEventListener('abort', stop, { once: true });
      socket.on('connect', () => socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${ctx.config.port}\r\nX-Slow: `));
      socket.on('data', (d: Buffer) => void (answer += d.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(drip);
        ctx.signal.removeEventListener('abort', stop);
        if (!ctx.signal.aborted) {
          ctx.slowlorisClosedAfterS.push((performance.now() - started) / 1000);
          const status = /^HTTP\/1\.1 (\d+)/.exec(answer)?.[1];
          ctx.outcomes.add('slowloris', status ? `closed by the server with ${status}` : 'closed by the server, no answer');
        }
        resolve();
      });
    });
  }
}

/** Ends what the attackers hold: each parked call retried with `cancel`, each legacy session deleted. */
async function release(ctx: Ctx): Promise<void> {
  const signal = () => AbortSignal.timeout(10_000);
  await inTurns([...ctx.held.parked], RELEASE_AT_ONCE, async (call) => {
    try {
      const a = await modernPost(
        ctx.config.url,
        'tools/call',
        { name: ELICIT, arguments: {}, inputResponses: { [call.key]: { action: 'cancel' } }, requestState: call.requestState },
        { principal: call.principal, capabilities: call.capabilities, signal: signal(), id: next() },
      );
      ctx.outcomes.add(RELEASED, `parked call retried with cancel: ${outcomeOf(a)}`);
    } catch (e) {
      ctx.outcomes.add(RELEASED, `parked call retried with cancel: ${errorOutcome(e)}`);
    }
  });
  await inTurns([...ctx.held.sessions], RELEASE_AT_ONCE, async ([id, { url, principal }]) => {
    try {
      const res = await fetch(url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${principal}` },
        signal: signal(),
      });
      await res.arrayBuffer();
      ctx.outcomes.add(RELEASED, `legacy session deleted: ${res.status}`);
    } catch (e) {
      ctx.outcomes.add(RELEASED, `legacy session deleted: ${errorOutcome(e)}`);
    }
  });
}

/** Starts every attacker until `signal`: `done` when all have stopped, `release()` to end what they hold, `report()` what they got so far. */
export function attack(
  config: AttackConfig,
  signal: AbortSignal,
): { done: Promise<unknown>; release(): Promise<void>; report(): AttackReport } {
  setMaxListeners(0, signal);
  const ctx: Ctx = {
    config,
    signal,
    outcomes: new Outcomes(),
    slowlorisClosedAfterS: [],
    held: { parked: new Set(), sessions: new Map() },
    intrusions: { ssrfListenerReached: 0, honestSessionLost: 0 },
  };
  const on = (name: (typeof ATTACKS)[number]) => !config.attacks || config.attacks.includes(name);
  const intrusion: IntrusionCtx = {
    url: config.url,
    direct: config.direct ?? [new URL(config.url).origin],
    signal,
    add: (kind, outcome) => ctx.outcomes.add(kind, outcome),
    paced: (kind, perSecond, fire) => paced(ctx, kind, perSecond, fire),
    legacyInitialize: (url, principal) => legacyInitialize(ctx, url, principal),
    holdSession: (sessionId, url, principal) => void ctx.held.sessions.set(sessionId, { url, principal }),
  };
  // The honest legacy client of `sessions` is listening before any attack starts.
  const sessions = on('sessions') ? sessionsAttack(intrusion, ctx.intrusions) : undefined;
  const begin = (): Promise<unknown> => {
    const loops: Array<Promise<void>> = [];
    if (on('parked'))
      for (let i = 0; i < PARKED_IN_FLIGHT; i++)
        loops.push(parkedSlot(ctx, 'parked calls (distinct callers)', () => `attacker-park-${next()}`, { elicitation: {} }));
    if (on('caps')) {
      for (let c = 0; c < CAPS_SETS; c++) {
        for (let i = 0; i < PER_CAPS_SET; i++)
          loops.push(
            parkedSlot(ctx, 'parked calls (one caller, 4 capability sets)', () => 'attacker-caps', {
              elicitation: {},
              experimental: { [`k${c}`]: {} },
            }),
          );
      }
    }
    if (on('listens')) for (let i = 0; i < LISTENS_OPEN; i++) loops.push(listenSlot(ctx));
    if (on('legacy'))
      loops.push(
        (async () => {
          // The burst first (a few dozen at a time), then the trickle.
          for (let sent = 0; sent < LEGACY_BURST && !signal.aborted; sent += LEGACY_BURST_AT_ONCE) {
            const wave = Array.from({ length: LEGACY_BURST_AT_ONCE }, () =>
              legacyInitialize(ctx).then(
                (o) => ctx.outcomes.add('legacy initialize (burst)', o),
                (e: unknown) => void (signal.aborted || ctx.outcomes.add('legacy initialize (burst)', errorOutcome(e))),
              ),
            );
            await Promise.all(wave);
          }
          await paced(ctx, 'legacy initialize', LEGACY_PER_SECOND, () => legacyInitialize(ctx));
        })(),
      );
    if (on('oversized')) loops.push(paced(ctx, 'oversized body (8 MiB)', OVERSIZED_PER_SECOND, () => oversizedPost(ctx)));
    if (on('names')) loops.push(paced(ctx, 'made-up tool names', NAMES_PER_SECOND, () => madeUpTool(ctx)));
    if (on('slowloris')) for (let i = 0; i < SLOWLORIS_SOCKETS; i++) loops.push(slowloris(ctx));
    const failed = (kind: string) => (e: unknown) => void (signal.aborted || ctx.outcomes.add(kind, `stopped: ${errorOutcome(e)}`));
    if (on('ssrf')) loops.push(ssrfAttack(intrusion, ctx.intrusions).catch(failed('ssrf')));
    if (on('hops')) loops.push(hopsAttack(intrusion).catch(failed('hops')));
    if (sessions) loops.push(sessions.done.catch(failed('sessions')));
    if (on('bigids')) loops.push(bigIdsAttack(intrusion).catch(failed('bigids')));
    return Promise.allSettled(loops);
  };
  return {
    done: (sessions?.ready ?? Promise.resolve()).then(begin),
    release: () => release(ctx),
    report: () => {
      const cpu = process.cpuUsage();
      return {
        outcomes: ctx.outcomes.byKind,
        slowlorisClosedAfterS: ctx.slowlorisClosedAfterS,
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        intrusions: ctx.intrusions,
      };
    },
  };
}

/** How long the attackers get to wind down after `stop` before they report anyway. */
const WIND_DOWN_MS = 20_000;

// ---- the honest clients (run by soak.ts itself) ----

/** Pauses of the honest clients between operations (modern), and between rounds (MRTR, legacy). */
const MODERN_PAUSE_MS = 100;
const MRTR_PAUSE_MS = 250;
const LEGACY_PAUSE_MS = 2000;
const OP_TIMEOUT_MS = 30_000;

/** What one phase's honest clients did, by operation kind. */
export class HonestStats {
  readonly ops = new Map<string, { ms: number[]; ok: number; failed: number; timed: boolean }>();
  readonly failures: string[] = [];
  /** Every failure, by kind and what went wrong (ids and numbers blurred), with a count. */
  readonly reasons = new Map<string, number>();
  #row(kind: string, timed: boolean) {
    let row = this.ops.get(kind);
    if (!row) this.ops.set(kind, (row = { ms: [], ok: 0, failed: 0, timed }));
    return row;
  }
  /** Counts an outcome without a latency (`wrong` undefined: success). */
  mark(kind: string, wrong: string | undefined): boolean {
    const row = this.#row(kind, false);
    if (wrong === undefined) row.ok++;
    else {
      row.failed++;
      if (this.failures.length < 40) this.failures.push(`${kind}: ${wrong}`);
      const reason = `${kind}: ${wrong
        .replace(/"id":"?[\w-]+"?,?/g, '')
        .replace(/\b[0-9a-f]{8}-[0-9a-f-]{27}\b/g, '<id>')
        .slice(0, 220)}`;
      this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
    }
    return wrong === undefined;
  }
  /** Times `fn`, which resolves undefined for the right answer or says what was wrong. */
  async op(kind: string, fn: () => Promise<string | undefined>): Promise<boolean> {
    const t0 = performance.now();
    let wrong: string | undefined;
    try {
      wrong = await fn();
    } catch (e) {
      wrong = `threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`.slice(0, 500);
    }
    this.#row(kind, true).ms.push(performance.now() - t0);
    const row = this.ops.get(kind)!;
    row.timed = true;
    return this.mark(kind, wrong);
  }
  get total(): { ops: number; ok: number } {
    let ops = 0;
    let ok = 0;
    for (const r of this.ops.values()) (ops += r.ok + r.failed), (ok += r.ok);
    return { ops, ok };
  }
  summary(): Record<string, { n: number; ok: number; failed: number; latency?: LatencyStats }> {
    const out: Record<string, { n: number; ok: number; failed: number; latency?: LatencyStats }> = {};
    for (const [kind, r] of this.ops)
      out[kind] = { n: r.ok + r.failed, ok: r.ok, failed: r.failed, ...(r.timed ? { latency: latencyStats(r.ms) } : {}) };
    return out;
  }
}

const describe = (a: ModernAnswer) =>
  `HTTP ${a.status}${a.retryAfter ? ` (Retry-After ${a.retryAfter})` : ''} ${JSON.stringify(a.message).slice(0, 400)}`;
const timeout = () => AbortSignal.timeout(OP_TIMEOUT_MS);

/** `server/discover`, `tools/list`, `tools/call` of `echo`, as a modern client. */
async function modernRound(url: string, principal: string, stats: HonestStats): Promise<void> {
  await stats.op('modern discover', async () => {
    const a = await modernPost(url, 'server/discover', {}, { principal, signal: timeout() });
    return a.message['result']?.supportedVersions?.includes('2026-07-28') ? undefined : describe(a);
  });
  await sleep(MODERN_PAUSE_MS);
  await stats.op('modern tools/list', async () => {
    const a = await modernPost(url, 'tools/list', {}, { principal, signal: timeout() });
    return a.message['result']?.tools?.some((t: { name: string }) => t.name === 'echo') ? undefined : describe(a);
  });
  await sleep(MODERN_PAUSE_MS);
  await stats.op('modern echo', async () => {
    const a = await modernPost(url, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, { principal, signal: timeout() });
    const r = a.message['result'];
    return r?.resultType === 'complete' && !r.isError && textOf(r) === 'Echo: hi' ? undefined : describe(a);
  });
}

/** A full MRTR round: the call, `input_required`, the retry with the answer and `requestState`, the result. */
async function mrtrRound(url: string, principal: string, stats: HonestStats): Promise<void> {
  const capabilities = { elicitation: {} };
  let pending: { key: string; requestState: string } | undefined;
  await stats.op('mrtr call', async () => {
    const a = await modernPost(url, 'tools/call', { name: ELICIT, arguments: {} }, { principal, capabilities, signal: timeout() });
    const r = a.message['result'];
    const key =
      r?.resultType === 'input_required' && typeof r.requestState === 'string' ? Object.keys(r.inputRequests ?? {})[0] : undefined;
    if (!key || r.inputRequests[key].method !== 'elicitation/create') return describe(a);
    pending = { key, requestState: r.requestState };
    return undefined;
  });
  if (!pending) return;
  await sleep(MODERN_PAUSE_MS);
  const { key, requestState } = pending;
  await stats.op('mrtr retry', async () => {
    const inputResponses = { [key]: { action: 'accept', content: { name: 'Ada', email: 'ada@example.com' } } };
    const a = await modernPost(
      url,
      'tools/call',
      { name: ELICIT, arguments: {}, inputResponses, requestState },
      { principal, capabilities, signal: timeout() },
    );
    const r = a.message['result'];
    return r?.resultType === 'complete' && !r.isError && textOf(r).includes('- Name: Ada') ? undefined : describe(a);
  });
}

/**
 * Connects a v1 SDK client as a well-behaved host does: a refusal that says when to try again
 * (`-32005` with `retryAfterSeconds`, HTTP 429/503 with `Retry-After`) is tried again then, within
 * the operation's time; anything else fails at once.
 */
async function connectRetrying(url: string, principal: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const until = performance.now() + OP_TIMEOUT_MS;
  for (;;) {
    const client = new Client({ name: principal, version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${principal}` } },
    });
    try {
      await client.connect(transport, { timeout: Math.max(1, until - performance.now()) });
      return { client, transport };
    } catch (e) {
      await client.close().catch(() => {});
      const seconds = Number(/"retryAfterSeconds":(\d+)/.exec(e instanceof Error ? e.message : '')?.[1]);
      if (!(seconds > 0) || performance.now() + seconds * 1000 > until) throw e;
      await sleep(seconds * 1000);
    }
  }
}

/** A legacy client with the real v1 SDK: connect, listTools, callTool echo, close (the session ended). */
async function legacyRound(url: string, principal: string, stats: HonestStats): Promise<void> {
  let client = new Client({ name: principal, version: '1.0.0' });
  let transport!: StreamableHTTPClientTransport;
  const options = { timeout: OP_TIMEOUT_MS };
  try {
    const connected = await stats.op('legacy connect', async () => void ({ client, transport } = await connectRetrying(url, principal)));
    if (!connected) return;
    await sleep(MODERN_PAUSE_MS);
    await stats.op('legacy listTools', async () => {
      const r = await client.listTools(undefined, options);
      return r.tools.some((t) => t.name === 'echo') ? undefined : `no echo among ${r.tools.map((t) => t.name).join(', ')}`;
    });
    await sleep(MODERN_PAUSE_MS);
    await stats.op('legacy callTool echo', async () => {
      const r = await client.callTool({ name: 'echo', arguments: { message: 'hi' } }, undefined, options);
      return textOf(r) === 'Echo: hi' && !r.isError ? undefined : JSON.stringify(r).slice(0, 400);
    });
    await stats.op('legacy close', async () => {
      await transport.terminateSession();
      await client.close();
      return undefined;
    });
  } finally {
    await client.close().catch(() => {});
  }
}

/** A listen opened at the start of a phase that must stay open until `stopped`. */
async function honestListen(url: string, principal: string, stats: HonestStats, stopped: Promise<void>): Promise<void> {
  let listen: Awaited<ReturnType<typeof openListen>> | undefined;
  await stats.op('listen open', async () => {
    listen = await openListen(url, { principal });
    return listen.acknowledged ? undefined : describe(listen.answer);
  });
  if (!listen?.acknowledged) return;
  const seen = listen.ended;
  const early = await Promise.race([seen.then(() => true), stopped.then(() => false)]);
  stats.mark(
    'listen stays open',
    early ? `the stream ended during the phase; last message ${JSON.stringify((await seen).at(-1) ?? null).slice(0, 300)}` : undefined,
  );
  listen.close();
}

/** Every honest client looping until `stopped`, staggered a little so they do not run in step. */
export async function honestClients(url: string, stats: HonestStats, isStopped: () => boolean, stopped: Promise<void>): Promise<void> {
  const loop = async (round: () => Promise<void>, pauseMs: number) => {
    await sleep(Math.random() * 500);
    while (!isStopped()) {
      await round();
      await sleep(pauseMs);
    }
  };
  await Promise.all([
    ...[0, 1, 2, 3].map((n) => loop(() => modernRound(url, `honest-${n}`, stats), MODERN_PAUSE_MS)),
    ...[4, 5].map((n) => loop(() => mrtrRound(url, `honest-${n}`, stats), MRTR_PAUSE_MS)),
    ...[6, 7].map((n) => loop(() => legacyRound(url, `honest-${n}`, stats), LEGACY_PAUSE_MS)),
    honestListen(url, 'honest-8', stats, stopped),
  ]);
}

/** One round of every honest client (the warm-up, and the health check after the attack). */
export async function honestOnce(url: string, stats: HonestStats): Promise<void> {
  await Promise.all([
    ...[0, 1, 2, 3].map((n) => modernRound(url, `honest-${n}`, stats)),
    ...[4, 5].map((n) => mrtrRound(url, `honest-${n}`, stats)),
    ...[6, 7].map((n) => legacyRound(url, `honest-${n}`, stats)),
    (async () => {
      let listen: Awaited<ReturnType<typeof openListen>> | undefined;
      await stats.op('listen open', async () =>
        (listen = await openListen(url, { principal: 'honest-8' })).acknowledged ? undefined : describe(listen.answer),
      );
      if (listen?.acknowledged) listen.close();
    })(),
  ]);
}

// As a forked process: attack until the parent says `stop` (or disconnects, or the deadline), then report.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config = JSON.parse(process.argv[2]!) as AttackConfig;
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on('message', (m) => m === 'stop' && stop());
  process.on('disconnect', stop);
  const deadline = setTimeout(stop, config.deadlineMs);
  const running = attack(config, controller.signal);
  await new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
  await Promise.race([running.done, sleep(WIND_DOWN_MS)]);
  await Promise.race([running.release(), sleep(WIND_DOWN_MS)]);
  clearTimeout(deadline);
  if (process.connected) process.send!({ type: 'report', report: running.report() }, () => process.exit(0));
  else process.exit(0);
}
