/**
 * Replicas of `mcp-dual-era serve --fleet` for the fleet specs: real processes running the built
 * command (`dist/cli/main.js`, as installed: Node itself, no TypeScript loader, so a SIGKILL
 * reaches the replica and a loaded machine does not compile every module in every replica) in
 * front of server-everything over stdio (or another legacy server command), on free ports, in a
 * fleet of the spec's own on the machine's Redis; ready once they say where they serve (within a
 * bound); stopped by process id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { builtCli } from './built.ts';
import { EVERYTHING } from './everything.ts';
import type { SpecFleet } from './fleetRedis.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** How long a replica may take to say where it serves (its upstream started and described). */
const READY_MS = 60_000;

/** A running replica: its process, its endpoint, what it has logged. */
export interface Replica {
  readonly child: ChildProcess;
  readonly url: string;
  readonly origin: string;
  readonly log: () => string;
}

/** server-everything over stdio, the upstream replicas serve unless told otherwise. */
const EVERYTHING_UPSTREAM: readonly string[] = [process.execPath, EVERYTHING, 'stdio'];

/** Starts a replica with `extra` options of `serve` (before `--`), in front of `upstream` (the legacy server command after `--`; none with `--upstream <url>` in `extra`). */
export async function startReplica(fleet: SpecFleet, extra: readonly string[] = [], upstream: readonly string[] = EVERYTHING_UPSTREAM): Promise<Replica> {
  const child = spawn(process.execPath, [builtCli(), 'serve', '--port', '0', '--fleet', fleet.url, '--fleet-name', fleet.name, ...extra, ...(upstream.length > 0 ? ['--', ...upstream] : [])], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const url = await new Promise<string>((resolveUrl, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      log += c.toString();
      const m = /serving .* at (http:\/\/\S+)/.exec(log);
      if (m) resolveUrl(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${log}`)));
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`a replica did not say where it serves within ${READY_MS / 1000} s: ${log}`));
    }, READY_MS);
  }).finally(() => clearTimeout(timer));
  return { child, url, origin: new URL(url).origin, log: () => log };
}

/** Stops a replica (SIGINT: at once, no drain) unless it has exited. */
export async function stopReplica(replica: Replica): Promise<void> {
  if (replica.child.exitCode !== null || replica.child.signalCode !== null) return;
  const exited = new Promise((r) => replica.child.once('exit', r));
  replica.child.kill('SIGINT');
  await exited;
}

/** Retries and legacy-session requests the replicas forwarded to their owners, summed (each replica's `/healthz`). */
export async function forwardedIn(replicas: readonly Replica[]): Promise<number> {
  let n = 0;
  for (const r of replicas) n += ((await (await fetch(`${r.origin}/healthz`)).json()) as { forwarded: number }).forwarded;
  return n;
}
