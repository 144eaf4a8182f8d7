import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../../fixtures/servers/pushServer.ts';
import { httpBackend, stdioBackend, type Backend } from '../../../lib/session/backend.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../../lib/transport/nodeHttp.ts';
import { modernMeta } from '../../helpers/messages.ts';
import { viaNode } from '../../helpers/viaNode.ts';
import { validateMessage } from '../../helpers/schemas.ts';
import { waitFor } from '../../helpers/everything.ts';
import { recordingUpstream, type Recorder } from '../../helpers/recordingUpstream.ts';

const URL_ = 'http://127.0.0.1:3000/mcp';
const TSX = resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');
const PUSH_STDIO = resolve(import.meta.dirname, '../../../fixtures/servers/pushServerStdio.ts');

function body(method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = {}, id: number | string = 1) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(meta) } };
}

function post(message: unknown, headers: Record<string, string> = {}, init: RequestInit = {}): Request {
  const m = message as { method?: string; params?: { name?: string; uri?: string; _meta?: Record<string, unknown> } };
  const routing: Record<string, string> = {};
  const version = m.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
  if (typeof version === 'string') routing['mcp-protocol-version'] = version;
  if (m.method) routing['mcp-method'] = m.method;
  const name = m.params?.name ?? m.params?.uri;
  if (name && ['tools/call', 'prompts/get', 'resources/read'].includes(m.method ?? '')) routing['mcp-name'] = name;
  return new Request(URL_, {
    method: 'POST',
    body: typeof message === 'string' ? message : JSON.stringify(message),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      host: '127.0.0.1:3000',
      ...routing,
      ...headers,
    },
    ...init,
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function json(response: Response | Promise<Response>): Promise<any> {
  return (await response).json();
}

async function sseMessages(response: Response): Promise<any[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => Boolean(l))
    .map((l) => JSON.parse(l.slice(6)));
}

let wrap: LegacyServerWrap;
let upstream: Recorder;
let send: (request: Request) => Promise<Response>;
let listening: RunningHttpServer | undefined;

/** Waits for the one `tools/call` upstream to be cancelled there, and checks nothing is left in flight. */
async function cancelledUpstream(): Promise<void> {
  const calls = upstream.withMethod('tools/call');
  assert.is(calls.length, 1, 'the call reached the server');
  assert.ok(await waitFor(() => upstream.withMethod('notifications/cancelled').length > 0, 2_000), 'the server was told to stop');
  const cancels = upstream.withMethod('notifications/cancelled');
  assert.equal(
    cancels.map((c) => c.params?.['requestId']),
    [(calls[0] as { id: unknown }).id],
    'once, naming that call',
  );
  const sessions = wrap.pool.sessions();
  assert.is(sessions.length, 1);
  assert.ok(await waitFor(() => sessions[0]!.session.inFlight === 0, 1_000), 'nothing left in flight upstream');
}

/** The same cases through the Web handler and through the native Node listener on a real socket. */
for (const front of ['fetch', 'node'] as const) {
  const w = suite(`wrapLegacyServer over HTTP (${front})`);
  w.before.each(async () => {
    upstream = recordingUpstream(createPushServer);
    wrap = wrapLegacyServer({ upstream: upstream.upstream });
    if (front === 'fetch') send = (request) => wrap.fetch(request);
    else {
      listening = await serveNodeHttp(wrap, { port: 0 });
      send = viaNode(listening.origin);
    }
  });
  w.after.each(async () => {
    await listening?.close();
    listening = undefined;
    await wrap.close();
  });

  w('should serve a modern tools/call with resultType and server info, schema-valid', async () => {
    const res = await send(post(body('tools/call', { name: 'echo', arguments: { text: 'hi' } })));
    assert.is(res.status, 200);
    const msg = await json(res);
    assert.equal(msg.result.content, [{ type: 'text', text: 'hi' }]);
    assert.is(msg.result.resultType, 'complete');
    assert.equal(msg.result._meta['io.modelcontextprotocol/serverInfo'], { name: 'push-server', version: '1.0.0' });
    assert.equal(validateMessage('2026-07-28', msg, { method: 'tools/call' }), []);
  });

  w('should build server/discover from the upstream initialize result', async () => {
    const msg = await json(send(post(body('server/discover'))));
    assert.equal(msg.result.supportedVersions, ['2026-07-28']);
    assert.ok(msg.result.capabilities.tools);
    assert.equal(validateMessage('2026-07-28', msg, { method: 'server/discover' }), []);
  });

  w('should answer the modern rules with the right codes and statuses', async () => {
    const cases: Array<[Request, number, number | null]> = [
      [post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }), 400, -32602],
      [post(body('tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' })), 400, -32022],
      [post(body('tools/list'), { 'mcp-method': 'prompts/list' }), 400, -32020],
      [post(body('tools/call', { name: 'echo', arguments: { text: 'x' } }), { 'mcp-name': 'other' }), 400, -32020],
      [post(body('ping')), 404, -32601],
      [post(body('logging/setLevel', { level: 'info' })), 404, -32601],
      [post(body('resources/subscribe', { uri: 'x' })), 404, -32601],
      [post(body('initialize', { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 'c', version: '1' } })), 404, -32601],
      [post('{"jsonrpc":'), 400, -32700],
      [post('['.repeat(100) + ']'.repeat(100)), 400, -32700],
      [post(body('tools/list'), { origin: 'https://evil.example' }), 403, null],
      [post(body('tools/list'), { host: 'evil.example' }), 403, null],
      [new Request(URL_, { method: 'GET', headers: { host: '127.0.0.1:3000' } }), 405, null],
      [new Request(URL_, { method: 'DELETE', headers: { host: '127.0.0.1:3000' } }), 405, null],
      [post(JSON.stringify(body('tools/call', { name: 'echo', arguments: { text: 'x'.repeat(5 * 1024 * 1024) } }))), 413, null],
    ];
    for (const [request, status, code] of cases) {
      const label = `${request.method} ${(await request.clone().text()).slice(0, 120)}`;
      const res = await send(request);
      assert.is(res.status, status, label);
      if (code !== null) assert.is((await json(res)).error.code, code);
    }
    const echoed = await json(send(post(body('tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }, 'req-7'))));
    assert.is(echoed.id, 'req-7', 'errors echo the request id');
  });

  w('should stream progress and only the logs at or above the request level, then the answer', async () => {
    const res = await send(
      post(
        body('tools/call', { name: 'work', arguments: { steps: 4 } }, { progressToken: 'tok', 'io.modelcontextprotocol/logLevel': 'info' }),
      ),
    );
    assert.is(res.headers.get('content-type'), 'text/event-stream');
    const messages = await sseMessages(res);
    const logs = messages.filter((m) => m.method === 'notifications/message').map((m) => m.params.data);
    const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => [m.params.progressToken, m.params.progress]);
    assert.equal(logs, ['step 1', 'step 3'], 'debug logs are below info');
    assert.equal(progress, [
      ['tok', 1],
      ['tok', 2],
      ['tok', 3],
      ['tok', 4],
    ]);
    assert.equal(messages.at(-1).result.content, [{ type: 'text', text: 'did 4 steps' }]);
    for (const m of messages) assert.equal(validateMessage('2026-07-28', m, { method: 'tools/call' }), []);
  });

  w('should send no logs to a request that asked for none', async () => {
    const res = await send(post(body('tools/call', { name: 'work', arguments: { steps: 2 } })));
    assert.is(res.headers.get('content-type'), 'application/json');
    assert.equal((await json(res)).result.content, [{ type: 'text', text: 'did 2 steps' }]);
  });

  w('should cancel the upstream call when the client closes the stream', async () => {
    const controller = new AbortController();
    const res = send(post(body('tools/call', { name: 'wait' }, { progressToken: 1 }), {}, { signal: controller.signal }));
    const response = await res;
    const reader = response.body!.getReader();
    assert.ok(await waitFor(() => upstream.withMethod('tools/call').length === 1, 2_000), 'the call reached the server');
    setTimeout(() => controller.abort(), 50);
    await reader.cancel();
    await cancelledUpstream();
  });

  w('should cancel the upstream call when a client waiting for a JSON answer goes away', async () => {
    const controller = new AbortController();
    const pending = send(post(body('tools/call', { name: 'wait' }), {}, { signal: controller.signal })).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      wrap.pool.sessions().some((s) => s.session.inFlight === 1),
      'the call reached the server',
    );
    controller.abort();
    await pending;
    await cancelledUpstream();
  });

  w('should serve a legacy client on the same endpoint through a legacy session', async () => {
    const init = await send(
      post({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } },
      }),
    );
    assert.is(init.status, 200);
    const session = init.headers.get('mcp-session-id');
    assert.ok(session);
    const first = (await sseMessages(init))[0];
    assert.is(first.result.serverInfo.name, 'push-server');
    const headers = { 'mcp-session-id': session!, 'mcp-protocol-version': '2025-11-25' };
    assert.is((await send(post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers))).status, 202);
    const call = await send(
      post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'legacy' } } }, headers),
    );
    const answer = (await sseMessages(call))[0];
    assert.equal(answer.result.content, [{ type: 'text', text: 'legacy' }]);
    assert.not.ok('resultType' in answer.result, 'the legacy path is not translated');
    assert.is((await send(new Request(URL_, { method: 'DELETE', headers: { host: '127.0.0.1:3000', ...headers } }))).status, 200);
  });

  w.run();
}

const crash = suite('wrapLegacyServer with a stdio upstream');
crash('should answer in-flight calls with an error when the process dies, and restart it for the next request', async () => {
  // One upstream process, so that both calls are in flight on the one that dies (the second shares
  // it once it found none free within waitMs).
  const wrapped = wrapLegacyServer({
    upstream: stdioBackend({ command: TSX, args: [PUSH_STDIO], stderr: 'ignore' }),
    sessions: { perKey: 1, waitMs: 200 },
  });
  try {
    const ok1 = await json(wrapped.fetch(post(body('tools/call', { name: 'echo', arguments: { text: 'before' } }))));
    assert.equal(ok1.result.content[0].text, 'before');
    const [waiting, crashing] = await Promise.all([
      wrapped.fetch(post(body('tools/call', { name: 'wait' }, {}, 2))).then(json),
      wrapped.fetch(post(body('tools/call', { name: 'crash' }, {}, 3))).then(json),
    ]);
    assert.is(waiting.error.code, -32603);
    assert.is(crashing.error.code, -32603);
    const ok2 = await json(wrapped.fetch(post(body('tools/call', { name: 'echo', arguments: { text: 'after' } }, {}, 4))));
    assert.equal(ok2.result.content[0].text, 'after');
  } finally {
    await wrapped.close();
  }
});
crash('should answer calls in flight when the wrap closes', async () => {
  const wrapped = wrapLegacyServer({ upstream: () => createPushServer() });
  await wrapped.fetch(post(body('tools/list')));
  const pending = wrapped.fetch(post(body('tools/call', { name: 'wait' }))).then(json);
  await new Promise((r) => setTimeout(r, 50));
  await wrapped.close();
  const answer = await pending;
  assert.is(answer.error?.code, -32603, `an error, not a hang: ${JSON.stringify(answer)}`);
  assert.match(answer.error.message, 'the upstream server was shut down');
});
crash.run();

/** A legacy HTTP "server" that refuses in the ways real ones do, on a free loopback port. */
async function refusingServer(): Promise<{ url: (path: string) => string; closedPort: number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.url === '/initialize-500' && req.method === 'POST') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      return res.end(`database is down\n${'x'.repeat(5000)}`);
    }
    // Not Streamable HTTP (405 to the POST), and a 500 to the HTTP+SSE GET.
    if (req.url === '/sse-500') {
      res.writeHead(req.method === 'POST' ? 405 : 500, { 'content-type': 'text/html' });
      return res.end(req.method === 'POST' ? '' : '<h1>upstream broke</h1>');
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const spare = createServer();
  await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
  const closedPort = (spare.address() as AddressInfo).port;
  await new Promise<void>((r) => spare.close(() => r()));
  return { url: (path) => `http://127.0.0.1:${port}${path}`, closedPort, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function discoverError(upstream: Backend): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  const wrapped = wrapLegacyServer({ upstream });
  try {
    return (await json(wrapped.fetch(post(body('server/discover'))))).error;
  } finally {
    await wrapped.close();
  }
}

const unreachable = suite('wrapLegacyServer with an upstream that cannot be reached or refuses');
unreachable("should carry an HTTP upstream's own status and a bounded excerpt of its body", async () => {
  const refusing = await refusingServer();
  try {
    const failed = await discoverError(httpBackend({ url: refusing.url('/initialize-500') }));
    assert.is(failed.code, -32603);
    assert.match(failed.message, 'the server answered HTTP 500: database is down');
    assert.is(failed.data?.['httpStatus'], 500);
    const excerpt = failed.data?.['body'] as string;
    assert.ok(excerpt.startsWith('database is down xxx'), excerpt.slice(0, 40));
    assert.ok(excerpt.length <= 301, `bounded: ${excerpt.length}`);
    const sse = await discoverError(httpBackend({ url: refusing.url('/sse-500') }));
    assert.match(sse.message, 'answered HTTP 500');
    assert.match(sse.message, '<h1>upstream broke</h1>');
    assert.equal(sse.data, { httpStatus: 500, body: '<h1>upstream broke</h1>' });
    const refused = await discoverError(httpBackend({ url: `http://127.0.0.1:${refusing.closedPort}/mcp` }));
    assert.match(refused.message, 'ECONNREFUSED');
    assert.match(String(refused.data?.['network']), `ECONNREFUSED 127.0.0.1:${refusing.closedPort}`);
  } finally {
    await refusing.close();
  }
});
unreachable("should carry a process's exit code and its last stderr lines, starting it once", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mde-exit-'));
  const starts = join(dir, 'starts');
  const script = `require('node:fs').appendFileSync(${JSON.stringify(starts)}, 's'); for (let i = 1; i <= 30; i++) console.error('line ' + i); console.error('Error: no configuration at /etc/mde'); process.exit(7)`;
  try {
    const failed = await discoverError(stdioBackend({ command: process.execPath, args: ['-e', script] }));
    assert.is(failed.code, -32603);
    assert.is(
      failed.message,
      'Internal error: the upstream server is unavailable: it exited with code 7 before it answered initialize: Error: no configuration at /etc/mde',
    );
    assert.is(failed.data?.['exitCode'], 7);
    const stderr = failed.data?.['stderr'] as string[];
    assert.is(stderr.length, 10, 'the last lines only');
    assert.is(stderr.at(-1), 'Error: no configuration at /etc/mde');
    assert.is(stderr[0], 'line 22');
    assert.is(readFileSync(starts, 'utf8'), 's', 'a process that never answered is not started again');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const gone = await discoverError(stdioBackend({ command: 'node', args: ['/mde-missing.js'] }));
  assert.match(gone.message, "exited with code 1 before it answered initialize: Error: Cannot find module '/mde-missing.js'");
});
unreachable.run();
