/**
 * `serveModern` on its own, against an in-process legacy server (the v1 SDK's low-level `Server`)
 * that records what reaches it: the envelope, the session chosen, `Mcp-Param-*` checks, plain and
 * pushable calls, deadlines, cancellation, error codes and `server/discover`. Not the HTTP front.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode as SdkErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JsonRpcNotification, JsonRpcRequest } from '../../../lib/core/jsonrpc.ts';
import type { InitializeResult } from '../../../lib/core/legacy/lifecycle.ts';
import { inProcessBackend } from '../../../lib/session/backend.ts';
import { SessionPool } from '../../../lib/session/pool.ts';
import { serveModern } from '../../../lib/wrap/legacyServer/modernDispatch.ts';
import { envelopeOf } from '../../../lib/wrap/legacyServer/modernRequest.ts';
import type { ModernDispatchOptions } from '../../../lib/wrap/legacyServer/dispatchOptions.ts';
import type { InputBroker, PushableCall } from '../../../lib/wrap/mrtr/broker.ts';
import { MrtrBroker } from '../../../lib/wrap/mrtr/suspend.ts';
import { errorAnswer, type Answer, type ModernContext } from '../../../lib/fronts/served.ts';
import { ToolIndex } from '../../../lib/wrap/legacyServer/toolIndex.ts';
import { waitFor } from '../../helpers/everything.ts';
import { modernRequest } from '../../helpers/messages.ts';
import { recordingUpstream, type Recorder } from '../../helpers/recordingUpstream.ts';
import { validateMessage } from '../../helpers/schemas.ts';

const MEMO = 'memo://one';

/** A legacy server written against the v1 SDK's low-level `Server`, as many are. */
function legacyServer(): Server {
  const server = new Server({ name: 'memo-server', version: '3.1.0' }, { capabilities: { tools: {}, prompts: {}, resources: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: 'echo',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string' }, region: { type: 'string', 'x-mcp-header': 'Region' } },
          required: ['text'],
        },
      },
      { name: 'wait', inputSchema: { type: 'object' } },
      { name: 'ask_name', inputSchema: { type: 'object' } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'echo':
        return { content: [{ type: 'text', text: String(args['text']) }] };
      case 'wait':
        await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve(), { once: true }));
        return { content: [{ type: 'text', text: 'cancelled' }] };
      case 'ask_name': {
        const answer = await server.elicitInput({
          mode: 'form',
          message: 'Your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        });
        return {
          content: [{ type: 'text', text: `Hello, ${answer.action === 'accept' ? String(answer.content?.['name']) : 'stranger'}!` }],
        };
      }
      default:
        throw new McpError(SdkErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [{ name: 'greet', arguments: [{ name: 'name', required: true }] }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${request.params.arguments?.['name'] ?? 'nobody'}` } }],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [{ uri: MEMO, name: 'memo' }] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    if (request.params.uri !== MEMO) throw new McpError(-32002, 'Resource not found', { uri: request.params.uri });
    return { contents: [{ uri: MEMO, mimeType: 'text/plain', text: 'hello' }] };
  });
  return server;
}

interface Fixture {
  readonly upstream: Recorder<Server>;
  readonly pool: SessionPool;
  readonly options: ModernDispatchOptions;
  readonly notes: JsonRpcNotification[];
  /** Serves `request` as `principal` (headers and signal optional). */
  serve(request: JsonRpcRequest, extra?: Partial<ModernContext>): Promise<Answer>;
  close(): Promise<void>;
}

/** Serves `request` as the wrap does: its envelope read once, then dispatched. */
function serveRead(request: JsonRpcRequest, ctx: ModernContext, options: ModernDispatchOptions): Promise<Answer> {
  const envelope = envelopeOf(request, ctx, options);
  return envelope.ok ? serveModern(request, ctx, envelope.value, options) : Promise.resolve(errorAnswer(request.id, envelope.error));
}

function fixture(options: Partial<ModernDispatchOptions> = {}): Fixture {
  const upstream = recordingUpstream(legacyServer);
  const pool = new SessionPool(inProcessBackend(upstream.upstream), { waitMs: 2_000 });
  const notes: JsonRpcNotification[] = [];
  const all: ModernDispatchOptions = { pool, ...options };
  return {
    upstream,
    pool,
    options: all,
    notes,
    serve: (request, extra = {}) =>
      serveRead(request, { principal: 'alice', signal: new AbortController().signal, notify: (n) => notes.push(n), ...extra }, all),
    close: () => pool.close(),
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** The answer's result, failing with its error when it has none. */
function resultOf(answer: Answer): Loose {
  if ('error' in answer.message)
    assert.unreachable(`expected a result, got error ${answer.message.error.code}: ${answer.message.error.message}`);
  return (answer.message as { result: unknown }).result;
}

/** The answer's error, failing when it is a result. */
function errorOf(answer: Answer): { code: number; message: string; data?: Loose } {
  if (!('error' in answer.message)) return assert.unreachable(`expected an error, got ${JSON.stringify(answer.message)}`) as never;
  return answer.message.error;
}

const d = suite('serveModern');
// Deadlines and backoffs do not keep the process up (a front's socket or stdin does that): this
// interval stands in for the front while a call waits.
let alive: ReturnType<typeof setInterval> | undefined;
d.before(() => {
  alive = setInterval(() => {}, 1_000);
});
d.after(() => clearInterval(alive));

d('should serve a plain tools/call with its _meta left behind, translated and schema-valid', async () => {
  const f = fixture();
  try {
    const answer = await f.serve(modernRequest('tools/call', { name: 'echo', arguments: { text: 'hi' } }, {}, 7));
    assert.is(answer.status, 200);
    assert.is(answer.message.id, 7);
    const result = resultOf(answer);
    assert.equal(result.content, [{ type: 'text', text: 'hi' }]);
    assert.is(result.resultType, 'complete');
    assert.equal(result._meta['io.modelcontextprotocol/serverInfo'], { name: 'memo-server', version: '3.1.0' });
    assert.equal(validateMessage('2026-07-28', answer.message, { method: 'tools/call' }), []);
    const sent = f.upstream.withMethod('tools/call');
    assert.is(sent.length, 1);
    assert.equal(sent[0]!.params, { name: 'echo', arguments: { text: 'hi' } }, 'the modern envelope is not sent upstream');
  } finally {
    await f.close();
  }
});

d('should serve prompts/get and resources/read, and map a missing resource to -32602 with its uri', async () => {
  const f = fixture();
  try {
    const prompt = resultOf(await f.serve(modernRequest('prompts/get', { name: 'greet', arguments: { name: 'Ada' } })));
    assert.equal(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }]);
    assert.is(prompt.resultType, 'complete');
    const read = resultOf(await f.serve(modernRequest('resources/read', { uri: MEMO })));
    assert.equal(read.contents, [{ uri: MEMO, mimeType: 'text/plain', text: 'hello' }]);
    assert.is(read.resultType, 'complete');
    const missing = await f.serve(modernRequest('resources/read', { uri: 'memo://none' }));
    const error = errorOf(missing);
    assert.is(error.code, -32602, 'the legacy -32002 becomes -32602');
    assert.is(error.data?.uri, 'memo://none');
    assert.is(missing.status, 200);
  } finally {
    await f.close();
  }
});

d("should pass an unknown tool's -32602 from the upstream on", async () => {
  const f = fixture();
  try {
    const answer = await f.serve(modernRequest('tools/call', { name: 'nope', arguments: {} }));
    const error = errorOf(answer);
    assert.is(error.code, -32602);
    assert.match(error.message, 'Unknown tool: nope');
    assert.is(answer.status, 200);
  } finally {
    await f.close();
  }
});

d('should refuse a bad envelope before any session is opened', async () => {
  const f = fixture();
  try {
    const bare = await f.serve({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
    assert.is(errorOf(bare).code, -32602);
    assert.is(bare.status, 400);
    const future = await f.serve(
      modernRequest('tools/call', { name: 'echo', arguments: { text: 'x' } }, { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }),
    );
    assert.is(errorOf(future).code, -32022);
    assert.is(future.status, 400);
    const unknown = await f.serve(
      modernRequest('initialize', { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 'c', version: '1' } }),
    );
    assert.is(errorOf(unknown).code, -32601);
    assert.is(unknown.status, 404);
    assert.is(f.pool.size, 0);
    assert.is(f.upstream.servers.length, 0, 'no upstream server was started');
  } finally {
    await f.close();
  }
});

d('should choose the session by principal and declared capabilities', async () => {
  const f = fixture();
  const echo = (text: string, meta: Record<string, unknown> = {}) =>
    modernRequest('tools/call', { name: 'echo', arguments: { text } }, meta);
  try {
    resultOf(await f.serve(echo('a1')));
    resultOf(await f.serve(echo('a2')));
    assert.is(f.pool.size, 1, 'the same caller reuses its session');
    resultOf(await f.serve(echo('b1'), { principal: 'bob' }));
    resultOf(await f.serve(echo('a3', { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } })));
    const held = f.pool
      .sessions()
      .map(({ key }) => `${key.principal} ${JSON.stringify(key.capabilities)}`)
      .sort();
    assert.is(held.length, 3);
    assert.is(held.filter((k) => k.startsWith('alice ')).length, 2, 'alice has one session per capability set');
    assert.is(held.filter((k) => k.startsWith('bob ')).length, 1, 'bob never shares hers');
  } finally {
    await f.close();
  }
});

d('should check Mcp-Param headers against the tool schema before anything goes upstream', async () => {
  const f = fixture({ tools: new ToolIndex() });
  const call = modernRequest('tools/call', { name: 'echo', arguments: { text: 'hi', region: 'eu-west' } });
  const headers = (values: Record<string, string>) => (name: string) => values[name.toLowerCase()];
  try {
    const wrong = await f.serve(call, { headers: headers({ 'mcp-param-region': 'us-east' }) });
    assert.is(errorOf(wrong).code, -32020);
    assert.is(wrong.status, 400);
    const missing = await f.serve(call, { headers: headers({}) });
    assert.is(errorOf(missing).code, -32020);
    assert.match(errorOf(missing).message, 'Mcp-Param-Region');
    assert.is(f.upstream.withMethod('tools/call').length, 0, 'neither reached the server');
    assert.ok(f.upstream.withMethod('tools/list').length >= 1, 'the tool list was read to know the schema');
    const right = await f.serve(call, { headers: headers({ 'mcp-param-region': 'eu-west' }) });
    assert.equal(resultOf(right).content, [{ type: 'text', text: 'hi' }]);
    assert.is(f.upstream.withMethod('tools/call').length, 1);
  } finally {
    await f.close();
  }
});

d('should answer -32603 when the upstream misses requestTimeoutMs, and cancel the call upstream', async () => {
  const f = fixture({ requestTimeoutMs: 100 });
  try {
    const started = Date.now();
    const answer = await f.serve(modernRequest('tools/call', { name: 'wait' }));
    const error = errorOf(answer);
    assert.is(error.code, -32603);
    assert.match(error.message, 'did not answer tools/call within 100 ms');
    assert.ok(Date.now() - started < 3_000, 'answered at its deadline');
    const call = f.upstream.withMethod('tools/call')[0] as JsonRpcRequest;
    assert.ok(await waitFor(() => f.upstream.withMethod('notifications/cancelled').length === 1, 1_000), 'the server was told');
    assert.is(f.upstream.withMethod('notifications/cancelled')[0]!.params?.['requestId'], call.id);
    assert.ok(f.pool.sessions().length === 1 && f.pool.sessions()[0]!.session.inFlight === 0, 'nothing left in flight');
  } finally {
    await f.close();
  }
});

d('should send notifications/cancelled upstream when the request is cancelled', async () => {
  const f = fixture();
  const controller = new AbortController();
  try {
    const pending = f.serve(modernRequest('tools/call', { name: 'wait' }), { signal: controller.signal });
    assert.ok(await waitFor(() => f.upstream.withMethod('tools/call').length === 1, 2_000), 'the call reached the server');
    controller.abort();
    const error = errorOf(await pending);
    assert.is(error.code, -32603);
    assert.match(error.message, 'cancelled');
    const call = f.upstream.withMethod('tools/call')[0] as JsonRpcRequest;
    assert.ok(await waitFor(() => f.upstream.withMethod('notifications/cancelled').length === 1, 1_000), 'the server was told');
    assert.is(f.upstream.withMethod('notifications/cancelled')[0]!.params?.['requestId'], call.id);
    assert.is(f.pool.sessions()[0]!.session.inFlight, 0);
  } finally {
    await f.close();
  }
});

d('should answer -32603 naming the upstream when it cannot be started or goes away mid-call', async () => {
  const pool = new SessionPool(
    inProcessBackend(() => {
      throw new Error('no such server');
    }),
    { openAttempts: 1 },
  );
  const f = fixture();
  try {
    const unreachable = await serveRead(
      modernRequest('tools/call', { name: 'echo', arguments: { text: 'x' } }),
      { principal: 'alice', signal: new AbortController().signal, notify: () => {} },
      { pool },
    );
    const error = errorOf(unreachable);
    assert.is(error.code, -32603);
    assert.match(error.message, 'the upstream server is unavailable: no such server');
    const pending = f.serve(modernRequest('tools/call', { name: 'wait' }));
    assert.ok(await waitFor(() => f.upstream.withMethod('tools/call').length === 1, 2_000), 'the call reached the server');
    await f.upstream.servers[0]!.server.close();
    const gone = errorOf(await pending);
    assert.is(gone.code, -32603);
    assert.match(gone.message, 'the upstream server closed the connection');
    assert.equal(
      resultOf(await f.serve(modernRequest('tools/call', { name: 'echo', arguments: { text: 'back' } }))).content,
      [{ type: 'text', text: 'back' }],
      'the next request gets a new session',
    );
    assert.is(f.upstream.servers.length, 2);
  } finally {
    await Promise.all([pool.close(), f.close()]);
  }
});

d('should build server/discover from the upstream initialize result, schema-valid', async () => {
  const f = fixture();
  try {
    const answer = await f.serve(modernRequest('server/discover', {}, {}, 'd1'));
    const result = resultOf(answer);
    assert.is(answer.message.id, 'd1');
    assert.equal(result.supportedVersions, ['2026-07-28']);
    assert.ok(
      result.capabilities.tools && result.capabilities.prompts && result.capabilities.resources,
      JSON.stringify(result.capabilities),
    );
    assert.equal(result._meta['io.modelcontextprotocol/serverInfo'], { name: 'memo-server', version: '3.1.0' });
    assert.equal(validateMessage('2026-07-28', answer.message, { method: 'server/discover' }), []);
    assert.is(f.upstream.withMethod('initialize').length, 1);
    resultOf(await f.serve(modernRequest('server/discover')));
    assert.is(f.upstream.withMethod('initialize').length, 1, 'the open session answers again');
  } finally {
    await f.close();
  }
});

d('should answer server/discover from what the server said elsewhere, opening no session', async () => {
  const said: InitializeResult = {
    protocolVersion: '2025-11-25',
    capabilities: { tools: {} },
    serverInfo: { name: 'remembered', version: '1.0.0' },
  };
  const f = fixture({ described: () => said, serverInfo: { name: 'renamed', version: '9.9.9' } });
  try {
    const result = resultOf(await f.serve(modernRequest('server/discover')));
    assert.equal(result._meta['io.modelcontextprotocol/serverInfo'], { name: 'renamed', version: '9.9.9' }, 'serverInfo overrides');
    assert.ok(result.capabilities.tools);
    assert.is(result.capabilities.prompts, undefined);
    assert.is(f.pool.size, 0);
    assert.is(f.upstream.servers.length, 0);
  } finally {
    await f.close();
  }
});

d('should run a pushable call through the input broker, on a session reserved for it', async () => {
  const runs: Array<{ target: string; timeoutMs: number; reservedBefore: number }> = [];
  const pushes: string[] = [];
  const inputs: InputBroker = {
    pushes: (target) => target === 'tools/call:ask_name',
    async run(call: PushableCall) {
      runs.push({ target: call.target, timeoutMs: call.timeoutMs, reservedBefore: call.session.pushableInFlight });
      const outcome = await call.call({
        onPush: async (push) => {
          pushes.push(push.method);
          return { result: { action: 'accept', content: { name: 'Ada' } } };
        },
      });
      return call.finish(outcome);
    },
  };
  const f = fixture({ inputs, requestTimeoutMs: 4_000 });
  try {
    const answer = await f.serve(
      modernRequest('tools/call', { name: 'ask_name' }, { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }),
    );
    assert.equal(resultOf(answer).content, [{ type: 'text', text: 'Hello, Ada!' }]);
    assert.equal(runs, [{ target: 'tools/call:ask_name', timeoutMs: 4_000, reservedBefore: 1 }]);
    assert.equal(pushes, ['elicitation/create']);
    assert.is(f.pool.sessions()[0]!.session.pushableInFlight, 0, 'the reservation ended with the call');
    const listed = resultOf(await f.serve(modernRequest('tools/list')));
    assert.is(listed.tools.length, 3);
    assert.is(runs.length, 1, 'a list is not run through the broker');
  } finally {
    await f.close();
  }
});

d('should hand a retry to the broker before the pool: the parked call it resumes holds its own session', async () => {
  const broker = new MrtrBroker({ collectMs: 0 });
  const f = fixture({ inputs: broker, requestTimeoutMs: 4_000 });
  const caps = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
  try {
    const first = resultOf(await f.serve(modernRequest('tools/call', { name: 'ask_name' }, caps)));
    assert.is(first.resultType, 'input_required');
    assert.is(broker.parked, 1);
    const [key] = Object.keys(first.inputRequests);
    const taken: string[] = [];
    const tryAcquire = f.pool.tryAcquire.bind(f.pool);
    const acquire = f.pool.acquire.bind(f.pool);
    f.pool.tryAcquire = ((...args: Parameters<SessionPool['tryAcquire']>) => (
      taken.push('tryAcquire'), tryAcquire(...args)
    )) as SessionPool['tryAcquire'];
    f.pool.acquire = ((...args: Parameters<SessionPool['acquire']>) => (taken.push('acquire'), acquire(...args))) as SessionPool['acquire'];
    const retry = modernRequest(
      'tools/call',
      { name: 'ask_name', requestState: first.requestState, inputResponses: { [key!]: { action: 'accept', content: { name: 'Ada' } } } },
      caps,
    );
    const done = resultOf(await f.serve(retry));
    assert.equal(done.content, [{ type: 'text', text: 'Hello, Ada!' }]);
    assert.equal(taken, [], 'the retry took nothing from the pool');
    assert.is(f.pool.sessions().length, 1, 'the call ran on the one session it was parked with');
    assert.is(f.pool.sessions()[0]!.session.pushableInFlight, 0, 'no reservation is left behind');
  } finally {
    broker.close();
    await f.close();
  }
});

d('should refuse a push made outside a call that can take input with -32601, upstream', async () => {
  const f = fixture();
  try {
    const answer = await f.serve(
      modernRequest('tools/call', { name: 'ask_name' }, { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }),
    );
    const error = errorOf(answer);
    assert.is(error.code, -32601, 'the server passed on the refusal of its elicitation');
    const replies = f.upstream.received.filter((m) => 'error' in m);
    assert.is(replies.length, 1);
    assert.is((replies[0] as { error: { code: number } }).error.code, -32601);
  } finally {
    await f.close();
  }
});

d.run();
