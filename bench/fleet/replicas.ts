/**
 * The processes of the fleet bench: `mcp-dual-era serve` (compiled, as installed) in front of the
 * legacy push server over stdio, as a replica of a fleet (`--fleet`, `--fleet-name`) or alone; the
 * address and replica id each one logs; the Redis connections a process holds, read from /proc; and
 * stopping each one by its process id.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_NODE_FLAGS, childPids, start, stop, type Started } from '../wrap/procs.ts';

const root = join(import.meta.dirname, '..', '..');

/** A running `serve`: its endpoint, its replica id (in a fleet), its process. */
export interface Served {
  readonly label: string;
  readonly url: URL;
  /** The id it has in its fleet; `undefined` for a `serve` without `--fleet`. */
  readonly replica: string | undefined;
  readonly proc: Started;
  stop(): Promise<void>;
}

/** What a `serve` is started with: the compiled CLI, the push server's script, its fleet if any, and further options of `serve`. */
export interface ServeCommand {
  readonly cli: string;
  readonly pushServer: string;
  readonly fleet?: { readonly redis: string; readonly name: string };
  readonly options?: readonly string[];
}

const STARTUP_MS = 30_000;

/** Starts one `serve` on a port of its own choosing; resolves once it says where it serves. */
export async function startServe(label: string, command: ServeCommand): Promise<Served> {
  const node = process.execPath;
  const fleetArgs = command.fleet ? ['--fleet', command.fleet.redis, '--fleet-name', command.fleet.name] : [];
  const proc = start(
    node,
    [
      ...BENCH_NODE_FLAGS,
      command.cli,
      'serve',
      '--port',
      '0',
      ...fleetArgs,
      ...(command.options ?? []),
      '--',
      node,
      ...BENCH_NODE_FLAGS,
      command.pushServer,
    ],
    { cwd: root },
  );
  const ready = new Promise<{ url: URL; replica: string | undefined }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: not serving after ${STARTUP_MS} ms\n${proc.log()}`)), STARTUP_MS);
    const look = () => {
      const log = proc.log();
      const url = /serving .* at (http:\/\/\S+)/.exec(log)?.[1];
      if (!url) return;
      const replica = /this replica is ([\w-]+)/.exec(log)?.[1];
      clearTimeout(timer);
      proc.child.stderr!.off('data', look);
      if (command.fleet && !replica) reject(new Error(`${label}: serving, but it never said its replica id\n${log}`));
      else resolve({ url: new URL(url), replica });
    };
    proc.child.stderr!.on('data', look);
    proc.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label}: exited (${code}) before serving\n${proc.log()}`));
    });
  });
  let found: { url: URL; replica: string | undefined };
  try {
    found = await ready;
  } catch (e) {
    await stop(proc, childPids(proc.pid), () => proc.child.kill('SIGINT'));
    throw e;
  }
  let servers = childPids(proc.pid);
  return {
    label,
    ...found,
    proc,
    async stop() {
      const now = childPids(proc.pid);
      if (now.length > 0) servers = now;
      // SIGINT: at once, without the drain a replica does on SIGTERM.
      await stop(proc, servers, () => proc.child.kill('SIGINT'));
    },
  };
}

/** The socket inodes process `pid` holds. */
function socketInodes(pid: number): Set<string> {
  const out = new Set<string>();
  const dir = `/proc/${pid}/fd`;
  let fds: string[];
  try {
    fds = readdirSync(dir);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(join(dir, fd)));
      if (m) out.add(m[1]!);
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

/** An address of /proc/net/tcp (`0100007F:D431`) or tcp6 as `host:port`, the way Redis names a client. */
function procAddress(hex: string, v6: boolean): { host: string; port: number } {
  const [ip, port] = hex.split(':') as [string, string];
  const words = (ip.match(/.{8}/g) ?? []).map((w) => Buffer.from(w, 'hex').reverse());
  if (!v6) return { host: [...words[0]!].join('.'), port: parseInt(port, 16) };
  const bytes = Buffer.concat(words);
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return { host: [...bytes.subarray(12)].join('.'), port: parseInt(port, 16) };
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(':');
  return { host: new URL(`http://[${groups}]/`).hostname.slice(1, -1), port: parseInt(port, 16) };
}

/**
 * The client addresses (`127.0.0.1:54321`, as MONITOR and CLIENT LIST show them) of the TCP
 * connections process `pid` holds to port `redisPort`: its Redis connections.
 */
export function redisConnectionsOf(pid: number, redisPort: number): Set<string> {
  const inodes = socketInodes(pid);
  const out = new Set<string>();
  for (const [file, v6] of [
    ['/proc/net/tcp', false],
    ['/proc/net/tcp6', true],
  ] as const) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      const remote = procAddress(f[2]!, v6);
      if (remote.port !== redisPort) continue;
      const local = procAddress(f[1]!, v6);
      out.add(`${local.host}:${local.port}`);
    }
  }
  return out;
}

/** Starts the bare hop (bench/fleet/bareHop.mjs) in front of `origin`; resolves once it listens. */
export async function startBareHop(origin: URL): Promise<{ url: URL; proc: Started; stop(): Promise<void> }> {
  const proc = start(process.execPath, [...BENCH_NODE_FLAGS, join(import.meta.dirname, 'bareHop.mjs'), origin.origin], { cwd: root });
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bare hop: not listening after ${STARTUP_MS} ms\n${proc.log()}`)), STARTUP_MS);
    const look = () => {
      const found = /listening on (\d+)/.exec(proc.log())?.[1];
      if (!found) return;
      clearTimeout(timer);
      resolve(found);
    };
    proc.child.stdout!.on('data', look);
    proc.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bare hop: exited (${code})\n${proc.log()}`));
    });
  });
  return { url: new URL(`http://127.0.0.1:${port}${origin.pathname}`), proc, stop: () => stop(proc, [], () => proc.child.kill('SIGINT')) };
}
