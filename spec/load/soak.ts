/**
 * `npm run soak [-- --minutes n | --quick] [--fleet] [--limit name=n …] [--attacks a,b…] [--json file]`: the real command
 * `mcp-dual-era serve` in front of server-everything, first with honest clients only (the idle
 * run), then with the same honest clients while attackers (`soakAttacks.ts`, a process of its own)
 * try to crowd them out. Honest clients must never be refused and their p99 must stay within 3× the
 * idle run's; once the attackers have stopped and ended what they hold, serve's `/healthz` must
 * show nothing held. With `--fleet`, the same against three replicas of `serve --fleet` (the
 * built command, on the machine's Redis, a fleet name of the run's own) behind nginx (round
 * robin): clients and attackers go through nginx, the attacks on what a fleet adds go straight to
 * the replicas; nothing may be held on any replica, and the fleet's Redis keys must be only the
 * expected ones. Loopback only; a hard deadline; everything it started is killed on the way out.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { EVERYTHING, MARKER, ROOT, markedProcesses, markedProcessesGone, reapMarked, sleep } from '../helpers/everything.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { modernPost } from '../helpers/modernHttp.ts';
import { startNginx, type RunningNginx } from '../helpers/nginx.ts';
import { ATTACKS, HonestStats, honestClients, honestOnce, type AttackConfig, type AttackReport } from './soakAttacks.ts';
import { KIND } from './soakIntrusions.ts';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string' },
    quick: { type: 'boolean' },
    fleet: { type: 'boolean' },
    limit: { type: 'string', multiple: true },
    json: { type: 'string' },
    attacks: { type: 'string' },
  },
  strict: true,
});
const attacks = args.attacks
  ?.split(',')
  .map((a) => a.trim())
  .filter((a) => a !== '');
for (const a of attacks ?? [])
  if (!(ATTACKS as readonly string[]).includes(a)) throw new Error(`--attacks: no attack named ${a} (known: ${ATTACKS.join(', ')})`);
const minutes = Number(args.minutes ?? 3);
if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, not ${args.minutes}`);
const totalMs = args.quick ? 60_000 : minutes * 60_000;
/** The quick run keeps ~25 s for start, warm-up, the phase ends, settle and the wrap check. */
const runMs = args.quick ? 36_000 : totalMs;
const IDLE_MS = Math.round(runMs / 4);
const ATTACK_MS = runMs - IDLE_MS;
const SETTLE_MS = args.quick ? 5_000 : 10_000;
const HARD_DEADLINE_MS = totalMs + 120_000;
/** Kinds with fewer samples than this in a phase are shown but left out of the p99 goal. */
const MIN_SAMPLES = 10;
const P99_FACTOR = 3;
/** Replicas of a `--fleet` run. */
const REPLICAS = 3;
/** How long what a front holds may take to reach nothing once the clients have ended it. */
const HELD_WAIT_MS = 10_000;
/** The members of `/healthz` that count something held (a request, a call, a stream, a session). */
const HELD = ['requests', 'inFlight', 'holds', 'parked', 'listens', 'legacySessions'] as const;

const marker = `soak-${process.pid}-${randomBytes(4).toString('hex')}`;
let serve: ChildProcess | undefined;
let replicas: Replica[] = [];
let nginx: RunningNginx | undefined;
let fleet: SpecFleet | undefined;
let attacker: ChildProcess | undefined;
let serveExit: string | undefined;

/** The processes serving: serve, or the fleet's replicas. */
const fronts = (): ChildProcess[] => (serve ? [serve] : replicas.map((r) => r.child));

/** Kills, by process id, everything this script started (synchronous: also runs on `exit`). */
function killAll(): void {
  for (const child of [attacker, ...fronts()])
    if (child?.pid && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (nginx?.pid) {
    try {
      process.kill(nginx.pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
  reapMarked(marker);
}
function hardExit(code: number, why: string): never {
  console.error(`soak: ${why}`);
  killAll();
  process.exit(code);
}
process.on('exit', killAll);
process.on('SIGINT', () => hardExit(130, 'interrupted'));
process.on('SIGTERM', () => hardExit(143, 'terminated'));
setTimeout(() => hardExit(1, `hard deadline (${HARD_DEADLINE_MS / 1000} s) reached`), HARD_DEADLINE_MS);

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Starts `serve` and waits until `server/discover` answers. */
async function startServe(port: number): Promise<{ url: string; output: () => string }> {
  const limits = (args.limit ?? []).flatMap((l) => ['--limit', l]);
  serve = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      resolve(ROOT, 'lib/cli/main.ts'),
      'serve',
      '--port',
      String(port),
      '--quiet',
      '--state-key-env',
      'SOAK_KEY',
      ...limits,
      '--',
      process.execPath,
      EVERYTHING,
      'stdio',
    ],
    {
      cwd: ROOT,
      env: { ...process.env, SOAK_KEY: randomBytes(32).toString('base64'), [MARKER]: marker },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let tail = '';
  const keep = (d: Buffer) => void (tail = (tail + d.toString('utf8')).slice(-8000));
  serve.stdout!.on('data', keep);
  serve.stderr!.on('data', keep);
  serve.once('exit', (code, signal) => void (serveExit = `serve exited (code ${code}, signal ${signal})`));
  const url = `http://127.0.0.1:${port}/mcp`;
  const until = Date.now() + 60_000;
  while (Date.now() < until && !serveExit) {
    try {
      const a = await modernPost(url, 'server/discover', {}, { principal: 'soak-probe', signal: AbortSignal.timeout(5000) });
      if (a.message['result']) return { url, output: () => tail };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`serve did not answer server/discover: ${serveExit ?? 'timeout'}\n${tail}`);
}

/**
 * Starts the fleet's replicas one after another (marked, with their upstreams, as serve's are),
 * then nginx in front of them, and waits until `server/discover` answers through it.
 */
async function startFleet(): Promise<{ url: string; port: number; direct: string[]; output: () => string }> {
  fleet = specFleet();
  const limits = (args.limit ?? []).flatMap((l) => ['--limit', l]);
  process.env[MARKER] = marker;
  try {
    for (let i = 0; i < REPLICAS; i++) {
      const replica = await startReplica(fleet, limits);
      replicas.push(replica);
      replica.child.once(
        'exit',
        (code, signal) => void (serveExit ??= `replica ${replica.origin} exited (code ${code}, signal ${signal})`),
      );
    }
  } finally {
    delete process.env[MARKER];
  }
  nginx = await startNginx(replicas.map((r) => new URL(r.origin).host));
  const url = `${nginx.url}/mcp`;
  const output = () => replicas.map((r) => `--- ${r.origin}\n${r.log().slice(-3000)}`).join('\n');
  const until = Date.now() + 60_000;
  while (Date.now() < until && !serveExit) {
    const answers = await Promise.all(
      replicas.map(() =>
        modernPost(url, 'server/discover', {}, { principal: 'soak-probe', signal: AbortSignal.timeout(5000) }).catch(() => undefined),
      ),
    );
    if (answers.every((a) => a?.message['result']))
      return { url, port: Number(new URL(nginx.url).port), direct: replicas.map((r) => r.origin), output };
    await sleep(200);
  }
  throw new Error(`the fleet did not answer server/discover through nginx: ${serveExit ?? 'timeout'}\n${output()}`);
}

/** What a front's `/healthz` says it holds (and its replica id and upstream sessions, for the report). */
type HeldNow = Record<(typeof HELD)[number] | 'sessions', number> & { replica?: string; origin: string };

async function heldNow(origin: string): Promise<HeldNow> {
  const health = (await (await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(5000) })).json()) as Record<string, unknown>;
  const held = { origin, sessions: Number(health['sessions']) } as HeldNow;
  for (const k of HELD) held[k] = Number(health[k]);
  if (typeof health['replica'] === 'string') held.replica = health['replica'];
  return held;
}

const holdsNothing = (h: HeldNow) => HELD.every((k) => h[k] === 0);

/** Each front's `/healthz`, asked again until none holds anything or `HELD_WAIT_MS` passes. */
async function heldAtEnd(origins: readonly string[]): Promise<HeldNow[]> {
  const until = Date.now() + HELD_WAIT_MS;
  for (;;) {
    const held = await Promise.all(origins.map(heldNow));
    if (held.every(holdsNothing) || Date.now() > until) return held;
    await sleep(500);
  }
}

/** The fleet's keys in its Redis, by what they are; `unexpected` lists any other (or a used state that never expires). */
async function fleetKeys(
  ids: readonly string[],
): Promise<{ replicaRecords: number; hopSecret: number; stateKey: number; usedStates: number; unexpected: string[] }> {
  const c = await fleet!.client();
  const out = { replicaRecords: 0, hopSecret: 0, stateKey: 0, usedStates: 0, unexpected: [] as string[] };
  const k = fleet!.keys;
  for await (const batch of c.scanIterator({ MATCH: `${k.prefix}*`, COUNT: 100 })) {
    for (const key of batch) {
      if (ids.some((id) => key === k.replica(id))) out.replicaRecords++;
      else if (key === k.hopSecret) out.hopSecret++;
      else if (key === k.stateKey) out.stateKey++;
      else if (key.startsWith(k.usedState('')) && (await c.pTTL(key)) > 0) out.usedStates++;
      else out.unexpected.push(`${key} (ttl ${await c.pTTL(key)} ms)`);
    }
  }
  return out;
}

interface Peaks {
  upstreams: number;
  /** Upstream process ids seen (sampled once a second, so short-lived ones may be missed). */
  pids: Set<number>;
  serveRssMb: number;
  totalRssMb: number;
  cpuBusy: number[];
}

function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
/** CPU seconds of a process: its own, and of its children it has reaped. */
function processCpuS(pid: number): { own: number; reaped: number } {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')
      .map(Number);
    const tick = 100; // USER_HZ on Linux
    return { own: (f[11]! + f[12]!) / tick, reaped: (f[13]! + f[14]!) / tick };
  } catch {
    return { own: 0, reaped: 0 };
  }
}
function cpuTimes(): { busy: number; all: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const all = f.reduce((s, x) => s + x, 0);
  return { busy: all - f[3]! - (f[4] ?? 0), all };
}

/** The process ids of serve or of the replicas. */
const frontPids = (): number[] => fronts().flatMap((c) => (c.pid ? [c.pid] : []));
/** RSS of serve or of each replica now (MB). */
const frontsRssMb = (): number[] => frontPids().map((pid) => Math.round(rssKb(pid) / 1024));

/** Once a second: upstream processes (marked, less serve or the replicas), RSS of serve (the largest replica) and of all with them, CPU busy. */
class Sampler {
  peaks: Peaks = { upstreams: 0, pids: new Set(), serveRssMb: 0, totalRssMb: 0, cpuBusy: [] };
  #cpu = cpuTimes();
  readonly #timer = setInterval(() => this.#sample(), 1000);
  #sample(): void {
    const pids = frontPids();
    if (pids.length === 0) return;
    const procs = markedProcesses(marker);
    const upstreams = procs.filter((p) => !pids.includes(p.pid));
    const own = Math.max(...pids.map(rssKb));
    const total = pids.reduce((s, pid) => s + rssKb(pid), 0) + upstreams.reduce((s, p) => s + rssKb(p.pid), 0);
    const cpu = cpuTimes();
    const p = this.peaks;
    p.upstreams = Math.max(p.upstreams, upstreams.length);
    for (const u of upstreams) p.pids.add(u.pid);
    p.serveRssMb = Math.max(p.serveRssMb, own / 1024);
    p.totalRssMb = Math.max(p.totalRssMb, total / 1024);
    if (cpu.all > this.#cpu.all) p.cpuBusy.push((100 * (cpu.busy - this.#cpu.busy)) / (cpu.all - this.#cpu.all));
    this.#cpu = cpu;
  }
  /** The peaks since the last call, and a fresh start. */
  take(): Peaks {
    const p = this.peaks;
    this.peaks = { upstreams: 0, pids: new Set(), serveRssMb: 0, totalRssMb: 0, cpuBusy: [] };
    return p;
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

// ---- the phases ----

function startAttackers(config: AttackConfig): { stop(): Promise<AttackReport | undefined> } {
  const child = fork(resolve(ROOT, 'spec/load/soakAttacks.ts'), [JSON.stringify(config)], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  attacker = child;
  const report = new Promise<AttackReport | undefined>((done) => {
    child.on('message', (m: { type?: string; report?: AttackReport }) => m?.type === 'report' && done(m.report));
    child.once('exit', () => done(undefined));
  });
  return {
    async stop() {
      if (child.connected) child.send('stop');
      // It winds down (within 20 s), then ends what it holds (within 10 s), then reports.
      const r = await Promise.race([report, sleep(40_000).then(() => undefined)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return r;
    },
  };
}

interface PhaseReport {
  readonly name: string;
  readonly seconds: number;
  readonly honest: {
    ops: number;
    ok: number;
    successPct: number;
    byKind: ReturnType<HonestStats['summary']>;
    failures: string[];
    reasons: Record<string, number>;
  };
  readonly attackers?: AttackReport | { missing: true };
  readonly peaks: {
    upstreamProcesses: number;
    upstreamPidsSeen: number;
    serveRssMb: number;
    serveAndChildrenRssMb: number;
    cpuBusyMeanPct: number;
    cpuBusyMaxPct: number;
  };
  /** The soak process's own event-loop delay p99 (how much of a latency is the load generator's). */
  readonly loopDelayP99Ms: number;
  /**
   * CPU seconds in the phase: serve's own, its upstream processes' (live ones and those it has
   * reaped), and the soak process's own (the honest clients, the sampler). The machine may be
   * shared: `cpuBusy` counts everyone, these only ours.
   */
  readonly cpuSeconds: { serve: number; upstreams: number; soak: number; attackers: number };
}

/** A mark to take CPU seconds from. */
function cpuMark(): { serve: number; upstreams: number; soak: number } {
  const u = process.cpuUsage();
  const pids = frontPids();
  if (pids.length === 0) return { serve: 0, upstreams: 0, soak: (u.user + u.system) / 1e6 };
  const own = pids.map(processCpuS);
  const live = markedProcesses(marker)
    .filter((p) => !pids.includes(p.pid))
    .reduce((sum, p) => sum + processCpuS(p.pid).own, 0);
  return {
    serve: own.reduce((s, c) => s + c.own, 0),
    upstreams: own.reduce((s, c) => s + c.reaped, 0) + live,
    soak: (u.user + u.system) / 1e6,
  };
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

function phaseReport(
  name: string,
  seconds: number,
  stats: HonestStats,
  peaks: Peaks,
  since: ReturnType<typeof cpuMark>,
  attackers?: AttackReport | { missing: true },
): PhaseReport {
  const { ops, ok } = stats.total;
  const now = cpuMark();
  const cpu = peaks.cpuBusy;
  return {
    name,
    seconds,
    honest: {
      ops,
      ok,
      successPct: ops ? (100 * ok) / ops : 0,
      byKind: stats.summary(),
      failures: stats.failures,
      reasons: Object.fromEntries([...stats.reasons].sort((a, b) => b[1] - a[1])),
    },
    ...(attackers ? { attackers } : {}),
    peaks: {
      upstreamProcesses: peaks.upstreams,
      upstreamPidsSeen: peaks.pids.size,
      serveRssMb: Math.round(peaks.serveRssMb),
      serveAndChildrenRssMb: Math.round(peaks.totalRssMb),
      cpuBusyMeanPct: Math.round(cpu.reduce((s, x) => s + x, 0) / Math.max(1, cpu.length)),
      cpuBusyMaxPct: Math.round(Math.max(0, ...cpu)),
    },
    loopDelayP99Ms: Math.round(loopDelay.percentile(99) / 1e6),
    cpuSeconds: {
      serve: round1(now.serve - since.serve),
      upstreams: round1(now.upstreams - since.upstreams),
      soak: round1(now.soak - since.soak),
      attackers: round1(attackers && 'cpuSeconds' in attackers ? attackers.cpuSeconds : 0),
    },
  };
}

async function runPhase(
  name: string,
  ms: number,
  url: string,
  port: number,
  direct: readonly string[],
  sampler: Sampler,
): Promise<PhaseReport> {
  const stats = new HonestStats();
  sampler.take();
  loopDelay.reset();
  const attackers =
    name === 'attack' ? startAttackers({ url, port, direct, deadlineMs: ms + 60_000, ...(attacks ? { attacks } : {}) }) : undefined;
  let isStopped = false;
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const started = performance.now();
  const cpu = cpuMark();
  const honest = honestClients(url, stats, () => isStopped, stopped);
  await sleep(ms);
  isStopped = true;
  stop();
  const [, attacked] = await Promise.all([honest, attackers?.stop()]);
  const report = attackers ? (attacked ?? { missing: true as const }) : undefined;
  return phaseReport(name, (performance.now() - started) / 1000, stats, sampler.take(), cpu, report);
}

// ---- the report ----

const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** What the end of a run found: each front's holdings and RSS, the fleet's Redis keys. */
interface EndReport {
  /** RSS of serve or of each replica (MB): after the warm-up, when the attack phase ended, at the end. */
  readonly rssMb: { readonly beforeIdle: number[]; readonly afterAttack: number[]; readonly end: number[] };
  readonly held: HeldNow[];
  readonly fleetKeys?: Awaited<ReturnType<typeof fleetKeys>>;
}

function printReport(report: {
  config: object;
  phases: PhaseReport[];
  wrap: PhaseReport;
  end: EndReport;
  goals: Array<{ goal: string; pass: boolean; detail: string }>;
  leftAfterStop: number;
  serveExit?: string;
}): void {
  const [idle, atk] = report.phases as [PhaseReport, PhaseReport];
  const lines: string[] = [];
  lines.push(`soak: ${JSON.stringify(report.config)}`);
  lines.push(
    `phase    seconds  honest ops  success   machine cpu busy mean/max  our cpu s: ${args.fleet ? 'replicas' : 'serve'}/upstreams/soak/attackers  upstream procs peak (pids seen)  ${args.fleet ? 'replica' : '  serve'} RSS peak  +children  soak loop delay p99`,
  );
  for (const p of [...report.phases, report.wrap]) {
    lines.push(
      `${p.name.padEnd(8)} ${fmt(p.seconds).padStart(7)}  ${String(p.honest.ops).padStart(10)}  ${(fmt(p.honest.successPct) + '%').padStart(7)}   ${`${p.peaks.cpuBusyMeanPct}% / ${p.peaks.cpuBusyMaxPct}%`.padStart(25)}  ${`${p.cpuSeconds.serve} / ${p.cpuSeconds.upstreams} / ${p.cpuSeconds.soak} / ${p.cpuSeconds.attackers}`.padStart(42)}  ${`${p.peaks.upstreamProcesses} (${p.peaks.upstreamPidsSeen})`.padStart(31)}  ${`${p.peaks.serveRssMb} MB`.padStart(14)}  ${`${p.peaks.serveAndChildrenRssMb} MB`.padStart(9)}  ${`${p.loopDelayP99Ms} ms`.padStart(19)}`,
    );
  }
  lines.push('');
  lines.push('latency (ms)            idle n   p50     p99    attack n   p50     p99   p99 ratio  failed idle/attack/wrap');
  const kinds = [...new Set([...Object.keys(idle.honest.byKind), ...Object.keys(atk.honest.byKind)])];
  for (const k of kinds) {
    const i = idle.honest.byKind[k];
    const a = atk.honest.byKind[k];
    const w = report.wrap.honest.byKind[k];
    const ratio = i?.latency && a?.latency ? a.latency.p99Ms / i.latency.p99Ms : undefined;
    const counted = ratio !== undefined && i!.latency!.n >= MIN_SAMPLES && a!.latency!.n >= MIN_SAMPLES;
    lines.push(
      `${k.padEnd(22)} ${String(i?.n ?? 0).padStart(7)} ${fmt(i?.latency?.p50Ms).padStart(6)} ${fmt(i?.latency?.p99Ms).padStart(7)}   ${String(a?.n ?? 0).padStart(8)} ${fmt(a?.latency?.p50Ms).padStart(6)} ${fmt(a?.latency?.p99Ms).padStart(7)}   ${(ratio === undefined ? '-' : `×${ratio.toFixed(2)}${counted ? ' ' : '*'}`).padStart(9)}  ${i?.failed ?? 0}/${a?.failed ?? 0}/${w?.failed ?? 0}`,
    );
  }
  lines.push(`  (* fewer than ${MIN_SAMPLES} samples in a phase: not in the p99 goal)`, '');
  if (atk.attackers && 'outcomes' in atk.attackers) {
    lines.push('attackers (attack phase), by outcome:');
    for (const [kind, outcomes] of Object.entries(atk.attackers.outcomes)) {
      const parts = Object.entries(outcomes)
        .sort((x, y) => y[1] - x[1])
        .map(([o, n]) => `${n} × ${o}`);
      lines.push(`  ${kind}: ${parts.join(', ')}`);
    }
    const closed = atk.attackers.slowlorisClosedAfterS;
    if (closed.length) lines.push(`  slowloris sockets closed after ${fmt(Math.min(...closed))}–${fmt(Math.max(...closed))} s`);
    const { ssrfListenerReached, honestSessionLost } = atk.attackers.intrusions;
    lines.push(
      `  connections that reached the attacker's own listener (ssrf): ${ssrfListenerReached}; honest legacy client's requests answered 404 (sessions): ${honestSessionLost}`,
    );
  } else lines.push('attackers: no report (the attacker process did not answer)');
  for (const p of [...report.phases, report.wrap]) {
    const reasons = Object.entries(p.honest.reasons);
    if (reasons.length)
      lines.push(
        '',
        `honest failures in ${p.name}, by reason:`,
        ...reasons.slice(0, 12).map(([r, n]) => `  ${String(n).padStart(4)} × ${r}`),
      );
  }
  const { rssMb, held, fleetKeys: keys } = report.end;
  lines.push(
    '',
    `RSS (MB) of ${args.fleet ? 'each replica' : 'serve'}: after warm-up ${rssMb.beforeIdle.join(' / ')}, after the attack ${rssMb.afterAttack.join(' / ')}, at the end ${rssMb.end.join(' / ')}`,
  );
  lines.push(`held at the end (/healthz of ${args.fleet ? 'each replica' : 'serve'}):`);
  for (const h of held)
    lines.push(`  ${h.replica ?? h.origin}: ${HELD.map((k) => `${k} ${h[k]}`).join(', ')} (upstream sessions open ${h.sessions})`);
  if (keys)
    lines.push(
      `fleet keys in Redis: ${keys.replicaRecords} replica records, ${keys.hopSecret} hop-secret, ${keys.stateKey} state-key, ${keys.usedStates} used states (expiring); unexpected: ${keys.unexpected.length ? keys.unexpected.join(', ') : 'none'}`,
    );
  if (report.serveExit) lines.push('', `serve stopped during the run: ${report.serveExit}`);
  lines.push('', `marked processes left 5 s after ${args.fleet ? 'the replicas were' : 'serve was'} stopped: ${report.leftAfterStop}`);
  for (const g of report.goals) lines.push(`${g.pass ? 'PASS' : 'FAIL'}  ${g.goal}: ${g.detail}`);
  console.log(lines.join('\n'));
}

// ---- main ----

/** Outcomes of an attack kind, without those of requests it skipped. */
const sent = (r: AttackReport, kind: string) => Object.entries(r.outcomes[kind] ?? {}).filter(([o]) => !o.startsWith('skipped'));

/** The goals of the attacks on what a fleet adds, for those that ran. */
function intrusionGoals(r: AttackReport | { missing: true } | undefined): Array<{ goal: string; pass: boolean; detail: string }> {
  if (!r || !('outcomes' in r)) return [];
  const goals: Array<{ goal: string; pass: boolean; detail: string }> = [];
  const ran = (kind: string) => r.outcomes[kind] !== undefined;
  if (ran(KIND.ssrf))
    goals.push({
      goal: "ssrf: the attacker's own listener receives nothing",
      pass: r.intrusions.ssrfListenerReached === 0,
      detail: `${r.intrusions.ssrfListenerReached} connection(s) reached it`,
    });
  if (ran(KIND.hops) && args.fleet) {
    const not403 = sent(r, KIND.hops).filter(([o]) => !o.endsWith(': 403'));
    goals.push({
      goal: 'hops: every forged hop refused 403',
      pass: not403.length === 0,
      detail: not403.length
        ? not403.map(([o, n]) => `${n} × ${o}`).join(', ')
        : `${sent(r, KIND.hops).reduce((s, [, n]) => s + n, 0)} refused`,
    });
  }
  if (ran(KIND.madeUp) || ran(KIND.stolen)) {
    const served = [...sent(r, KIND.madeUp), ...sent(r, KIND.stolen)].filter(([o]) => / 2\d\d$/.test(o));
    goals.push({
      goal: 'sessions: made-up and stolen session ids never served',
      pass: served.length === 0,
      detail: served.length ? served.map(([o, n]) => `${n} × ${o}`).join(', ') : 'none served',
    });
    goals.push({
      goal: 'sessions: the honest legacy client with its GET stream open never loses its session',
      pass: r.intrusions.honestSessionLost === 0,
      detail: `${r.intrusions.honestSessionLost} request(s) answered 404`,
    });
  }
  return goals;
}

const sampler = new Sampler();
let exitCode = 1;
try {
  let url: string;
  let port: number;
  let direct: string[];
  let output: () => string;
  if (args.fleet) ({ url, port, direct, output } = await startFleet());
  else {
    port = await freePort();
    ({ url, output } = await startServe(port));
    direct = [new URL(url).origin];
  }
  const config = {
    url,
    ...(args.fleet ? { fleet: fleet!.name, replicas: direct } : {}),
    idleSeconds: IDLE_MS / 1000,
    attackSeconds: ATTACK_MS / 1000,
    settleSeconds: SETTLE_MS / 1000,
    limits: args.limit ?? [],
  };
  console.error(
    `soak: serving at ${url}${args.fleet ? ` (nginx in front of ${direct.join(', ')})` : ''}; idle ${config.idleSeconds} s, attack ${config.attackSeconds} s`,
  );
  // Warm-up: every honest caller's upstream session exists before timing starts (in a fleet, on
  // each replica: nginx takes them round robin).
  for (let round = 0; round < (args.fleet ? 2 * REPLICAS : 1); round++) await honestOnce(url, new HonestStats());
  const rssBeforeIdle = frontsRssMb();
  const idle = await runPhase('idle', IDLE_MS, url, port, direct, sampler);
  console.error(`soak: idle done (${idle.honest.ok}/${idle.honest.ops} ok); attacking`);
  const atk = await runPhase('attack', ATTACK_MS, url, port, direct, sampler);
  const rssAfterAttack = frontsRssMb();
  console.error(`soak: attack done (${atk.honest.ok}/${atk.honest.ops} ok); settling ${SETTLE_MS / 1000} s`);
  await sleep(SETTLE_MS);
  sampler.take();
  loopDelay.reset();
  const wrapStats = new HonestStats();
  const t0 = performance.now();
  const cpu = cpuMark();
  await honestOnce(url, wrapStats);
  const wrap = phaseReport('wrap', (performance.now() - t0) / 1000, wrapStats, sampler.take(), cpu);
  const held = await heldAtEnd(direct);
  const keys = args.fleet ? await fleetKeys(held.flatMap((h) => (h.replica ? [h.replica] : []))) : undefined;
  const end: EndReport = {
    rssMb: { beforeIdle: rssBeforeIdle, afterAttack: rssAfterAttack, end: frontsRssMb() },
    held,
    ...(keys ? { fleetKeys: keys } : {}),
  };
  const during = serveExit;
  sampler.stop();

  // Stop serve (or the replicas, then nginx) as a user would, and see that the upstream processes go with it.
  if (serve) {
    serve.kill('SIGTERM');
    await Promise.race([new Promise((r) => serve!.once('exit', r)), sleep(10_000)]);
  } else {
    await Promise.race([Promise.all(replicas.map(stopReplica)), sleep(10_000)]);
    await nginx?.stop();
    nginx = undefined;
  }
  await markedProcessesGone(marker, 5000);
  const leftAfterStop = markedProcesses(marker).length;
  if (during) console.error(`soak: ${args.fleet ? "the replicas'" : "serve's"} last output:\n${output()}`);

  const worst: Array<{ kind: string; ratio: number }> = [];
  for (const [kind, a] of Object.entries(atk.honest.byKind)) {
    const i = idle.honest.byKind[kind];
    if (!a.latency || !i?.latency || a.latency.n < MIN_SAMPLES || i.latency.n < MIN_SAMPLES) continue;
    worst.push({ kind, ratio: a.latency.p99Ms / i.latency.p99Ms });
  }
  worst.sort((x, y) => y.ratio - x.ratio);
  const over = worst.filter((w) => w.ratio > P99_FACTOR);
  const goals = [
    {
      goal: 'honest success 100%',
      pass: idle.honest.ok === idle.honest.ops && atk.honest.ok === atk.honest.ops,
      detail: `idle ${idle.honest.ok}/${idle.honest.ops}, attack ${atk.honest.ok}/${atk.honest.ops}`,
    },
    {
      goal: `attack p99 ≤ ${P99_FACTOR} × idle p99, every operation kind with ≥ ${MIN_SAMPLES} samples`,
      pass: worst.length > 0 && over.length === 0,
      detail: over.length
        ? `over: ${over.map((w) => `${w.kind} ×${w.ratio.toFixed(2)}`).join(', ')}`
        : `worst ${worst[0] ? `${worst[0].kind} ×${worst[0].ratio.toFixed(2)}` : '(none measured)'}`,
    },
    {
      goal: `wrap health: one honest round ${SETTLE_MS / 1000} s after the attack`,
      pass: wrap.honest.ops > 0 && wrap.honest.ok === wrap.honest.ops && during === undefined,
      detail: `${wrap.honest.ok}/${wrap.honest.ops}${during ? `; ${during}` : ''}`,
    },
    {
      goal: `nothing held at the end (/healthz of ${args.fleet ? 'each replica' : 'serve'}: ${HELD.join(', ')})`,
      pass: held.every(holdsNothing),
      detail: held.every(holdsNothing)
        ? 'all 0'
        : held
            .filter((h) => !holdsNothing(h))
            .map(
              (h) =>
                `${h.replica ?? h.origin}: ${HELD.filter((k) => h[k] !== 0)
                  .map((k) => `${k} ${h[k]}`)
                  .join(', ')}`,
            )
            .join('; '),
    },
    ...(keys
      ? [
          {
            goal: "the fleet's Redis keys are only replica records, hop-secret, state-key and expiring used states",
            pass: keys.unexpected.length === 0 && keys.hopSecret === 1 && keys.stateKey === 1 && keys.replicaRecords === REPLICAS,
            detail: `${keys.replicaRecords} records, ${keys.hopSecret} hop-secret, ${keys.stateKey} state-key, ${keys.usedStates} used; unexpected: ${keys.unexpected.length ? keys.unexpected.join(', ') : 'none'}`,
          },
        ]
      : []),
    ...intrusionGoals(atk.attackers),
  ];
  const report = { config, phases: [idle, atk], wrap, end, goals, leftAfterStop, ...(during ? { serveExit: during } : {}) };
  printReport(report);
  if (args.json) writeFileSync(args.json, JSON.stringify(report, null, 2) + '\n');
  exitCode = goals.every((g) => g.pass) ? 0 : 1;
} catch (e) {
  console.error(`soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  exitCode = 1;
} finally {
  sampler.stop();
  killAll();
  // The fleet's keys go with it, whichever way the run ended.
  await fleet?.end().catch(() => {});
}
process.exit(exitCode);
