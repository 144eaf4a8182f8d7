/**
 * Helpers for the interop specs against the real `@modelcontextprotocol/server-everything`: where
 * it lives, a stdio backend for it with a passive tap on the upstream pipe, its own Streamable
 * HTTP server on 127.0.0.1, the `mcp-dual-era serve --stdio` command line, finding (and reaping)
 * the processes a spec started, and small waiting and log-level utilities. No fakes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as assert from 'uvu/assert';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { stdioBackend, type Backend } from '../../lib/session/backend.ts';
import type { Transport } from '../../lib/transport/transport.ts';

const require = createRequire(import.meta.url);

/** The server-everything entry point (`node EVERYTHING stdio | streamableHttp`). */
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
/** The checkout root (where `lib/cli/main.ts` is). */
export const ROOT = resolve(import.meta.dirname, '../..');
/** The environment variable that marks the processes a spec started. */
export const MARKER = 'MCP_DUAL_ERA_SPEC_MARKER';
/** A preload that binds third-party servers to loopback and prints the port they listen on. */
export const LOOPBACK_PRELOAD = pathToFileURL(resolve(import.meta.dirname, 'loopbackListen.mjs')).href;

/** A message seen on an upstream pipe: `up` was sent to the server, `down` came from it. */
export interface Tapped {
  readonly direction: 'up' | 'down';
  readonly message: JsonRpcMessage;
}

/** A transport that hands every message, both ways, to `onMessage` and otherwise changes nothing. */
class TappedTransport implements Transport {
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  readonly #inner: Transport;
  readonly #onMessage: (seen: Tapped) => void;

  constructor(inner: Transport, onMessage: (seen: Tapped) => void) {
    this.#inner = inner;
    this.#onMessage = onMessage;
    inner.onmessage = (message, extra) => {
      onMessage({ direction: 'down', message });
      this.onmessage?.(message, extra);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => this.onclose?.();
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JsonRpcMessage, options?: unknown): Promise<void> {
    this.#onMessage({ direction: 'up', message });
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** The params of every request or notification named `method` seen going `direction`. */
export function tappedParams(tapped: readonly Tapped[], direction: Tapped['direction'], method: string): Array<Record<string, any>> {
  const out: Array<Record<string, any>> = [];
  for (const t of tapped) {
    if (t.direction === direction && 'method' in t.message && t.message.method === method)
      out.push((t.message.params ?? {}) as Record<string, any>);
  }
  return out;
}

/**
 * server-everything over stdio, one process per upstream session, each with `marker` in its
 * environment (see `markedProcesses`); `onMessage` sees its pipes.
 */
export function everythingBackend(marker: string, onMessage?: (seen: Tapped) => void): Backend {
  const backend = stdioBackend({ command: process.execPath, args: [EVERYTHING, 'stdio'], env: { [MARKER]: marker }, stderr: 'ignore' });
  if (!onMessage) return backend;
  return { ...backend, connect: async () => new TappedTransport(await backend.connect(), onMessage) };
}

/**
 * The port a child started with the loopback preload (`LOOPBACK_PRELOAD`) listens on, read from
 * its stderr; rejects when it exits first.
 */
export function listeningPort(child: ChildProcess, name: string): Promise<number> {
  return new Promise<number>((resolvePort, reject) => {
    let text = '';
    let found = false;
    child.stderr!.setEncoding('utf8');
    // Read to the end (the server logs every message there), keeping only what comes before the port.
    child.stderr!.on('data', (chunk: string) => {
      if (found) return;
      text += chunk;
      const match = /LISTENING (\d+)/.exec(text);
      if (match) {
        found = true;
        resolvePort(Number(match[1]));
      }
    });
    child.once('exit', () => reject(new Error(`${name} exited before listening: ${text}`)));
  });
}

/**
 * server-everything's own legacy HTTP server on 127.0.0.1 and a free port: sessionful Streamable
 * HTTP (`/mcp`, the default) or the 2024-11-05 HTTP+SSE transport (`/sse`).
 */
export async function startEverythingHttp(
  transport: 'streamableHttp' | 'sse' = 'streamableHttp',
): Promise<{ url: URL; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', LOOPBACK_PRELOAD, EVERYTHING, transport], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await listeningPort(child, 'server-everything');
  return {
    url: new URL(`http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}`),
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The command line of `mcp-dual-era serve --stdio --quiet -- node EVERYTHING stdio`, run by this
 * Node with tsx, with `marker` in the environment of the wrap and (inherited) of its upstream.
 */
export function serveStdioCommand(
  marker: string,
  baseEnv: Record<string, string>,
): { command: string; args: string[]; env: Record<string, string>; cwd: string } {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', resolve(ROOT, 'lib/cli/main.ts'), 'serve', '--stdio', '--quiet', '--', process.execPath, EVERYTHING, 'stdio'],
    env: { ...baseEnv, [MARKER]: marker },
    cwd: ROOT,
  };
}

/** Live processes whose environment carries `MARKER=marker` (Linux /proc). */
export function markedProcesses(marker: string): Array<{ pid: number; command: string }> {
  const needle = `${MARKER}=${marker}`;
  const found: Array<{ pid: number; command: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (!env.includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue; // a zombie is already dead
      found.push({ pid: Number(name), command: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Waits until no marked process is left (true), or `timeoutMs` passes (false). */
export async function markedProcessesGone(marker: string, timeoutMs: number): Promise<boolean> {
  return waitFor(() => markedProcesses(marker).length === 0, timeoutMs);
}

/** Kills (SIGKILL) every process still marked with `marker`; returns what was left. */
export function reapMarked(marker: string): Array<{ pid: number; command: string }> {
  const left = markedProcesses(marker);
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return left;
}

/** Polls `predicate` every 20 ms until it holds (true) or `timeoutMs` passes (false). */
export async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (predicate()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Log levels, least severe first. */
export const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type Level = (typeof LEVELS)[number];

/** Whether `level` is at or above `threshold`. */
export function atOrAbove(level: string, threshold: Level): boolean {
  return LEVELS.indexOf(level as Level) >= LEVELS.indexOf(threshold);
}

/** The text of the content blocks of a tool result, joined by newlines. */
export function textOf(result: unknown): string {
  const content = (result as { content?: unknown }).content;
  if (!Array.isArray(content)) return '';
  return (content as Array<{ type?: string; text?: string }>)
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('\n');
}

/**
 * Progress as a v1 SDK client receives it. The v1 client (1.32.2) runs progress handlers a
 * microtask late and forgets the token when the response arrives, so a progress notification read
 * together with the response is reported through `onerror` ("unknown token") instead of the
 * handler, even straight from server-everything. `received()` counts both: everything that arrived.
 */
export function legacyProgress(client: { onerror?: ((error: Error) => void) | undefined }): {
  onprogress: (p: { progress: number }) => void;
  handled: number[];
  received(): number[];
  stop(): void;
} {
  const handled: number[] = [];
  const late: number[] = [];
  const previous = client.onerror;
  client.onerror = (error) => {
    const match = /unknown token: (\{.*\})$/s.exec(error.message);
    if (match) late.push((JSON.parse(match[1]!) as { params: { progress: number } }).params.progress);
    else previous?.(error);
  };
  return {
    onprogress: (p) => void handled.push(p.progress),
    handled,
    received: () => [...handled, ...late],
    stop: () => {
      client.onerror = previous;
    },
  };
}

/**
 * Calls server-everything's long-running tool through a legacy v1 client and checks its progress:
 * every notification reached the client (the v1 client may reject the last one as arriving after
 * the answer; that is counted too), and all but the last reached the handler.
 */
export async function assertLegacyProgress(client: LegacyProgressClient): Promise<void> {
  const progress = legacyProgress(client);
  try {
    const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
      onprogress: progress.onprogress,
    });
    assert.is(textOf(result), 'Long running operation completed. Duration: 0.3 seconds, Steps: 3.');
    await sleep(20);
    assert.ok(progress.handled.length >= 2, 'the progress before the last reached the handler');
    assert.equal(progress.received(), [1, 2, 3]);
  } finally {
    progress.stop();
  }
}

/** What assertLegacyProgress needs of a v1 client. */
export interface LegacyProgressClient {
  onerror?: ((error: Error) => void) | undefined;
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    schema: undefined,
    options: { onprogress: (p: { progress: number }) => void },
  ): Promise<unknown>;
}

/**
 * Subscribes a legacy v1 client to server-everything's document, turns on its update timer, and
 * checks that `notifications/resources/updated` for that URI reached the client (`updates` is
 * filled by the client's notification handler); always turns the timer off and unsubscribes.
 */
export async function assertLegacyResourceUpdate(client: LegacySubscribeClient, updates: string[], uri: string): Promise<void> {
  updates.length = 0;
  await client.subscribeResource({ uri });
  try {
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    assert.ok(await waitFor(() => updates.length > 0, 2000), 'an update arrived');
    assert.is(updates[0], uri);
  } finally {
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await client.unsubscribeResource({ uri });
  }
}

/** What assertLegacyResourceUpdate needs of a v1 client. */
export interface LegacySubscribeClient {
  subscribeResource(params: { uri: string }): Promise<unknown>;
  unsubscribeResource(params: { uri: string }): Promise<unknown>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}
