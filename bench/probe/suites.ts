/**
 * The probe bench's targets: for each legacy server (stdio, Streamable HTTP, HTTP+SSE) the
 * baseline operation (what a legacy client pays to connect anyway) and the fresh probes measured
 * against it, each a timed operation that checks its verdict or answer. Not the rounds
 * (bench/probe/runSuite.ts) nor the report (bench/probe.ts).
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_LEGACY_VERSION } from '../../lib/core/era.ts';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { probe, type ProbeResult, type ProbeTarget } from '../../lib/client.ts';
import { mediaType, readSse } from '../../lib/transport/sse.ts';
import type { StdioChildTransport } from '../../lib/transport/stdioChild.ts';
import { startEverythingHttp } from '../../spec/helpers/everything.ts';

const root = join(import.meta.dirname, '..', '..');
const CLIENT_INFO = { name: 'probe-bench', version: '1.0.0' };

/** A wrong answer or verdict: a bug, reported, never a sample. */
export class Wrong extends Error {}

const now = () => performance.now();

function initializeRequest(id: string): JsonRpcMessage {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: LATEST_LEGACY_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
  };
}

/** `undefined` when `answer` is an `initialize` result, else what is wrong with it. */
function initializeProblem(answer: unknown): string | undefined {
  const result = (answer as { result?: { protocolVersion?: unknown; serverInfo?: { name?: unknown } } } | undefined)?.result;
  if (!result) return `not an initialize result: ${JSON.stringify(answer)?.slice(0, 200)}`;
  if (typeof result.protocolVersion !== 'string' || typeof result.serverInfo?.name !== 'string')
    return `initialize result without protocolVersion or serverInfo: ${JSON.stringify(result).slice(0, 200)}`;
  return undefined;
}

export function expectVerdict(r: ProbeResult, source: ProbeResult['source'], http: 'streamable' | 'sse' | undefined): void {
  const v = r.verdict;
  if (v.era !== 'legacy' || r.source !== source || (http !== undefined && v.http !== http)) {
    throw new Wrong(`verdict ${JSON.stringify(v)} from ${r.source}; expected legacy${http ? ` (${http})` : ''} from ${source}`);
  }
}

/** Resolves once no process has `pid` (the SDK's stdio close does not wait for the exit). */
async function gone(pid: number | null | undefined): Promise<void> {
  if (!pid) return;
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends `message` on a probed stdio process and resolves with the answer of the same id. */
function ask(proc: StdioChildTransport, id: string, message: JsonRpcMessage): Promise<JsonRpcMessage> {
  return new Promise((resolve, reject) => {
    proc.onmessage = (m) => {
      if ('id' in m && m.id === id && !('method' in m)) resolve(m);
    };
    proc.onclose = () => reject(new Wrong('the probed process exited before answering initialize'));
    proc.send(message).catch(reject);
  });
}

/** An SSE event's data as JSON; `undefined` for an empty event (one that primes the stream for resumption) or one that is not JSON. */
function jsonOf(data: string): unknown {
  if (data.trim() === '') return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The first JSON-RPC answer with `id` in a POST's body (JSON or SSE). */
async function answerOf(res: Response, id: string): Promise<unknown> {
  if (mediaType(res) !== 'text/event-stream' || !res.body) return res.json();
  let found: unknown;
  await readSse(res.body, {
    onEvent: (e) => {
      const m = jsonOf(e.data) as { id?: unknown } | undefined;
      if (m?.id === id) found ??= m;
    },
    done: () => found !== undefined,
  });
  return found;
}

// ---------------------------------------------------------------------------------------------

/** One timed operation: resolves with the milliseconds of its timed part (clean-up comes after, untimed). */
export interface Op {
  readonly key: string;
  readonly label: string;
  run(): Promise<number>;
}

export interface Suite {
  readonly key: 'stdio' | 'streamable' | 'sse';
  readonly label: string;
  readonly server: string;
  readonly rounds: number;
  readonly baseline: Op;
  readonly candidates: readonly Op[];
  readonly target: ProbeTarget;
  readonly http: 'streamable' | 'sse' | undefined;
  close(): Promise<void>;
}

let seq = 0;
const nextId = () => `probe-bench-${++seq}`;

/** The v1 echo server as a child process: the SDK client's connect against a fresh probe, and a probe then connect. */
export function stdioSuite(echo: string, rounds: number): Suite {
  const target = { command: process.execPath, args: [echo], cwd: root, stderr: 'inherit' as const };
  return {
    key: 'stdio',
    label: 'stdio',
    server: 'bench/servers/echoServer.ts (v1 SDK McpServer), a child process per connection',
    rounds,
    target,
    http: undefined,
    baseline: {
      key: 'connect',
      label: 'legacy client connects (v1 SDK Client: spawn + initialize + initialized)',
      async run() {
        const transport = new StdioClientTransport({ command: target.command, args: target.args, cwd: root, stderr: 'inherit' });
        const client = new Client(CLIENT_INFO, { capabilities: {} });
        const t0 = now();
        await client.connect(transport);
        const ms = now() - t0;
        const name = client.getServerVersion()?.name;
        const pid = transport.pid;
        await client.close();
        await gone(pid);
        if (name !== 'bench-echo') throw new Wrong(`the SDK client connected to ${JSON.stringify(name)}`);
        return ms;
      },
    },
    candidates: [
      {
        key: 'probe',
        label: 'probe, fresh (spawn + server/discover → legacy, process kept)',
        async run() {
          const t0 = now();
          const r = await probe(target, { cache: false, keepProcess: true });
          const ms = now() - t0;
          await r.process?.close();
          expectVerdict(r, 'probe', undefined);
          if (!r.process) throw new Wrong('the probe did not hand the process over');
          if (r.roundTrips !== 1) throw new Wrong(`${r.roundTrips} round trips on stdio`);
          return ms;
        },
      },
      {
        key: 'probe+connect',
        label: 'probe, fresh, then initialize + initialized on the probed process',
        async run() {
          const t0 = now();
          const r = await probe(target, { cache: false, keepProcess: true });
          const proc = r.process;
          if (!proc) throw new Wrong('the probe did not hand the process over');
          try {
            const id = nextId();
            const answer = await ask(proc, id, initializeRequest(id));
            await proc.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
            const ms = now() - t0;
            expectVerdict(r, 'probe', undefined);
            const problem = initializeProblem(answer);
            if (problem) throw new Wrong(problem);
            return ms;
          } finally {
            await proc.close();
          }
        },
      },
    ],
    close: async () => {},
  };
}

/** A fresh probe of an HTTP endpoint, which must find the legacy transport `http`. */
function freshHttpProbe(url: URL, http: 'streamable' | 'sse', label: string): Op {
  return {
    key: 'probe',
    label,
    async run() {
      const t0 = now();
      const r = await probe({ url }, { cache: false });
      const ms = now() - t0;
      expectVerdict(r, 'probe', http);
      return ms;
    },
  };
}

/** server-everything's sessionful Streamable HTTP server: the initialize POST against a fresh probe. */
export async function streamableSuite(rounds: number): Promise<Suite> {
  const server = await startEverythingHttp('streamableHttp');
  const url = server.url;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  return {
    key: 'streamable',
    label: 'Streamable HTTP',
    server: `server-everything streamableHttp (sessionful, ${url.pathname}), its own process`,
    rounds,
    target: { url },
    http: 'streamable',
    baseline: {
      key: 'connect',
      label: 'legacy client connects (the initialize POST and its answer)',
      async run() {
        const id = nextId();
        const t0 = now();
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initializeRequest(id)) });
        const answer = await answerOf(res, id);
        const ms = now() - t0;
        const session = res.headers.get('mcp-session-id');
        if (session)
          await fetch(url, {
            method: 'DELETE',
            headers: { 'mcp-session-id': session, 'mcp-protocol-version': LATEST_LEGACY_VERSION },
          }).then((r) => r.body?.cancel());
        const problem = initializeProblem(answer) ?? (session ? undefined : 'no Mcp-Session-Id on the initialize answer');
        if (problem) throw new Wrong(problem);
        return ms;
      },
    },
    candidates: [freshHttpProbe(url, 'streamable', 'probe, fresh (the server/discover POST, refused with a legacy JSON-RPC error)')],
    close: () => server.close(),
  };
}

/** server-everything's 2024-11-05 HTTP+SSE server: GET /sse and the initialize POST against a fresh probe. */
export async function sseSuite(rounds: number): Promise<Suite> {
  const server = await startEverythingHttp('sse');
  const url = server.url;
  return {
    key: 'sse',
    label: 'HTTP+SSE',
    server: `server-everything sse (2024-11-05 HTTP+SSE, ${url.pathname}), its own process`,
    rounds,
    target: { url },
    http: 'sse',
    baseline: {
      key: 'connect',
      label: 'legacy client connects (GET /sse, endpoint event, initialize POST, answer on the stream)',
      async run() {
        const id = nextId();
        const stream = new AbortController();
        let onEndpoint!: (path: string) => void;
        let onAnswer!: (message: unknown) => void;
        const endpoint = new Promise<string>((r) => (onEndpoint = r));
        const answered = new Promise<unknown>((r) => (onAnswer = r));
        const t0 = now();
        const res = await fetch(url, { headers: { accept: 'text/event-stream' }, signal: stream.signal });
        if (!res.ok || !res.body) throw new Wrong(`GET ${url.pathname} answered HTTP ${res.status}`);
        const reading = readSse(res.body, {
          onEvent: (e) => {
            if (e.event === 'endpoint') return onEndpoint(e.data);
            const message = jsonOf(e.data) as { id?: unknown } | undefined;
            if (message?.id === id) onAnswer(message);
          },
        }).catch(() => {});
        const post = await fetch(new URL(await endpoint, url), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(initializeRequest(id)),
        });
        await post.body?.cancel();
        const answer = await answered;
        const ms = now() - t0;
        stream.abort();
        await reading;
        const problem = initializeProblem(answer);
        if (problem) throw new Wrong(problem);
        return ms;
      },
    },
    candidates: [
      freshHttpProbe(url, 'sse', 'probe, fresh (server/discover → Streamable HTTP initialize refused → GET /sse + initialize POST)'),
    ],
    close: () => server.close(),
  };
}
