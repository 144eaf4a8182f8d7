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
import { servingUrl } from './servingUrl.ts';

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
export async function startReplica(
  fleet: SpecFleet,
  extra: readonly string[] = [],
  upstream: readonly string[] = EVERYTHING_UPSTREAM,
): Promise<Replica> {
  const child = spawn(
    process.execPath,
    [
      builtCli(),
      'serve',
      '--port',
      '0',
      '--fleet',
      fleet.url,
      '--fleet-name',
      fleet.name,
      ...extra,
      ...(upstream.length > 0 ? ['--', ...upstream] : []),
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const serving = servingUrl(child, READY_MS);
  const url = await serving.url;
  return { child, url, origin: new URL(url).origin, log: serving.log };
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

/** The `_meta` of a modern call that declares elicitation (server-everything's eliciting tool needs it). */
export const ELICITATION_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};
/** The routing headers of a call of `trigger-elicitation-request`. */
export const ELICITATION_HEADERS = {
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'trigger-elicitation-request',
};
/** What a user accepts for that tool's form. */
export const ELICITATION_ANSWER = { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } };

/** A modern call of server-everything's `trigger-elicitation-request` at `url` (`params` added: a retry's state and answers). */
export function elicitationCall(
  url: string,
  id: number,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...ELICITATION_HEADERS, ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'trigger-elicitation-request', arguments: {}, ...params, _meta: ELICITATION_META },
    }),
  });
}
