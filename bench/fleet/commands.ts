/**
 * Redis commands per call, counted exactly on a Redis that other programs may be using too: the
 * bench watches the Redis with MONITOR and counts only the commands that come from the replicas'
 * own connections (found from their sockets in /proc), between markers it sends itself (an ECHO
 * naming the phase), so that neither another program's commands nor idle time gets in. The
 * heartbeat (a replica's SET of its own directory record every second, and LRANGE of the agreed
 * keys when it refreshes them every 10 s) is counted apart: what is left is what the calls made.
 *
 * Phases: idle (nothing sent), plain calls (`echo`, modern, `concurrency` in flight, to A), then
 * rounds one at a time: the first call (to A), and its retry either to A (local) or to B
 * (forwarded to A), alternating.
 */
import { createClient } from 'redis';
import { askText, checkText, forEachLimit, retryText, sleep, stateOf, type Wrong } from '../mrtr/requests.ts';
import { httpDriver } from '../wrap/load.ts';
import type { Call } from './calls.ts';
import { redisConnectionsOf } from './replicas.ts';

/** The phases, in the order they run. */
export const PHASES = ['idle', 'plain', 'first', 'local', 'forwarded'] as const;
export type PhaseKey = (typeof PHASES)[number];

export interface CommandPhase {
  readonly key: PhaseKey;
  /** Calls made in the phase (none while idle). */
  readonly calls: number;
  /** Commands the replicas sent in it, the heartbeat left out. */
  readonly commands: number;
  /** `commands ÷ calls` (the idle phase: commands per second). */
  readonly perCall: number;
  /** The same commands by replica, command and key (`B: GET replica:A`). */
  readonly byCommand: Readonly<Record<string, number>>;
}

export interface CommandsResult {
  /** How the commands were told apart, for the report. */
  readonly method: string;
  readonly phases: readonly CommandPhase[];
  readonly idleSeconds: number;
  /** Plain calls in flight at once (the rounds go one at a time). */
  readonly concurrency: number;
  /** Heartbeat commands seen while the phases ran, and how many per replica per second. */
  readonly heartbeat: {
    readonly commands: number;
    readonly seconds: number;
    readonly perReplicaPerSecond: number;
    readonly byCommand: Readonly<Record<string, number>>;
  };
  /** Commands on the fleet's keys from connections that are neither a replica's nor the bench's: 0 unless a replica has a connection the bench did not find. */
  readonly unattributed: number;
  /** The Redis connections found for each replica. */
  readonly connections: Readonly<Record<string, readonly string[]>>;
}

/** A replica as the count knows it. */
export interface CountedReplica {
  readonly label: string;
  readonly id: string;
  readonly pid: number;
}

/** How long a marker may take to come back through MONITOR. */
const MARKER_TIMEOUT_MS = 10_000;

export const COUNT_METHOD =
  "MONITOR on the Redis, counting only the commands from the replicas' own connections (found from their sockets in /proc) between ECHO markers the bench sends, " +
  "the heartbeat (each replica's SET of its directory record, every 1 s, and LRANGE of the agreed keys, every 10 s) counted apart";

/** The arguments of one MONITOR line (`1700000000.000000 [0 127.0.0.1:5000] "GET" "k"`) and its client address. */
export function parseMonitorLine(line: string): { addr: string; args: string[] } | undefined {
  const head = /^\d+\.\d+ \[\d+ ([^\]]+)\] /.exec(line);
  if (!head) return undefined;
  const args: string[] = [];
  for (const m of line.slice(head[0].length).matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    args.push(
      m[1]!.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, e: string) =>
        e.length === 3
          ? String.fromCharCode(parseInt(e.slice(1), 16))
          : (({ n: '\n', r: '\r', t: '\t' } as Record<string, string>)[e] ?? e),
      ),
    );
  }
  return { addr: head[1]!, args };
}

/** Tallies the replicas' commands by phase, from MONITOR lines. */
export class CommandTally {
  readonly #prefix: string;
  readonly #marker: string;
  readonly #connections = new Map<string, CountedReplica>();
  readonly #labels = new Map<string, string>();
  readonly #own = new Set<string>();
  readonly #counts = new Map<string, Map<string, number>>();
  readonly #heartbeat = new Map<string, number>();
  #phase = 'before';
  #unattributed = 0;
  readonly #waiters: Array<{ phase: string; resolve: () => void }> = [];

  /** `prefix`: the fleet's key prefix; `marker`: what the bench's ECHO markers begin with. */
  constructor(prefix: string, marker: string, replicas: readonly CountedReplica[]) {
    this.#prefix = prefix;
    this.#marker = marker;
    for (const r of replicas) this.#labels.set(r.id, r.label);
  }

  /** Counts commands from `addr` as `replica`'s. */
  attribute(addr: string, replica: CountedReplica): void {
    this.#connections.set(addr, replica);
  }

  /** The connections of the bench itself (its markers), never counted. */
  own(addr: string): void {
    this.#own.add(addr);
  }

  get phase(): string {
    return this.#phase;
  }

  /** Resolves once a marker of `phase` was seen. */
  reached(phase: string): Promise<void> {
    if (this.#phase === phase) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ phase, resolve }));
  }

  /** A key as the report names it: the fleet's prefix left out, a replica id by its label. */
  #keyName(key: string): string {
    if (!key.startsWith(this.#prefix)) return '(a key outside the fleet)';
    const rest = key.slice(this.#prefix.length);
    const replica = /^replica:(.+)$/.exec(rest);
    if (replica) return `replica:${this.#labels.get(replica[1]!) ?? '?'}`;
    return rest.replace(/^used:.*/, 'used:*');
  }

  line(text: string): void {
    const parsed = parseMonitorLine(text);
    if (!parsed || parsed.args.length === 0) return;
    const [name, ...rest] = parsed.args;
    const command = name!.toUpperCase();
    if (command === 'ECHO' && rest[0]?.startsWith(this.#marker)) {
      this.#phase = rest[0].slice(this.#marker.length);
      for (let i = this.#waiters.length - 1; i >= 0; i--) {
        if (this.#waiters[i]!.phase !== this.#phase) continue;
        this.#waiters[i]!.resolve();
        this.#waiters.splice(i, 1);
      }
      return;
    }
    const replica = this.#connections.get(parsed.addr);
    if (!replica) {
      if (!this.#own.has(parsed.addr) && rest.some((a) => a.startsWith(this.#prefix))) this.#unattributed++;
      return;
    }
    const key = rest[0];
    const what = `${replica.label}: ${command}${key === undefined ? '' : ` ${this.#keyName(key)}`}`;
    const beat =
      (command === 'SET' && key === `${this.#prefix}replica:${replica.id}`) || (command === 'LRANGE' && key === `${this.#prefix}state-key`);
    if (beat) {
      if (this.#phase === 'before') return;
      this.#heartbeat.set(what, (this.#heartbeat.get(what) ?? 0) + 1);
      return;
    }
    let phase = this.#counts.get(this.#phase);
    if (!phase) this.#counts.set(this.#phase, (phase = new Map()));
    phase.set(what, (phase.get(what) ?? 0) + 1);
  }

  /** The commands of `phase`, the heartbeat left out. */
  countsOf(phase: string): Record<string, number> {
    return Object.fromEntries([...(this.#counts.get(phase) ?? new Map<string, number>())].sort(([a], [b]) => a.localeCompare(b)));
  }

  get heartbeat(): Record<string, number> {
    return Object.fromEntries([...this.#heartbeat].sort(([a], [b]) => a.localeCompare(b)));
  }

  get unattributed(): number {
    return this.#unattributed;
  }
}

export interface CommandsPlan {
  readonly idleMs: number;
  readonly plainCalls: number;
  readonly concurrency: number;
  /** Pairs of rounds (one local and one forwarded retry each). */
  readonly pairs: number;
}

/** Counts the commands of each phase: `a` and `b` call replicas A and B; `aUrl` takes the plain calls. */
export async function countCommands(
  redisUrl: string,
  prefix: string,
  replicas: readonly CountedReplica[],
  calls: { readonly a: Call; readonly b: Call; readonly aUrl: URL },
  plan: CommandsPlan,
  nextId: () => number,
  wrong: Wrong,
): Promise<CommandsResult> {
  const marker = `mcp-dual-era-bench:${prefix}mark:`;
  const tally = new CommandTally(prefix, marker, replicas);
  const redisPort = Number(new URL(redisUrl).port || 6379);
  const connections: Record<string, string[]> = {};
  for (const r of replicas) {
    const found = [...redisConnectionsOf(r.pid, redisPort)];
    connections[r.label] = found;
    for (const addr of found) tally.attribute(addr, r);
  }
  const monitor = createClient({ url: redisUrl });
  const markers = createClient({ url: redisUrl });
  monitor.on('error', () => {});
  markers.on('error', () => {});
  await monitor.connect();
  await markers.connect();
  try {
    tally.own((await markers.clientInfo()).addr);
    await monitor.monitor((line) => tally.line(String(line)));
    const mark = async (phase: string) => {
      await markers.echo(`${marker}${phase}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(() => reject(new Error(`MONITOR never showed the marker of phase ${phase}`)), MARKER_TIMEOUT_MS)),
      );
      await Promise.race([tally.reached(phase), late]).finally(() => clearTimeout(timer));
    };
    const started = performance.now();
    await mark('idle');
    await sleep(plan.idleMs);
    const idleSeconds = (performance.now() - started) / 1000;

    await mark('plain');
    const driver = httpDriver({ url: calls.aUrl, modernAnswer: true }, plan.concurrency);
    try {
      await forEachLimit(plan.plainCalls, plan.concurrency, async () => {
        const id = nextId();
        const problem = await driver.call(id, `count-${id}`);
        if (problem) wrong.add(`plain call ${id}: ${problem}`);
      });
    } finally {
      await driver.close();
    }

    for (let i = 0; i < plan.pairs; i++) {
      for (const kind of i % 2 === 0 ? (['local', 'forwarded'] as const) : (['forwarded', 'local'] as const)) {
        await mark('first');
        const id = nextId();
        const first = await calls.a(askText(id), 'ask_name');
        const got = typeof first === 'string' ? { wrong: first } : stateOf(first, id);
        if ('wrong' in got) {
          wrong.add(`first call ${id}: ${got.wrong}`);
          continue;
        }
        await mark(kind);
        const r = nextId();
        const answer = await (kind === 'local' ? calls.a : calls.b)(retryText(r, got.state, `n${r}`), 'ask_name');
        const problem = typeof answer === 'string' ? answer : checkText(answer, r, `Hello, n${r}!`);
        if (problem) wrong.add(`${kind} retry ${r} (counting commands): ${problem}`);
      }
    }
    await mark('end');
    const seconds = (performance.now() - started) / 1000;

    const callsOf: Record<PhaseKey, number> = {
      idle: 0,
      plain: plan.plainCalls,
      first: plan.pairs * 2,
      local: plan.pairs,
      forwarded: plan.pairs,
    };
    const phases = PHASES.map((key): CommandPhase => {
      const byCommand = tally.countsOf(key);
      const commands = Object.values(byCommand).reduce((s, n) => s + n, 0);
      return { key, calls: callsOf[key], commands, perCall: key === 'idle' ? commands / idleSeconds : commands / callsOf[key], byCommand };
    });
    const heartbeat = tally.heartbeat;
    const beats = Object.values(heartbeat).reduce((s, n) => s + n, 0);
    return {
      method: COUNT_METHOD,
      phases,
      idleSeconds,
      concurrency: plan.concurrency,
      heartbeat: { commands: beats, seconds, perReplicaPerSecond: beats / seconds / replicas.length, byCommand: heartbeat },
      unattributed: tally.unattributed,
      connections,
    };
  } finally {
    await monitor.close().catch(() => monitor.destroy());
    await markers.close().catch(() => markers.destroy());
  }
}
