/**
 * Request ids a JavaScript number cannot hold (past 2^53, 2^80, `1e30`), echoed byte for byte by every
 * front that answers callers: the HTTP front (its Node listener and its Web handler, JSON and
 * event-stream answers, a legacy session and a batch in one) and the stdio front (modern requests
 * and the legacy session it relays), in front of the push server; and `connect`'s stdio server, for
 * a legacy host and a modern one. Each answer's raw text is read, never a decoded number. An id with
 * a fraction, or past any double (`1e400`), is refused, as before.
 */
import { request as httpRequest } from 'node:http';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { connect } from '../../lib/cli/connect.ts';
import { serveStdio } from '../../lib/fronts/stdioFront.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { waitFor } from '../helpers/everything.ts';
import { modernMeta } from '../helpers/messages.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PUSH_STDIO = resolve(ROOT, 'fixtures/servers/pushServerStdio.ts');

/** Ids as their text: past 2^53, 2^80, below -2^53, 10^30 as an exponent, and an ordinary one. */
const IDS = ['9007199254740993', '1208925819614629174706176', '-9007199254740993', '1e30', '7'];

/** Ids refused as before, with -32600 and no id: a fraction, and numbers past any double. */
const REFUSED = ['1.5', '1e400', '-1e400'];

/** `message` as JSON text with its id written as `id`, exactly. */
function withId(message: Record<string, unknown>, id: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: '@ID@', ...message }).replace('"@ID@"', id);
}

const modern = (method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
  method,
  params: { ...params, _meta: modernMeta(meta) },
});
const initialize = {
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
};

/** The JSON texts of an answer body: the body itself, or an event stream's `data:` lines. */
function messageTexts(body: string, contentType: string): string[] {
  if (!contentType.startsWith('text/event-stream')) return body === '' ? [] : [body];
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

/** The raw text of the top-level `id` of each answer (a result or an error) among `texts`, batches opened. */
function answerIds(texts: readonly string[]): string[] {
  return texts.flatMap((text) => {
    const decoded = JSON.parse(text) as unknown;
    const answers = (Array.isArray(decoded) ? decoded : [decoded]).filter((m) => 'result' in m || 'error' in m);
    if (answers.length === 0) return [];
    // Only the answers' own ids: the results here carry no member named "id".
    return [...text.matchAll(/"id":(null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g)].map((m) => m[1]!);
  });
}

/** POSTs raw text to the Node listener; the status, content type, body and session id. */
function rawPost(
  origin: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: string; session: string | undefined }> {
  const url = new URL(origin);
  return new Promise((done, fail) => {
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
        res.on('end', () =>
          done({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            body: text,
            session: res.headers['mcp-session-id'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

const routing = (method: string, name?: string): Record<string, string> => ({
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

let wrap: LegacyServerWrap;
let listening: RunningHttpServer;

const http = suite('exact ids through the HTTP front');
http.before.each(async () => {
  wrap = wrapLegacyServer({ upstream: () => createPushServer() });
  listening = await serveNodeHttp(wrap, { port: 0 });
});
http.after.each(async () => {
  await listening.close();
  await wrap.close();
});

/** POSTs through the Node listener or the Web handler. */
async function post(
  via: 'node' | 'web',
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string; body: string; session: string | undefined }> {
  if (via === 'node') return rawPost(listening.origin, body, headers);
  const res = await wrap.fetch(
    new Request(`${listening.origin}/mcp`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    }),
  );
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: await res.text(),
    session: res.headers.get('mcp-session-id') ?? undefined,
  };
}

http('should echo every id byte for byte in a JSON answer, through the Node listener and the Web handler', async () => {
  for (const via of ['node', 'web'] as const) {
    for (const id of IDS) {
      const answer = await post(via, withId(modern('tools/list'), id), routing('tools/list'));
      assert.is(answer.status, 200, `${via} ${id}: ${answer.body}`);
      assert.is(answer.type, 'application/json');
      assert.equal(answerIds(messageTexts(answer.body, answer.type)), [id], `${via}: ${answer.body.slice(0, 200)}`);
    }
  }
});

http('should echo every id byte for byte in an event-stream answer, through the Node listener and the Web handler', async () => {
  for (const via of ['node', 'web'] as const) {
    for (const id of IDS) {
      const call = modern('tools/call', { name: 'work', arguments: { steps: 2 } }, { progressToken: 'p' });
      const answer = await post(via, withId(call, id), routing('tools/call', 'work'));
      assert.is(answer.type, 'text/event-stream', `${via} ${id}: ${answer.body}`);
      const texts = messageTexts(answer.body, answer.type);
      assert.ok(texts.length > 1, 'progress before the answer');
      assert.equal(answerIds(texts), [id], `${via}: ${answer.body.slice(-300)}`);
    }
  }
});

http('should name a listen by its id byte for byte, in its acknowledgement', async () => {
  const listen = withId(modern('subscriptions/listen', { notifications: { toolsListChanged: true } }), IDS[1]!);
  const res = await wrap.fetch(
    new Request(`${listening.origin}/mcp`, {
      method: 'POST',
      body: listen,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...routing('subscriptions/listen') },
    }),
  );
  assert.is(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes('acknowledged')) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  assert.match(text, `"io.modelcontextprotocol/subscriptionId":${IDS[1]}}`);
});

http('should refuse an id with a fraction or past any double as it did, with -32600 and no id', async () => {
  for (const via of ['node', 'web'] as const) {
    for (const id of REFUSED) {
      const answer = await post(via, withId(modern('tools/list'), id), routing('tools/list'));
      assert.is(answer.status, 400, `${via} ${id}`);
      assert.equal(answerIds([answer.body]), [], answer.body);
      assert.is(JSON.parse(answer.body).error.code, -32600);
    }
  }
});

http('should echo every id byte for byte in a legacy session, its initialize, its requests and a batch of them', async () => {
  for (const id of IDS) {
    const opened = await rawPost(listening.origin, withId(initialize, id));
    assert.is(opened.status, 200, opened.body);
    assert.equal(answerIds(messageTexts(opened.body, opened.type)), [id], opened.body);
    const session = { 'mcp-session-id': opened.session!, 'mcp-protocol-version': '2025-11-25' };
    await rawPost(listening.origin, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), session);
    const listed = await rawPost(listening.origin, withId({ method: 'tools/list' }, id), session);
    assert.equal(answerIds(messageTexts(listed.body, listed.type)), [id], listed.body.slice(0, 300));
    const called = await post('web', withId({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }, id), session);
    assert.equal(answerIds(messageTexts(called.body, called.type)), [id], called.body);
  }
  const opened = await rawPost(
    listening.origin,
    withId({ ...initialize, params: { ...initialize.params, protocolVersion: '2025-03-26' } }, '1'),
  );
  const session = { 'mcp-session-id': opened.session!, 'mcp-protocol-version': '2025-03-26' };
  await rawPost(listening.origin, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), session);
  const batch = `[${withId({ method: 'tools/list' }, IDS[0]!)},${withId({ method: 'ping' }, IDS[1]!)}]`;
  const answered = await rawPost(listening.origin, batch, session);
  assert.equal(answerIds(messageTexts(answered.body, answered.type)).sort(), [IDS[0]!, IDS[1]!].sort(), answered.body);
});

http.run();

/** A stdio front on in-memory streams: send lines, read what it wrote. */
function stdioFront(target: LegacyServerWrap) {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (c: Buffer) => (written += c.toString()));
  const front = serveStdio(target, { input, output, closeOnEnd: false, graceMs: 2000 });
  const lines = () => written.split('\n').filter(Boolean);
  /** What was written, each line cut short, for a failure's message. */
  const shown = () =>
    lines()
      .map((l) => l.slice(0, 160))
      .join('\n');
  return {
    send: (line: string) => input.write(`${line}\n`),
    lines,
    shown,
    /** The ids of the answers written so far. */
    answered: () => answerIds(lines()),
    finish: () => front.finish(),
  };
}

const stdio = suite('exact ids through the stdio front');
stdio.before.each(() => {
  wrap = wrapLegacyServer({ upstream: () => createPushServer() });
});
stdio.after.each(async () => {
  await wrap.close();
});

stdio('should echo every id byte for byte to a modern client', async () => {
  const front = stdioFront(wrap);
  for (const id of IDS) front.send(withId(modern('tools/list'), id));
  assert.ok(await waitFor(() => front.answered().length === IDS.length, 5000), front.shown());
  assert.equal(front.answered().sort(), [...IDS].sort());
  for (const id of REFUSED) front.send(withId(modern('tools/list'), id));
  assert.ok(await waitFor(() => front.lines().length === IDS.length + REFUSED.length, 5000));
  for (const line of front.lines().slice(IDS.length)) {
    assert.equal(answerIds([line]), [], 'refused with no id');
    assert.is(JSON.parse(line).error.code, -32600);
  }
  await front.finish();
});

stdio('should name a listen by its id byte for byte', async () => {
  const front = stdioFront(wrap);
  front.send(withId(modern('subscriptions/listen', { notifications: { toolsListChanged: true } }), IDS[0]!));
  assert.ok(await waitFor(() => front.lines().some((l) => l.includes('acknowledged')), 5000), front.shown());
  assert.match(front.lines().find((l) => l.includes('acknowledged'))!, `"io.modelcontextprotocol/subscriptionId":${IDS[0]}}`);
  await front.finish();
});

stdio('should cancel a call the client names by its id, however long', async () => {
  const front = stdioFront(wrap);
  front.send(withId(modern('tools/call', { name: 'wait' }), IDS[1]!));
  front.send(withId(modern('tools/list'), '1'));
  assert.ok(await waitFor(() => front.answered().length === 1, 5000), front.shown());
  front.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${IDS[1]},"reason":"enough"}}`);
  // A call still in flight holds the end of input for the grace period (2 s here).
  const started = Date.now();
  await front.finish();
  assert.ok(Date.now() - started < 1500, `the call was cancelled (the end took ${Date.now() - started} ms)`);
  assert.equal(front.answered(), ['1'], 'a cancelled call gets no answer');
});

stdio('should echo every id byte for byte in the legacy session it relays', async () => {
  const front = stdioFront(wrap);
  front.send(withId(initialize, IDS[0]!));
  assert.ok(await waitFor(() => front.answered().length === 1, 5000), front.shown());
  front.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  for (const id of IDS.slice(1)) front.send(withId({ method: 'tools/list' }, id));
  assert.ok(await waitFor(() => front.answered().length === IDS.length, 5000), front.shown());
  assert.equal(front.answered().sort(), [...IDS].sort());
  await front.finish();
});

stdio.run();

/** `connect` in this process in front of the push server over stdio, with these lines from the host. */
async function connected(lines: readonly string[], answers: number): Promise<string[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (c: Buffer) => (written += c.toString()));
  const done = connect(['--quiet', '--', process.execPath, '--import', 'tsx', PUSH_STDIO], { input, output });
  for (const line of lines) input.write(`${line}\n`);
  const out = () => written.split('\n').filter(Boolean);
  const seen = await waitFor(() => answerIds(out()).length >= answers, 20_000);
  input.end();
  assert.is(await done, 0);
  assert.ok(
    seen,
    out()
      .map((l) => l.slice(0, 160))
      .join('\n'),
  );
  return answerIds(out());
}

const bridge = suite('exact ids through connect');

bridge('should echo every id byte for byte to a legacy host', async () => {
  const lines = [
    withId(initialize, IDS[0]!),
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    ...IDS.slice(1).map((id) => withId({ method: 'tools/list' }, id)),
  ];
  assert.equal((await connected(lines, IDS.length)).sort(), [...IDS].sort());
});

bridge('should echo every id byte for byte to a modern host', async () => {
  const lines = IDS.map((id) => withId(modern('tools/list'), id));
  assert.equal((await connected(lines, IDS.length)).sort(), [...IDS].sort());
});

bridge.run();
