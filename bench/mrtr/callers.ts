/**
 * The ways the MRTR bench reaches a legacy push server: a modern request text into the wrap
 * (`serveModern`, `wrap.fetch`, Node's HTTP server on loopback, the stdio front), and a bare legacy client on an
 * in-memory pipe to the server alone (no SDK client, no wrap). Also the push server the memory
 * scenarios park calls on.
 */
import { Agent, request as httpRequest } from 'node:http';
import { PassThrough } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../lib/core/jsonrpc.ts';
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

/**
 * Over the stdio front (`serveStdio`, as `serve --stdio` runs the wrap), one line a message: the
 * caller writes the request line and reads lines until the answer to its id.
 */
export function stdioCaller(lib: Lib, wrap: Wrap): { call: Caller; close(): Promise<void> } {
  if (!lib.serveStdio) throw new Error('this lib/ has no stdio front');
  const input = new PassThrough();
  const output = new PassThrough();
  const waiting = new Map<unknown, (message: JsonRpcResponse) => void>();
  let partial = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    partial += chunk;
    let end: number;
    while ((end = partial.indexOf('\n')) !== -1) {
      const line = partial.slice(0, end);
      partial = partial.slice(end + 1);
      const message = JSON.parse(line) as JsonRpcResponse;
      const id = (message as { id?: unknown }).id;
      const resolve = waiting.get(id);
      if (resolve) {
        waiting.delete(id);
        resolve(message);
      }
    }
  });
  const front = lib.serveStdio(wrap, { input, output, closeOnEnd: false, principal: 'bench' });
  const call: Caller = (text) =>
    new Promise((resolve) => {
      waiting.set((JSON.parse(text) as { id: unknown }).id, resolve);
      input.write(`${text}\n`);
    });
  return {
    call,
    async close() {
      await front.close();
    },
  };
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
      { mode: 'form', message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
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

/** Connects `server` to a bare client and initializes the session (elicitation declared). */
export async function bareClient(lib: Lib, server: McpServer): Promise<BareClient> {
  const [client, serverSide] = lib.createMemoryPair();
  await server.connect(serverSide as never);
  const waiting = new Map<number, (message: Json) => void>();
  let id = 0;
  const bare: BareClient = {
    request: (method, params) =>
      new Promise<Json>((resolve) => {
        const n = ++id;
        waiting.set(n, resolve);
        void client.send({ jsonrpc: '2.0', id: n, method, params });
      }),
    answer: (pushId, result) => void client.send({ jsonrpc: '2.0', id: pushId, result }),
    onPush: undefined,
  };
  client.onmessage = (message) => {
    const m = message as Json;
    if (m['method'] === 'elicitation/create') bare.onPush?.(m);
    else if (typeof m['id'] === 'number') {
      waiting.get(m['id'])?.(m);
      waiting.delete(m['id']);
    }
  };
  await client.start();
  await bare.request('initialize', { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'mrtr-bench', version: '1.0.0' } });
  await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return bare;
}
