/**
 * Specs for the legacy HTTP client transport, driven with raw JSON-RPC against real v1 SDK servers
 * (Streamable HTTP and 2024-11-05 HTTP+SSE) on 127.0.0.1, plus small node:http servers that fail on
 * purpose for the error paths.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdapterError } from '../../lib/core/errors.ts';
import type { JsonRpcMessage, RequestId } from '../../lib/core/jsonrpc.ts';
import { LegacyHttpClientTransport, type LegacyHttpClientOptions } from '../../lib/transport/legacyHttpClient.ts';
import { CLIENT } from '../helpers/messages.ts';
import { answerHuge, MiB, pour } from '../helpers/hugeAnswers.ts';

// ── servers ─────────────────────────────────────────────────────────────────

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

interface Http {
  readonly url: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: unknown) => void | Promise<void>;

/** An HTTP server on 127.0.0.1 and a random port that records every request. */
async function listen(path: string, handler: Handler): Promise<Http> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body: unknown = text ? JSON.parse(text) : undefined;
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    await handler(req, res, body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A v1 McpServer whose `greet` tool logs, reports progress and asks the client for a name. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'legacy-http', version: '1.0.0' }, { capabilities: { logging: {}, tools: { listChanged: true } } });
  server.registerTool('greet', { description: 'asks for a name' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'greeting starts' } });
    if (progressToken !== undefined)
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 2 } });
    const answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          message: 'Your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: 'text', text: `Hello, ${String(answer.content?.['name'])}` }] };
  });
  server.registerTool('nap', { description: 'closes its stream, then answers' }, async (extra) => {
    extra.closeSSEStream?.();
    await new Promise((r) => setTimeout(r, 60));
    return { content: [{ type: 'text', text: 'rested' }] };
  });
  return server;
}

interface StreamableHarness extends Http {
  readonly sessions: Map<string, McpServer>;
  /** The server forgets a session (its next request gets 404). */
  forget(sessionId: string): void;
}

/** A sessionful Streamable HTTP server built from the SDK's own transport, routed by session id. */
async function streamableServer(options: { resumable?: boolean; getDelayMs?: number } = {}): Promise<StreamableHarness> {
  const sessions = new Map<string, { server: McpServer; transport: StreamableHTTPServerTransport }>();
  const all: StreamableHTTPServerTransport[] = [];
  const http = await listen('/mcp', async (req, res, body) => {
    // A server under load: the standalone stream opens late.
    if (req.method === 'GET' && options.getDelayMs) await sleep(options.getDelayMs);
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const session = sessions.get(sid);
      if (!session) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && (body as { method?: string } | undefined)?.method === 'initialize') {
      const server = mcpServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, { server, transport }),
        ...(options.resumable ? { eventStore: new InMemoryEventStore(), retryInterval: 20 } : {}),
      });
      transport.onclose = () => void (transport.sessionId && sessions.delete(transport.sessionId));
      all.push(transport);
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad Request: no session');
  });
  const byServer = new Map<string, McpServer>();
  return {
    ...http,
    get sessions() {
      byServer.clear();
      for (const [id, s] of sessions) byServer.set(id, s.server);
      return byServer;
    },
    forget: (id) => void sessions.delete(id),
    close: async () => {
      for (const t of all) await t.close().catch(() => {});
      await http.close();
    },
  };
}

/** A 2024-11-05 HTTP+SSE server from the SDK's `SSEServerTransport`: GET /mcp is the stream, POST /mcp is refused. */
async function sseServer(): Promise<Http & { readonly transports: Map<string, SSEServerTransport> }> {
  const transports = new Map<string, SSEServerTransport>();
  const http = await listen('/mcp', async (req, res, body) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/mcp') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      transport.onclose = () => void transports.delete(transport.sessionId);
      await mcpServer().connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end('No such session');
        return;
      }
      await transport.handlePostMessage(req, res, body);
      return;
    }
    res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('Method Not Allowed');
  });
  return {
    ...http,
    transports,
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => {});
      await http.close();
    },
  };
}

// ── the client under test ───────────────────────────────────────────────────

interface Received {
  readonly message: JsonRpcMessage & Record<string, unknown>;
  readonly extra: unknown;
}

/** Our transport plus what came out of it, with a raw JSON-RPC vocabulary. */
class Driver {
  readonly transport: LegacyHttpClientTransport;
  readonly received: Received[] = [];
  readonly errors: Error[] = [];
  closes = 0;

  constructor(options: LegacyHttpClientOptions) {
    this.transport = new LegacyHttpClientTransport({ reconnect: { retries: 2, minDelayMs: 10, maxDelayMs: 50 }, ...options });
    this.transport.onmessage = (message, extra) => void this.received.push({ message: message as Received['message'], extra });
    this.transport.onerror = (e) => void this.errors.push(e);
    this.transport.onclose = () => void this.closes++;
  }

  async waitFor(predicate: (r: Received) => boolean, what: string, ms = 3000): Promise<Received> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.received.find(predicate);
      if (hit) return hit;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.received.map((r) => r.message))}`);
      await sleep(5);
    }
  }

  answersTo(id: RequestId): Received[] {
    return this.received.filter((r) => r.message['id'] === id && !('method' in r.message));
  }

  async request(id: RequestId, method: string, params?: Record<string, unknown>): Promise<Received> {
    await this.transport.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.waitFor((r) => r.message['id'] === id && !('method' in r.message), `the answer to ${method}`);
  }

  async initialize(): Promise<Received> {
    const answer = await this.request(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { elicitation: {} },
      clientInfo: CLIENT,
    });
    await this.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return answer;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, what: string, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function resultOf(r: Received): Record<string, unknown> {
  return r.message['result'] as Record<string, unknown>;
}

function errorOf(r: Received): { code: number; message: string } {
  return r.message['error'] as { code: number; message: string };
}

/** Runs the `greet` call: answers the pushed elicitation through `send` and returns the call's answer. */
async function greet(d: Driver, id: number): Promise<{ push: Received; answer: Received; log: Received; progress: Received }> {
  await d.transport.send({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'greet', arguments: {}, _meta: { progressToken: 'tok' } },
  });
  const push = await d.waitFor((r) => r.message['method'] === 'elicitation/create', 'the pushed elicitation');
  const log = await d.waitFor((r) => r.message['method'] === 'notifications/message', 'the log');
  const progress = await d.waitFor((r) => r.message['method'] === 'notifications/progress', 'the progress');
  await d.transport.send({ jsonrpc: '2.0', id: push.message['id'] as RequestId, result: { action: 'accept', content: { name: 'Ada' } } });
  const answer = await d.waitFor((r) => r.message['id'] === id && 'result' in r.message, 'the tools/call result');
  return { push, answer, log, progress };
}

// ── Streamable HTTP against the SDK's server ────────────────────────────────

const streamable = suite('LegacyHttpClientTransport (Streamable HTTP)');

streamable('should keep the session id from the initialize answer and send it with the negotiated MCP-Protocol-Version', async () => {
  const server = await streamableServer();
  const d = new Driver({ url: server.url });
  try {
    await d.transport.start();
    const init = await d.initialize();
    assert.is(resultOf(init)['protocolVersion'], '2025-11-25');
    assert.is(d.transport.mode, 'streamable');
    assert.ok(d.transport.sessionId);
    assert.equal([...server.sessions.keys()], [d.transport.sessionId]);
    const tools = await d.request(2, 'tools/list');
    assert.equal(
      (resultOf(tools)['tools'] as Array<{ name: string }>).map((t) => t.name),
      ['greet', 'nap'],
    );
    const posts = server.seen.filter((s) => s.method === 'POST');
    assert.is(posts[0]!.headers['mcp-session-id'], undefined);
    assert.is(posts[0]!.headers['content-type'], 'application/json');
    assert.is(posts[0]!.headers['accept'], 'application/json, text/event-stream');
    const list = posts.find((s) => (s.body as { method?: string }).method === 'tools/list')!;
    assert.is(list.headers['mcp-session-id'], d.transport.sessionId);
    assert.is(list.headers['mcp-protocol-version'], '2025-11-25');
    assert.equal(d.errors, []);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

streamable('should tie the elicitation, logs and progress pushed on a POST stream to the request', async () => {
  const server = await streamableServer();
  const d = new Driver({ url: server.url });
  try {
    await d.initialize();
    const { push, answer, log, progress } = await greet(d, 7);
    assert.equal(push.extra, { relatedRequestId: 7 });
    assert.equal(log.extra, { relatedRequestId: 7 });
    assert.equal(progress.extra, { relatedRequestId: 7 });
    assert.is(progress.message['params'] && (progress.message['params'] as { progressToken: string }).progressToken, 'tok');
    assert.equal(resultOf(answer)['content'], [{ type: 'text', text: 'Hello, Ada' }]);
    assert.is(d.answersTo(7).length, 1);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

streamable('should deliver an unrelated notification from the standalone GET stream', async () => {
  const server = await streamableServer();
  const d = new Driver({ url: server.url });
  try {
    await d.initialize();
    await until(() => server.seen.some((s) => s.method === 'GET'), 'the GET stream');
    const get = server.seen.find((s) => s.method === 'GET')!;
    assert.is(get.headers['accept'], 'text/event-stream');
    assert.is(get.headers['mcp-session-id'], d.transport.sessionId);
    await sleep(20);
    server.sessions.get(d.transport.sessionId!)!.sendToolListChanged();
    const note = await d.waitFor((r) => r.message['method'] === 'notifications/tools/list_changed', 'list_changed');
    assert.is(note.extra, undefined);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

streamable(
  'should have the standalone GET stream open before the server hears initialized, so a message it sends at once is not dropped',
  async () => {
    const server = await streamableServer();
    const d = new Driver({ url: server.url });
    try {
      await d.initialize();
      const get = server.seen.findIndex((s) => s.method === 'GET');
      const initialized = server.seen.findIndex((s) => (s.body as { method?: string } | undefined)?.method === 'notifications/initialized');
      assert.ok(get !== -1 && get < initialized, `GET (${get}) before initialized (${initialized})`);
      // No wait: the SDK's server drops an unrelated message when no GET stream is open.
      server.sessions.get(d.transport.sessionId!)!.sendToolListChanged();
      await d.waitFor((r) => r.message['method'] === 'notifications/tools/list_changed', 'list_changed');
    } finally {
      await d.transport.close();
      await server.close();
    }
  },
);

streamable(
  'should wait for a standalone stream the server is slow to open, so a message it sends at once is still not dropped',
  async () => {
    const server = await streamableServer({ getDelayMs: 3000 });
    const d = new Driver({ url: server.url });
    try {
      await d.initialize();
      server.sessions.get(d.transport.sessionId!)!.sendToolListChanged();
      await d.waitFor((r) => r.message['method'] === 'notifications/tools/list_changed', 'list_changed');
    } finally {
      await d.transport.close();
      await server.close();
    }
  },
);

streamable('should resume a POST stream with Last-Event-ID when the server closes it before answering', async () => {
  const server = await streamableServer({ resumable: true });
  const d = new Driver({ url: server.url });
  try {
    await d.initialize();
    await d.transport.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nap', arguments: {} } });
    const answer = await d.waitFor((r) => r.message['id'] === 3, 'the nap result');
    assert.equal(resultOf(answer)['content'], [{ type: 'text', text: 'rested' }]);
    assert.equal(answer.extra, { relatedRequestId: 3 });
    assert.ok(
      server.seen.some((s) => s.method === 'GET' && typeof s.headers['last-event-id'] === 'string'),
      'a GET with Last-Event-ID',
    );
    await sleep(30);
    assert.is(d.answersTo(3).length, 1);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

streamable('should report an expired session (404) through onerror and onclose, and still answer the request', async () => {
  const server = await streamableServer();
  const d = new Driver({ url: server.url });
  try {
    await d.initialize();
    server.forget(d.transport.sessionId!);
    await d.transport.send({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
    await until(() => d.closes === 1, 'onclose');
    const answers = d.answersTo(4);
    assert.is(answers.length, 1);
    assert.is(errorOf(answers[0]!).code, -32603);
    assert.match(errorOf(answers[0]!).message, /404/);
    const expired = d.errors.find((e) => e instanceof AdapterError && e.code === 'upstream-exited');
    assert.ok(expired, 'an upstream-exited error');
    try {
      await d.transport.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
      assert.unreachable('send after expiry');
    } catch (e) {
      assert.instance(e, AdapterError);
      assert.is((e as AdapterError).code, 'closed');
    }
    assert.not.ok(
      server.seen.some((s) => s.method === 'DELETE'),
      'no DELETE for a session that is gone',
    );
  } finally {
    await d.transport.close();
    await server.close();
  }
});

streamable('should end the session with DELETE on close, once, and refuse to send afterwards', async () => {
  const server = await streamableServer();
  const d = new Driver({ url: server.url });
  try {
    await d.initialize();
    const sid = d.transport.sessionId;
    await Promise.all([d.transport.close(), d.transport.close()]);
    await d.transport.close();
    const deletes = server.seen.filter((s) => s.method === 'DELETE');
    assert.is(deletes.length, 1);
    assert.is(deletes[0]!.headers['mcp-session-id'], sid);
    assert.is(server.sessions.size, 0);
    assert.is(d.closes, 1);
    let refused: unknown;
    await d.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }).catch((e: unknown) => (refused = e));
    assert.instance(refused, AdapterError);
  } finally {
    await server.close();
  }
});

streamable.run();

// ── HTTP+SSE (2024-11-05) against the SDK's server ──────────────────────────

const sse = suite('LegacyHttpClientTransport (HTTP+SSE)');

sse('should fall back to HTTP+SSE when the first POST is refused, and run a whole session there', async () => {
  const server = await sseServer();
  const d = new Driver({ url: server.url });
  try {
    await d.transport.start();
    assert.is(d.transport.mode, undefined);
    const init = await d.initialize();
    assert.is(d.transport.mode, 'sse');
    assert.is(resultOf(init)['protocolVersion'], '2025-11-25');
    assert.is(server.transports.size, 1);
    const { answer, push } = await greet(d, 2);
    assert.equal(resultOf(answer)['content'], [{ type: 'text', text: 'Hello, Ada' }]);
    assert.is(push.extra, undefined);
    const posts = server.seen.filter((s) => s.method === 'POST');
    assert.is(posts[0]!.path, '/mcp');
    assert.ok(posts.length >= 3, `${posts.length} POSTs: the refused one, initialize and the call at least`);
    assert.ok(posts.slice(1).every((s) => s.path.startsWith('/messages?sessionId=')));
    assert.equal(posts.filter((s) => (s.body as { method?: string }).method === 'initialize').length, 2);
    assert.equal(d.errors, []);
  } finally {
    await d.transport.close();
    await server.close();
  }
  assert.is(d.closes, 1);
});

sse("should speak HTTP+SSE directly with mode 'sse', and close when the server drops the stream", async () => {
  const server = await sseServer();
  const d = new Driver({ url: server.url, mode: 'sse' });
  try {
    await d.transport.start();
    assert.is(d.transport.mode, 'sse');
    await d.initialize();
    const tools = await d.request(2, 'tools/list');
    assert.ok(Array.isArray(resultOf(tools)['tools']));
    assert.not.ok(server.seen.some((s) => s.method === 'POST' && s.path === '/mcp'));
    for (const t of server.transports.values()) await t.close();
    await until(() => d.closes === 1, 'onclose');
    assert.ok(d.errors.some((e) => e instanceof AdapterError && e.code === 'upstream-exited'));
  } finally {
    await d.transport.close();
    await server.close();
  }
});

sse.run();

// ── failures (plain node:http servers that misbehave on purpose) ────────────

const failures = suite('LegacyHttpClientTransport (failures)');

failures('should answer a request exactly once with -32603 when the server returns 500 without a body', async () => {
  const server = await listen('/mcp', (_req, res) => void res.writeHead(500).end());
  const d = new Driver({ url: server.url, mode: 'streamable' });
  try {
    await d.transport.send({ jsonrpc: '2.0', id: 9, method: 'tools/list' });
    await d.waitFor((r) => r.message['id'] === 9, 'the synthesised error');
    await sleep(20);
    const answers = d.answersTo(9);
    assert.is(answers.length, 1);
    assert.is(errorOf(answers[0]!).code, -32603);
    assert.match(errorOf(answers[0]!).message, /HTTP 500/);
    assert.equal(answers[0]!.message['error'], { code: -32603, message: errorOf(answers[0]!).message, data: { httpStatus: 500 } });
  } finally {
    await d.transport.close();
    await server.close();
  }
});

failures('should answer a request exactly once when the server closes the connection mid-stream', async () => {
  const server = await listen('/mcp', (_req, res, body) => {
    const id = (body as { id: number }).id;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } })}\n\n`,
    );
    setTimeout(() => res.socket?.destroy(), 20);
    void id;
  });
  const d = new Driver({ url: server.url, mode: 'streamable' });
  try {
    await d.transport.send({ jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: { name: 'x' } });
    const progress = await d.waitFor((r) => r.message['method'] === 'notifications/progress', 'the progress');
    assert.equal(progress.extra, { relatedRequestId: 'call-1' });
    await d.waitFor((r) => r.message['id'] === 'call-1', 'the synthesised error');
    await sleep(30);
    const answers = d.answersTo('call-1');
    assert.is(answers.length, 1);
    assert.is(errorOf(answers[0]!).code, -32603);
    assert.match(errorOf(answers[0]!).message, /stream/);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

failures('should time out a request that never gets an answer, cancel it upstream and drop a late answer', async () => {
  let stream: ServerResponse | undefined;
  const server = await listen('/mcp', (req, res, body) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      stream = res;
      return;
    }
    if ((body as { method?: string } | undefined)?.method === 'tools/call') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      return;
    }
    res.writeHead(202).end();
  });
  const d = new Driver({ url: server.url, mode: 'streamable', requestTimeoutMs: 100 });
  try {
    await d.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await until(() => stream !== undefined, 'the GET stream');
    const started = Date.now();
    await d.transport.send({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'slow' } });
    const answer = await d.waitFor((r) => r.message['id'] === 11, 'the timeout error');
    assert.ok(Date.now() - started >= 95);
    assert.is(errorOf(answer).code, -32603);
    assert.match(errorOf(answer).message, /within 100 ms/);
    await until(
      () => server.seen.some((s) => (s.body as { method?: string } | undefined)?.method === 'notifications/cancelled'),
      'notifications/cancelled',
    );
    const cancel = server.seen.find((s) => (s.body as { method?: string } | undefined)?.method === 'notifications/cancelled')!;
    assert.equal((cancel.body as { params: unknown }).params, { requestId: 11, reason: 'Request timed out' });
    // The late answer arrives (on the GET stream) and is dropped; what follows it still gets through.
    stream!.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 11, result: {} })}\n\n`);
    stream!.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/after' })}\n\n`);
    await d.waitFor((r) => r.message['method'] === 'notifications/after', 'the notification after the late answer');
    assert.is(d.answersTo(11).length, 1);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

failures('should close (and end the session) when the signal aborts', async () => {
  const server = await streamableServer();
  const abort = new AbortController();
  const d = new Driver({ url: server.url, signal: abort.signal });
  try {
    await d.initialize();
    abort.abort();
    await until(() => d.closes === 1, 'onclose');
    assert.is(server.seen.filter((s) => s.method === 'DELETE').length, 1);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

failures('should deliver a JSON-RPC error body that has an id, and report one without through onerror', async () => {
  const server = await listen('/mcp', (_req, res, body) => {
    const m = body as { id: number };
    const error =
      m.id === 1
        ? { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'bad params' } }
        : { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: Server not initialized' } };
    res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(error));
  });
  const d = new Driver({ url: server.url, mode: 'streamable' });
  try {
    const first = await d.request(1, 'tools/list');
    assert.equal(first.message['error'], { code: -32602, message: 'bad params' });
    const second = await d.request(2, 'tools/list');
    assert.is(errorOf(second).code, -32603);
    assert.match(errorOf(second).message, /HTTP 400: Bad Request: Server not initialized/);
    assert.ok(d.errors.some((e) => /Server not initialized/.test(e.message)));
    assert.is(d.answersTo(1).length + d.answersTo(2).length, 2);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

failures('should deliver every message of a JSON array answer (2025-03-26 batch)', async () => {
  const server = await listen('/mcp', (_req, res) => {
    const batch = [
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
      { jsonrpc: '2.0', id: 1, result: { tools: [] } },
    ];
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(batch));
  });
  const d = new Driver({ url: server.url });
  try {
    await d.request(1, 'tools/list');
    assert.equal(
      d.received.map((r) => r.message['method'] ?? r.message['id']),
      ['notifications/message', 1],
    );
    assert.is(d.transport.mode, 'streamable');
  } finally {
    await d.transport.close();
    await server.close();
  }
});

failures(
  'should re-open a dropped GET stream with Last-Event-ID after the SSE retry delay, parsing comments and multi-line data',
  async () => {
    let gets = 0;
    const server = await listen('/mcp', (req, res, body) => {
      if (req.method === 'POST') {
        const m = body as { id?: number; method: string };
        if (m.method === 'initialize') {
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: m.id,
              result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'raw', version: '1' } },
            }),
          );
        } else res.writeHead(202).end();
        return;
      }
      if (req.method === 'DELETE') return void res.writeHead(405).end();
      gets++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (gets === 1) res.end(`retry: 30\nid: e1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/first"}\n\n`);
      else res.end(`: keep-alive\n\nid: e2\ndata: {"jsonrpc":"2.0",\ndata: "method":"notifications/second"}\n\n`);
    });
    const d = new Driver({ url: server.url, reconnect: { retries: 0, minDelayMs: 1000 } });
    try {
      await d.initialize();
      await d.waitFor((r) => r.message['method'] === 'notifications/second', 'the second event');
      const [first, second] = server.seen.filter((s) => s.method === 'GET');
      assert.is(first!.headers['last-event-id'], undefined);
      assert.is(second!.headers['last-event-id'], 'e1');
      assert.is(second!.headers['mcp-protocol-version'], '2025-06-18');
      assert.ok(d.received.some((r) => r.message['method'] === 'notifications/first'));
    } finally {
      await d.transport.close();
      await server.close();
    }
  },
);

failures('should answer a request when the server cannot be reached, without throwing from send', async () => {
  const gone = await listen('/mcp', (_req, res) => void res.end());
  await gone.close();
  const d = new Driver({ url: gone.url });
  try {
    await d.transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    const answer = await d.waitFor((r) => r.message['id'] === 1, 'the synthesised error');
    assert.is(errorOf(answer).code, -32603);
    assert.match(errorOf(answer).message, /could not POST/);
  } finally {
    await d.transport.close();
  }
});

failures.run();

// ── answers past maxMessageBytes ────────────────────────────────────────────

/** A server whose `tools/call` answers are as large as the tool's name says; other requests get a small answer. */
async function hugeServer(): Promise<Http> {
  return listen('/mcp', async (_req, res, body) => {
    const m = body as { id?: unknown; method?: string; params?: { name?: string; size?: number } } | undefined;
    if (m?.id === undefined) return void res.writeHead(202).end();
    if (answerHuge(res, m.params?.name, m.id, m.params?.size ?? 5 * MiB)) return;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [] } }));
  });
}

const bounded = suite('LegacyHttpClientTransport (maxMessageBytes)');

bounded('should answer a request whose JSON or SSE answer is past the bound with one -32603, cancel it upstream, and go on', async () => {
  const server = await hugeServer();
  const d = new Driver({ url: server.url, mode: 'streamable', maxMessageBytes: MiB });
  try {
    const cases = ['json-length', 'json-chunked', 'sse', 'error-chunked'];
    for (const [i, name] of cases.entries()) {
      const id = i + 1;
      const started = Date.now();
      const answer = await d.request(id, 'tools/call', { name, arguments: {} });
      assert.ok(Date.now() - started < 2000, `${name}: promptly`);
      assert.equal(
        JSON.stringify(answer.message).length < 1000 && answer.message['error'],
        {
          code: -32603,
          message: `Internal error: the server's answer is larger than ${MiB} bytes`,
          data: { httpStatus: name === 'error-chunked' ? 500 : 200 },
        },
        name,
      );
      await until(
        () =>
          server.seen.some(
            (s) =>
              (s.body as { method?: string; params?: { requestId?: unknown } }).method === 'notifications/cancelled' &&
              (s.body as { params: { requestId: unknown } }).params.requestId === id,
          ),
        `the cancellation of ${name}`,
      );
    }
    const fine = await d.request(9, 'tools/list');
    assert.equal(resultOf(fine), { content: [] });
    await sleep(30);
    for (const id of [1, 2, 3, 4, 9]) assert.is(d.answersTo(id).length, 1, `one answer to ${id}`);
    assert.equal(d.errors, []);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

bounded('should not hold a 50 MiB answer in memory when the bound is 1 MiB', async () => {
  const server = await hugeServer();
  const d = new Driver({ url: server.url, mode: 'streamable', maxMessageBytes: MiB });
  try {
    await d.request(1, 'tools/list');
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 2);
    try {
      for (const [i, name] of ['json-chunked', 'sse'].entries()) {
        const answer = await d.request(i + 2, 'tools/call', { name, size: 50 * MiB, arguments: {} });
        assert.is(errorOf(answer).code, -32603);
      }
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    assert.ok(peak - before < 20 * MiB, `the heap grew by ${((peak - before) / MiB).toFixed(1)} MiB`);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

bounded('should report an event past the bound on the standalone GET stream and re-open it', async () => {
  let gets = 0;
  const server = await listen('/mcp', async (req, res, body) => {
    if (req.method === 'GET') {
      gets++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (gets === 1)
        return pour(res, 'retry: 10\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"', 3 * MiB, '"}}\n\n');
      return void res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'small' } })}\n\n`);
    }
    const m = body as { id?: unknown; method?: string } | undefined;
    if (m?.id === undefined) return void res.writeHead(202).end();
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: m.id,
        result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x', version: '1' } },
      }),
    );
  });
  const d = new Driver({ url: server.url, mode: 'streamable', maxMessageBytes: MiB });
  try {
    await d.initialize();
    const small = await d.waitFor((r) => r.message['method'] === 'notifications/message', 'the message on the re-opened stream');
    assert.is(JSON.stringify(small.message['params']).slice(0, 100), '{"data":"small"}');
    assert.is(gets, 2);
    assert.is(d.errors.length, 1);
    assert.match(d.errors[0]!.message, `larger than ${MiB} bytes on the standalone GET stream`);
  } finally {
    await d.transport.close();
    await server.close();
  }
});

bounded.run();
