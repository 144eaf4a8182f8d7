/**
 * The load generator: closed-loop workers (one call in flight per worker, so `concurrency` calls
 * in flight) over a driver that knows one way of calling `echo` and checking the answer. Drivers:
 * Streamable HTTP POSTs (`node:http`, a keep-alive Agent with `maxSockets = concurrency`),
 * newline-delimited JSON-RPC to a child's stdin/stdout, and the v1 SDK `Client`.
 *
 * Every answer is checked against its request (id, text, and `resultType` on modern answers);
 * a wrong answer counts as an error and is never a latency sample.
 */
import { Agent, request as httpRequest } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** One way of making a call: resolves `undefined` for a correct answer, else what was wrong. */
export interface Driver {
  call(id: number, text: string): Promise<string | undefined>;
  close(): Promise<void>;
}

export const MODERN_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'wrap-bench', version: '1.0.0' };
/** What a modern client typically declares (no log level, no progress token: the plain JSON answer path). */
const CLIENT_CAPABILITIES = { elicitation: { form: {} }, sampling: {} };
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';

/**
 * The modern `tools/call` request text for `id` and `text` (plain ASCII, so it needs no escaping):
 * the full `_meta` envelope. Built from a template so the generator spends little CPU per call.
 */
export function modernCallText(id: number, text: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"},"_meta":${META_TEXT}}}`;
}
const META_TEXT = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
  'io.modelcontextprotocol/clientCapabilities': CLIENT_CAPABILITIES,
  traceparent: TRACEPARENT,
});

/** The legacy `tools/call` request text (for a client inside an initialized legacy session). */
export function legacyCallText(id: number, text: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"}}}`;
}

/** Checks one decoded JSON-RPC response; `modern` also wants `resultType: "complete"`. */
export function checkResponse(message: unknown, id: number, text: string, modern: boolean): string | undefined {
  if (typeof message !== 'object' || message === null) return 'not a JSON object';
  const m = message as {
    id?: unknown;
    result?: { content?: Array<{ type?: unknown; text?: unknown }>; resultType?: unknown; isError?: unknown };
    error?: { code?: unknown; message?: unknown };
  };
  if (m.id !== id) return `id ${JSON.stringify(m.id)} for request ${id}`;
  if (m.error) return `error ${String(m.error.code)}: ${String(m.error.message)}`;
  const r = m.result;
  if (!r) return 'no result';
  if (r.isError === true) return 'isError result';
  const block = r.content?.[0];
  if (r.content?.length !== 1 || block?.type !== 'text' || block.text !== text)
    return `wrong content ${JSON.stringify(r.content)?.slice(0, 120)}`;
  if (modern && r.resultType !== 'complete') return `resultType ${JSON.stringify(r.resultType)}`;
  return undefined;
}

/** The JSON-RPC message in a response body: JSON, or the last `data:` event of an SSE stream. */
function decodeBody(contentType: string, body: string): unknown {
  if (!contentType.includes('text/event-stream')) return JSON.parse(body);
  let last: unknown;
  for (const event of body.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data) last = JSON.parse(data);
  }
  return last;
}

export interface HttpTarget {
  readonly url: URL;
  /** Modern request with routing headers (wrap, mcp-proxy, pass-through), checking `resultType` where `modernAnswer`. */
  readonly modernAnswer: boolean;
}

/** Modern `tools/call` POSTs over keep-alive connections, `maxSockets = concurrency`. */
export function httpDriver(target: HttpTarget, concurrency: number): Driver {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, scheduling: 'fifo' });
  const { hostname, port, pathname } = target.url;
  const baseHeaders = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': 'echo',
  };
  return {
    call(id, text) {
      const body = modernCallText(id, text);
      return new Promise((resolve) => {
        const req = httpRequest(
          { agent, hostname, port, path: pathname, method: 'POST', headers: { ...baseHeaders, 'content-length': Buffer.byteLength(body) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text2 = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
              if (res.statusCode !== 200) return resolve(`HTTP ${res.statusCode}: ${text2.slice(0, 200)}`);
              try {
                resolve(checkResponse(decodeBody(res.headers['content-type'] ?? '', text2), id, text, target.modernAnswer));
              } catch (e) {
                resolve(`undecodable body (${e instanceof Error ? e.message : String(e)}): ${text2.slice(0, 200)}`);
              }
            });
            res.on('error', (e) => resolve(`response failed: ${e.message}`));
          },
        );
        req.on('error', (e) => resolve(`request failed: ${e.message}`));
        req.end(body);
      });
    },
    async close() {
      agent.destroy();
    },
  };
}

/**
 * Newline-delimited JSON-RPC over a child's stdin/stdout (the stdio front, or a legacy server
 * directly). `lineFor` builds the request line; answers are matched by id.
 */
export class LineDriver implements Driver {
  readonly #child: ChildProcess;
  readonly #pending = new Map<unknown, (message: unknown) => void>();
  readonly #modern: boolean;
  #partial = '';

  constructor(child: ChildProcess, modern: boolean) {
    this.#child = child;
    this.#modern = modern;
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.#data(chunk));
  }

  #data(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf('\n');
    while (nl !== -1) {
      const line = start === 0 && this.#partial ? this.#partial + chunk.slice(0, nl) : chunk.slice(start, nl);
      if (start === 0) this.#partial = '';
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
      if (line.trim().length === 0) continue;
      let message: { id?: unknown };
      try {
        message = JSON.parse(line) as { id?: unknown };
      } catch {
        continue;
      }
      const waiter = this.#pending.get(message.id);
      if (waiter) {
        this.#pending.delete(message.id);
        waiter(message);
      }
    }
    this.#partial += chunk.slice(start);
  }

  /** Sends one raw message and resolves with the response of the same id. */
  request(id: number | string, line: string): Promise<unknown> {
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#child.stdin!.write(`${line}\n`);
    });
  }

  /** Sends a notification line. */
  notify(line: string): void {
    this.#child.stdin!.write(`${line}\n`);
  }

  async call(id: number, text: string): Promise<string | undefined> {
    const answer = await this.request(id, this.#modern ? modernCallText(id, text) : legacyCallText(id, text));
    return checkResponse(answer, id, text, this.#modern);
  }

  /** Fails every call still waiting (the process went away). */
  failAll(reason: string): void {
    for (const waiter of this.#pending.values()) waiter({ error: { code: 0, message: reason } });
    this.#pending.clear();
  }

  async close(): Promise<void> {
    this.#child.stdin!.end();
  }
}

/** Initializes a legacy session on a line driver (a raw legacy client talking to the server itself). */
export async function initializeLegacy(driver: LineDriver): Promise<void> {
  const answer = (await driver.request(
    'init',
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO },
    }),
  )) as { result?: unknown; error?: unknown };
  if (!answer.result) throw new Error(`initialize failed: ${JSON.stringify(answer)}`);
  driver.notify(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
}

/** The v1 SDK `Client` over `StdioClientTransport`: a legacy client calling the server directly. */
export async function sdkDriver(command: string, args: readonly string[], cwd: string): Promise<Driver & { readonly pid: number | null }> {
  const transport = new StdioClientTransport({ command, args: [...args], cwd, stderr: 'inherit' });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  await client.connect(transport);
  return {
    get pid() {
      return transport.pid;
    },
    async call(_id, text) {
      try {
        const result = await client.callTool({ name: 'echo', arguments: { text } });
        const content = result.content as Array<{ type?: unknown; text?: unknown }> | undefined;
        if (result.isError === true) return 'isError result';
        if (content?.length !== 1 || content[0]?.type !== 'text' || content[0].text !== text)
          return `wrong content ${JSON.stringify(content)?.slice(0, 120)}`;
        return undefined;
      } catch (e) {
        return `call failed: ${e instanceof Error ? e.message : String(e)}`;
      }
    },
    async close() {
      await client.close();
    },
  };
}

/** What one timed run of the workers produced. */
export interface PhaseResult {
  /** Latency of each correct call, in nanoseconds, in completion order. */
  readonly latenciesNs: number[];
  /** Correct calls answered before the deadline (the calls still in flight then finish after it). */
  readonly completedInWindow: number;
  /** The deadline's distance from the start, in nanoseconds: the window `completedInWindow` counts in. */
  readonly windowNs: number;
  readonly errors: number;
  /** The first few wrong answers, for the report. */
  readonly errorSamples: string[];
  /** Wall time from the first send to the last answer, in nanoseconds. */
  readonly elapsedNs: number;
}

let nextId = 1;
/** How long after the deadline calls in flight may take before the phase gives up on them. */
const STUCK_MS = 30_000;

/**
 * Runs `concurrency` closed-loop workers for `durationMs`: each sends a call, waits for its answer,
 * records the latency, and sends the next, until the deadline; then waits for the calls in flight.
 */
export async function runPhase(driver: Driver, concurrency: number, durationMs: number): Promise<PhaseResult> {
  const latenciesNs: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;
  let completedInWindow = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(durationMs * 1e6));
  const worker = async () => {
    while (process.hrtime.bigint() < deadline) {
      const id = nextId++;
      const text = `call-${id}-of-wrap-bench`;
      const t0 = process.hrtime.bigint();
      let wrong: string | undefined;
      try {
        wrong = await driver.call(id, text);
      } catch (e) {
        wrong = `threw: ${e instanceof Error ? e.message : String(e)}`;
      }
      const t1 = process.hrtime.bigint();
      if (wrong === undefined) {
        latenciesNs.push(Number(t1 - t0));
        if (t1 <= deadline) completedInWindow++;
      } else {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(wrong);
      }
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<'stuck'>((resolve) => (timer = setTimeout(() => resolve('stuck'), durationMs + STUCK_MS)));
  const outcome = await Promise.race([Promise.all(Array.from({ length: concurrency }, worker)), stuck]);
  clearTimeout(timer);
  if (outcome === 'stuck') {
    errors += concurrency;
    errorSamples.push(`calls still unanswered ${STUCK_MS} ms after the deadline`);
  }
  return {
    latenciesNs,
    completedInWindow,
    windowNs: durationMs * 1e6,
    errors,
    errorSamples,
    elapsedNs: Number(process.hrtime.bigint() - started),
  };
}
