/**
 * The HTTP front's edge cases found by the fuzz targets (spec/fuzz/), each through the Web handler
 * and through the Node listener on a real socket: requests that used to throw out of the
 * listener (an uncaught exception, a request left hanging), answers that must not depend on
 * the front, and the Content-Type taken by its media type.
 */
import { request as httpRequest } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { modernMeta } from '../helpers/messages.ts';

/** POSTs raw text to the Node listener with exactly these headers; the status and body (or why none came). */
function rawPost(origin: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string } | string> {
  const url = new URL(origin);
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: '/mcp',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', (e) => resolve(`error: ${e.message}`));
    req.setTimeout(3000, () => {
      req.destroy();
      resolve('no answer');
    });
    req.end(body);
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
});
const modernBody = (method: string, meta: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { _meta: modernMeta(meta) } });
const routing = (method: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method });

let wrap: LegacyServerWrap;
let listening: RunningHttpServer;
const thrown: unknown[] = [];
const trap = (e: unknown) => thrown.push(e);

const node = suite('the HTTP front over a socket');
node.before.each(async () => {
  thrown.length = 0;
  process.on('uncaughtException', trap);
  wrap = wrapLegacyServer({ upstream: () => createPushServer() });
  listening = await serveNodeHttp(wrap, { port: 0 });
});
node.after.each(async () => {
  process.off('uncaughtException', trap);
  await listening.close();
  await wrap.close();
});

node('should answer 400 to a legacy initialize whose loopback Host header is no valid authority', async () => {
  for (const host of ['localhost:abc', '[::1]:x', 'localhost:99999']) {
    const answer = await rawPost(listening.origin, INITIALIZE, { host });
    assert.type(answer, 'object', `${host}: ${String(answer)}`);
    const { status, body } = answer as { status: number; body: string };
    assert.is(status, 400, host);
    assert.is(JSON.parse(body).error.code, -32600);
  }
  assert.equal(thrown, []);
  assert.is(wrap.legacySessions, 0);
});

node('should answer -32020 to a protocol version that is an object with a toString member', async () => {
  const body = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":{"toString":0}}}}`;
  const answer = await rawPost(listening.origin, body, { host: '127.0.0.1', ...routing('tools/list') });
  assert.type(answer, 'object', String(answer));
  const { status, body: text } = answer as { status: number; body: string };
  assert.is(status, 400);
  assert.equal([JSON.parse(text).id, JSON.parse(text).error.code], [7, -32020]);
  assert.equal(thrown, []);
});

node('should answer the same as the Web handler to a body with a byte order mark', async () => {
  const body = `\ufeff${modernBody('tools/list')}`;
  const viaSocket = (await rawPost(listening.origin, body, { host: '127.0.0.1', ...routing('tools/list') })) as {
    status: number;
    body: string;
  };
  const viaFetch = await wrap.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...routing('tools/list') },
      body,
    }),
  );
  assert.is(viaSocket.status, viaFetch.status);
  assert.is(viaSocket.status, 200);
  assert.equal(JSON.parse(viaSocket.body).result.tools, ((await viaFetch.json()) as { result: { tools: unknown } }).result.tools);
});

node('should answer a removed method with 404 as JSON even when the request asked for a stream', async () => {
  for (const meta of [{ progressToken: 'p' }, { 'io.modelcontextprotocol/logLevel': 'info' }]) {
    const socket = (await rawPost(listening.origin, modernBody('ping', meta), { host: '127.0.0.1', ...routing('ping') })) as {
      status: number;
      body: string;
    };
    assert.is(socket.status, 404);
    assert.equal([JSON.parse(socket.body).id, JSON.parse(socket.body).error.code], [7, -32601]);
    const web = await wrap.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...routing('ping') },
        body: modernBody('ping', meta),
      }),
    );
    assert.is(web.status, 404);
    assert.match(web.headers.get('content-type') ?? '', /application\/json/);
  }
});

node('should take application/json by its media type only, on both fronts', async () => {
  const discover = modernBody('server/discover');
  for (const type of ['text/plain; x=application/json', 'application/jsonx', 'text/json', 'application/json-patch+json']) {
    const answer = await rawPost(listening.origin, discover, { 'content-type': type, ...routing('server/discover') });
    assert.equal(typeof answer === 'object' ? answer.status : answer, 415, `node: ${type}`);
    const web = await wrap.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': type, ...routing('server/discover') },
        body: discover,
      }),
    );
    assert.is(web.status, 415, `fetch: ${type}`);
  }
  for (const type of ['application/json', 'Application/JSON; charset=utf-8', ' application/json ;charset=UTF-8']) {
    const answer = await rawPost(listening.origin, discover, { 'content-type': type, ...routing('server/discover') });
    assert.equal(typeof answer === 'object' ? answer.status : answer, 200, `node: ${type}`);
  }
});

node.run();
