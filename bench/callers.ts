/**
 * `npm run bench:callers [-- --quick] [-- --callers=1,100,1000] [-- --only=KEYS] [-- --concurrency=N]`: many distinct
 * callers on one front of server-everything (stdio), each caller a made-up bearer token sending one
 * `echo` call, 32 at a time, as a team behind one endpoint would. For each front and each number
 * of callers: how many were answered, the wall time and throughput, p50 and p99, and the upstream
 * processes and memory (the front and everything under it) when the wave ends.
 *
 * The fronts: `serve` (isolated: a session per caller), `serve --share-sessions`, mcp-proxy (one
 * shared session) and the pass-through (bench/passthrough.ts: one server, body in, line out: the
 * ceiling). Each wave uses callers never seen before. Writes bench/results/callers.json.
 */
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ascending, percentile } from './shared/stats.ts';
import { banner, consoleTable, writeResults } from './shared/format.ts';
import { BENCH_NODE_FLAGS, freePort, start, stop, waitFor, type Started } from './wrap/procs.ts';
import type { CallersPart } from './report/types.ts';

const require = createRequire(import.meta.url);
const root = join(import.meta.dirname, '..');
const node = process.execPath;
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const MCP_PROXY_BIN = join(root, 'node_modules', 'mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs');
const CLI = join(root, 'lib', 'cli', 'main.ts');
const TSX = ['--import', 'tsx'];

const args = process.argv.slice(2);
const option = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = args.includes('--quick');
const CALLERS = (option('callers') ?? (quick ? '1,100,200' : '1,100,200,1000')).split(',').map(Number);
const CONCURRENCY = Number(option('concurrency') ?? 32);
/** How long one call may take before it counts as unanswered. */
const CALL_TIMEOUT_MS = 30_000;

interface Front {
  readonly key: string;
  readonly label: string;
  /** Whether it is sent modern requests (else legacy ones: the pass-through relays bodies verbatim). */
  readonly modern: boolean;
  readonly command: (port: number) => string[];
  readonly url: (port: number) => string;
}

const everything = [node, ...BENCH_NODE_FLAGS, EVERYTHING, 'stdio'];
const FRONTS: readonly Front[] = [
  {
    key: 'wrap',
    label: 'serve (isolated)',
    modern: true,
    command: (p) => [...TSX, CLI, 'serve', '--quiet', '--port', String(p), '--', ...everything],
    url: (p) => `http://127.0.0.1:${p}/mcp`,
  },
  {
    key: 'wrap-shared',
    label: 'serve --share-sessions',
    modern: true,
    command: (p) => [...TSX, CLI, 'serve', '--quiet', '--share-sessions', '--port', String(p), '--', ...everything],
    url: (p) => `http://127.0.0.1:${p}/mcp`,
  },
  {
    key: 'mcp-proxy',
    label: 'mcp-proxy 6.7.19',
    modern: true,
    command: (p) => [MCP_PROXY_BIN, '--host', '127.0.0.1', '--port', String(p), '--', ...everything],
    url: (p) => `http://127.0.0.1:${p}/mcp`,
  },
  {
    key: 'passthrough',
    label: 'pass-through',
    modern: false,
    command: (p) => [...TSX, join(root, 'bench', 'passthrough.ts'), '--port', String(p), '--', ...everything],
    url: (p) => `http://127.0.0.1:${p}/`,
  },
];
const only = option('only')?.split(',');
const fronts = FRONTS.filter((f) => !only || only.includes(f.key));

let ids = 0;
/** One `echo` call as `caller`, modern (with the envelope) or legacy; resolves with the time taken, or why it failed. */
async function call(url: string, modern: boolean, caller: string): Promise<{ ms: number } | { failed: string }> {
  const id = ++ids;
  const params: Record<string, unknown> = { name: 'echo', arguments: { message: `hello ${caller}` } };
  if (modern)
    params['_meta'] = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'callers-bench', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${caller}`,
  };
  if (modern) Object.assign(headers, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' });
  const began = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const text = await res.text();
    const ms = performance.now() - began;
    // The answer is the last `data:` line of an event stream, or the body.
    const body = text.startsWith('{')
      ? text
      : (text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .at(-1)
          ?.slice(5) ?? '');
    const message = JSON.parse(body) as {
      result?: { content?: Array<{ text?: string }>; isError?: boolean };
      error?: { code: number; message: string };
    };
    // Failures are counted by kind: the message with its figures left out.
    if (message.error) return { failed: `${res.status} ${message.error.code} ${message.error.message.replace(/\d+/g, 'N').slice(0, 70)}` };
    if (!message.result?.content?.[0]?.text?.includes(caller)) return { failed: `${res.status} no echo` };
    return { ms };
  } catch (e) {
    return { failed: e instanceof Error ? e.name : String(e) };
  }
}

/** The processes under `pid` (its children, theirs, …). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Resident memory of a process, in bytes (0 once gone). */
function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Server processes under the front: the node processes running server-everything. */
function serverPids(front: number): number[] {
  return descendants(front).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('server-everything');
    } catch {
      return false;
    }
  });
}

/** One wave of distinct callers through one front, as the report reads it. */
type Wave = CallersPart['waves'][number];

async function wave(front: Front, started: Started, url: string, callers: number, tag: string): Promise<Wave> {
  const times: number[] = [];
  const failures: Record<string, number> = {};
  let next = 0;
  const began = performance.now();
  let peakServers = 0;
  let peakMemory = 0;
  const sample = () => {
    const pids = serverPids(started.pid);
    peakServers = Math.max(peakServers, pids.length);
    peakMemory = Math.max(
      peakMemory,
      [started.pid, ...descendants(started.pid)].reduce((n, p) => n + rss(p), 0),
    );
  };
  const sampler = setInterval(sample, 250);
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, callers) }, async () => {
      while (next < callers) {
        const caller = `${tag}-caller-${next++}`;
        const r = await call(url, front.modern, caller);
        if ('ms' in r) times.push(r.ms);
        else failures[r.failed] = (failures[r.failed] ?? 0) + 1;
      }
    }),
  );
  const wallMs = performance.now() - began;
  clearInterval(sampler);
  sample();
  const sorted = ascending(times);
  return {
    front: front.key,
    label: front.label,
    callers,
    answered: times.length,
    wallMs,
    perSecond: (times.length / wallMs) * 1000,
    p50Ms: sorted.length ? percentile(sorted, 0.5) : Number.NaN,
    p99Ms: sorted.length ? percentile(sorted, 0.99) : Number.NaN,
    servers: peakServers,
    memoryMb: peakMemory / 2 ** 20,
    failures,
  };
}

async function run(front: Front): Promise<Wave[]> {
  const port = await freePort();
  const started = start(node, front.command(port), { cwd: root });
  const url = front.url(port);
  const out: Wave[] = [];
  try {
    await waitFor(front.key, async () => 'ms' in (await call(url, front.modern, 'ready')), 60_000, started);
    for (const n of CALLERS) {
      const w = await wave(front, started, url, n, `${front.key}-${n}`);
      out.push(w);
      console.log(
        `${front.label.padEnd(24)} ${String(n).padStart(5)} callers: ${w.answered}/${n} in ${(w.wallMs / 1000).toFixed(1)} s, p50 ${w.p50Ms.toFixed(0)} ms, p99 ${w.p99Ms.toFixed(0)} ms, ${w.servers} servers, ${w.memoryMb.toFixed(0)} MB${Object.keys(w.failures).length ? ` (${JSON.stringify(w.failures)})` : ''}`,
      );
    }
  } finally {
    await stop(started, descendants(started.pid));
  }
  return out;
}

console.log(
  banner(`callers bench: ${CALLERS.join(', ')} distinct callers × 1 echo, ${CONCURRENCY} at a time, server-everything over stdio`),
);
const waves: Wave[] = [];
for (const front of fronts) waves.push(...(await run(front)));
const baseline = new Map(waves.filter((w) => w.front === 'mcp-proxy').map((w) => [w.callers, w]));
console.log(
  consoleTable(
    ['front', 'callers', 'answered', 'calls/s', 'p50 ms', 'p99 ms', 'p99 / mcp-proxy', 'servers', 'MB'],
    waves.map((w) => {
      const base = baseline.get(w.callers);
      return [
        FRONTS.find((f) => f.key === w.front)!.label,
        String(w.callers),
        `${w.answered}/${w.callers}`,
        w.perSecond.toFixed(0),
        w.p50Ms.toFixed(0),
        w.p99Ms.toFixed(0),
        base ? `×${(w.p99Ms / base.p99Ms).toFixed(2)}` : '–',
        String(w.servers),
        w.memoryMb.toFixed(0),
      ];
    }),
  ),
);
console.log(`written: ${writeResults('callers.json', { callers: CALLERS, concurrency: CONCURRENCY, waves })}`);
