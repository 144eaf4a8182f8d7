/**
 * The ways the MRTR bench reaches a legacy push server: a modern request text into the wrap
 * (`serveModern`, `wrap.fetch`, Node's HTTP server on loopback, the stdio front, `serve --stdio` as a
 * process of its own), and a bare legacy client to the server alone (no SDK client, no wrap), on an
 * in-memory pipe or on the stdio of the server's own process. Also the push server the memory
 * scenarios park calls on.
 */
import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
import { LineFramer } from '../../lib/transport/lineFramer.ts';
import { PARK_TIMEOUT_MS, responseOf, toolCallHeaders, VERSION, type Json } from './requests.ts';
import type { Lib, Wrap } from './scenario.ts';

/** One way of sending a modern request text to a wrap and getting its answer. */
export type Caller = (text: string, name: string) => Promise<JsonRpcResponse | undefined>;

const noop = (): void => {};

/** Straight into `wrap.serveModern`: no transport at all. */
export function directCaller(wrap: Wrap): Caller {
  return async (text) => {
    const ctx: Parameters<Wrap['serveModern']>[1] = { principal: 'bench', signal: new AbortController().signal, notify: noop };
    return (await wrap.serveModern(JSON.parse(text) as JsonRpcRequest, ctx))?.message;
  };
}

/** Through `wrap.fetch`: Streamable HTTP, in process. */
export function httpCaller(wrap: Wrap): Caller {
  return async (text, name) => {
    const request = new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        host: '127.0.0.1',
        'content-length': String(Buffer.byteLength(text)),
        'MCP-Protocol-Version': VERSION,
        'Mcp-Method': 'tools/call',
        'Mcp-Name': name,
      },
      body: text,
    });
    const response = await wrap.fetch(request);
    return (await response.json()) as JsonRpcResponse;
  };
}

/** Over Node's HTTP server on loopback (`serveNodeHttp`, as `serve` runs the wrap), one keep-alive socket. */
export async function nodeHttpCaller(lib: Lib, wrap: Wrap): Promise<{ call: Caller; close(): Promise<void> }> {
  const running = await lib.serveNodeHttp(wrap, { port: 0 });
  const { hostname, port } = new URL(running.origin);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call: Caller = (text, name) =>
    new Promise((resolve, reject) => {
      const headers = toolCallHeaders(text, name);
      const req = httpRequest({ agent, hostname, port, path: '/mcp', method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          try {
            resolve(responseOf(res.headers['content-type'], body));
          } catch {
            resolve(undefined);
          }
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(text);
    });
  return {
    call,
    async close() {
      agent.destroy();
      await running.close();
    },
  };
}

/** Each line `from` carries, decoded, to `onMessage`. */
function readLines(from: Readable, onMessage: (message: Json) => void): void {
  const framer = new LineFramer((line) => onMessage(JSON.parse(line) as Json));
  from.on('data', (chunk: Buffer) => framer.push(chunk));
}

/** A caller that writes each request as a line with `write`, and resolves it with the answer of its id, as `receive` is handed the answers. */
function lineCaller(write: (line: string) => void): { call: Caller; receive(message: Json): void } {
  const waiting = new Map<unknown, (message: JsonRpcResponse) => void>();
  return {
    call: (text) =>
      new Promise((resolve) => {
        waiting.set((JSON.parse(text) as { id: unknown }).id, resolve);
        write(text);
      }),
    receive(message) {
      const resolve = waiting.get(message['id']);
      if (resolve) {
        waiting.delete(message['id']);
        resolve(message as unknown as JsonRpcResponse);
      }
    },
  };
}

/**
 * Over the stdio front (`serveStdio`, as `serve --stdio` runs the wrap), one line a message: the
 * caller writes the request line and reads lines until the answer to its id.
 */
export function stdioCaller(lib: Lib, wrap: Wrap): { call: Caller; close(): Promise<void> } {
  if (!lib.serveStdio) throw new Error('this lib/ has no stdio front');
  const input = new PassThrough();
  const output = new PassThrough();
  const { call, receive } = lineCaller((line) => input.write(`${line}\n`));
  readLines(output, receive);
  const front = lib.serveStdio(wrap, { input, output, closeOnEnd: false, principal: 'bench' });
  return {
    call,
    async close() {
      await front.close();
    },
  };
}

/** A process spoken to in lines of JSON on its stdin and stdout: each line it writes, decoded, goes to `onMessage`. */
function lineProcess(
  command: string,
  args: readonly string[],
  onMessage: (message: Json) => void,
): { write(text: string): void; close(): Promise<void> } {
  const proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  readLines(proc.stdout, onMessage);
  proc.stdin.on('error', noop);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    write: (text) => void proc.stdin.write(`${text}\n`),
    async close() {
      proc.stdin.end();
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The push server as its own process (the JavaScript of fixtures/servers/pushServerStdio.ts), with its schema built in the call or once. */
export interface PushServerProcess {
  readonly script: string;
  readonly schemaBuiltOnce: boolean;
}
const serverArgs = (server: PushServerProcess): string[] => [server.script, ...(server.schemaBuiltOnce ? ['--schema-built-once'] : [])];

/**
 * Over `serve --stdio` as users run it: the CLI as its own process (`node CLI serve --stdio --quiet
 * -- node SERVER`), the push server its child, the caller writing request lines to its stdin and
 * reading the answers from its stdout.
 */
export function stdioProcessCaller(cli: string, server: PushServerProcess): { call: Caller; close(): Promise<void> } {
  let receive: (message: Json) => void = noop;
  const proc = lineProcess(process.execPath, [cli, 'serve', '--stdio', '--quiet', '--', process.execPath, ...serverArgs(server)], (m) =>
    receive(m),
  );
  const caller = lineCaller(proc.write);
  receive = caller.receive;
  return { call: caller.call, close: () => proc.close() };
}

/**
 * pushServer's `ask_name`, except that its push names the call it belongs to (`relatedRequestId`,
 * as `extra.sendRequest` would) and waits up to 10 minutes for the answer (the SDK's default of
 * 60 s is shorter than parking N calls takes).
 */
export function createRelatedPushServer(): McpServer {
  const server = new McpServer({ name: 'push-server', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('ask_name', { description: 'Asks the user for a name, then greets them' }, async (extra) => {
    const answer = await server.server.elicitInput(
      {
        mode: 'form',
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      { relatedRequestId: extra.requestId, timeout: PARK_TIMEOUT_MS },
    );
    const name = answer.action === 'accept' ? String(answer.content?.['name']) : 'stranger';
    return { content: [{ type: 'text', text: `Hello, ${name}!` }] };
  });
  return server;
}

/** A bare legacy client on an in-memory pipe to one server: no SDK, no wrap. */
export interface BareClient {
  /** Sends a request and resolves with its answer. */
  request(method: string, params: Json): Promise<Json>;
  /** Answers a request the server pushed. */
  answer(pushId: number, result: Json): void;
  /** Called with each pushed `elicitation/create`. */
  onPush: ((push: Json) => void) | undefined;
}

/** A bare client over `send`, reading what `receive` is handed: requests by id, pushes to `onPush`. */
function bare(send: (message: Json) => void): { client: BareClient; receive(message: Json): void } {
  const waiting = new Map<number, (message: Json) => void>();
  let id = 0;
  const client: BareClient = {
    request: (method, params) =>
      new Promise<Json>((resolve) => {
        const n = ++id;
        waiting.set(n, resolve);
        send({ jsonrpc: '2.0', id: n, method, params });
      }),
    answer: (pushId, result) => send({ jsonrpc: '2.0', id: pushId, result }),
    onPush: undefined,
  };
  const receive = (m: Json): void => {
    if (m['method'] === 'elicitation/create') client.onPush?.(m);
    else if (typeof m['id'] === 'number') {
      waiting.get(m['id'])?.(m);
      waiting.delete(m['id']);
    }
  };
  return { client, receive };
}

/** Opens the legacy session (elicitation declared). */
async function initialize(client: BareClient, send: (message: Json) => void): Promise<void> {
  await client.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: { elicitation: { form: {} } },
    clientInfo: { name: 'mrtr-bench', version: '1.0.0' },
  });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

/** Connects `server` to a bare client and initializes the session (elicitation declared). */
export async function bareClient(lib: Lib, server: McpServer): Promise<BareClient> {
  const [transport, serverSide] = lib.createMemoryPair();
  await server.connect(serverSide as never);
  const send = (message: Json): void => void transport.send(message as never);
  const { client, receive } = bare(send);
  transport.onmessage = (message) => receive(message as Json);
  await transport.start();
  await initialize(client, send);
  return client;
}

/** A bare client on the stdio of the push server as its own process (no SDK, no wrap), the session initialized. */
export async function bareProcessClient(server: PushServerProcess): Promise<BareClient & { close(): Promise<void> }> {
  let receive: (message: Json) => void = noop;
  const proc = lineProcess(process.execPath, serverArgs(server), (m) => receive(m));
  const send = (message: Json): void => proc.write(JSON.stringify(message));
  const made = bare(send);
  receive = made.receive;
  await initialize(made.client, send);
  return Object.assign(made.client, { close: () => proc.close() });
}
