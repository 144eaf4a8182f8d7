/**
 * Processes for the wrap bench: starting a contender, a free loopback port, CPU time read from
 * `/proc` (so each cell can say where the machine's two cores went), and stopping what we started,
 * by pid.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * V8 flags for every Node process of the wrap bench: the fronts, the servers and the load generator
 * (`bench/all.ts` starts it with them; `npm run bench:wrap` in package.json too). Why: bench/RESULTS.md, section 2.
 * BENCH_PROF=DIR adds `--cpu-prof` into DIR: a profile of each process a bench starts.
 */
export const BENCH_NODE_FLAGS: readonly string[] = [
  '--no-memory-reducer',
  ...(process.env['BENCH_PROF'] ? ['--cpu-prof', '--cpu-prof-dir=' + process.env['BENCH_PROF']] : []),
];

/** A free TCP port on 127.0.0.1 (bound and released; another process could take it, rarely). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time of a process (all its threads), in microseconds; `undefined` once it is gone. */
export function cpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the name: state(3) ppid(4) … utime(14) stime(15), so utime is at index 11.
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks()) * 1e6;
  } catch {
    return undefined;
  }
}

/** The pids whose parent is `pid` (one scan of /proc). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

export interface Started {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything the process wrote to stderr (and stdout, when not piped for protocol use), for diagnostics. */
  readonly log: () => string;
}

/**
 * Starts `command args` with its stdout and stderr captured (not protocol pipes), or with stdin and
 * stdout as protocol pipes when `protocol` is set.
 */
export function start(
  command: string,
  args: readonly string[],
  options: { cwd: string; protocol?: boolean; env?: NodeJS.ProcessEnv },
): Started {
  const child = spawn(command, [...args], { cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
  let log = '';
  const keep = (chunk: Buffer) => {
    log += chunk.toString('utf8');
    if (log.length > 64 * 1024) log = log.slice(-32 * 1024);
  };
  child.stderr!.on('data', keep);
  if (!options.protocol) child.stdout!.on('data', keep);
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  return { child, pid: child.pid, log: () => log };
}

/** Waits until `check` resolves true (polling), or throws after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, started?: Started): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (started && started.child.exitCode !== null)
      throw new Error(`${what}: the process exited (${started.child.exitCode})\n${started.log()}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`${what}: not ready after ${timeoutMs} ms\n${started?.log() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a process we started: SIGTERM (or the given gentle stop), then SIGKILL after a grace
 * period; then any of the `orphans` (its children we saw) still running, by pid.
 */
export async function stop(started: Started, orphans: readonly number[] = [], gentle?: () => void): Promise<void> {
  const { child } = started;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (gentle) gentle();
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  for (const pid of orphans) {
    if (!alive(pid)) continue;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
}

/** CPU time the whole machine spent busy (all processes, every core), in microseconds, from /proc/stat. */
export function machineBusyMicros(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / clockTicks()) * 1e6;
  } catch {
    return undefined;
  }
}
