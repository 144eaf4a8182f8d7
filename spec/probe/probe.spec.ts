/**
 * `probe` against real servers (a v2 dual-era server, server-everything, a v1 HTTP+SSE server, v1
 * servers that treat `server/discover` the ways legacy servers do) and small node:http servers for
 * the HTTP answers that must not cause a fallback (401, 403, 500, redirects, silence). Also the
 * verdict cache, the prior and the pin.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createDualEraServer } from '../../fixtures/servers/dualEraServer.ts';
import { startSseServer } from '../../fixtures/servers/sseServer.ts';
import type { ModernVersion } from '../../lib/core/era.ts';
import { AdapterError } from '../../lib/core/errors.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { createProbeEvents, probe } from '../../lib/probe/probe.ts';
import type { ProbeEvents, ProbeTarget } from '../../lib/probe/probeTypes.ts';
import { VerdictCache } from '../../lib/probe/verdictCache.ts';
import { EVERYTHING, startEverythingHttp } from '../helpers/everything.ts';
import { validateMessage } from '../helpers/schemas.ts';

const TSX = resolve(import.meta.dirname, '../../node_modules/.bin/tsx');
const FIXTURES = resolve(import.meta.dirname, '../../fixtures/servers');
const quirky = (mode: string): ProbeTarget => ({ command: TSX, args: [resolve(FIXTURES, 'quirkyStdio.ts'), mode], stderr: 'ignore' });
const dualEraStdio: ProbeTarget = { command: TSX, args: [resolve(FIXTURES, 'dualEraStdio.ts')], stderr: 'ignore' };

/** Every event of one emitter, in order, as `[type, payload]`. */
function record(): { events: ReturnType<typeof createProbeEvents>; seen: Array<[keyof ProbeEvents, any]>; types(): string[] } {
  const events = createProbeEvents();
  const seen: Array<[keyof ProbeEvents, any]> = [];
  events.on('*', (type, payload) => void seen.push([type, payload]));
  return { events, seen, types: () => seen.map(([t]) => t) };
}

interface Seen {
  readonly method: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: any;
}

/** A node:http server answering with `handler`; it records every request with its parsed body. */
async function edge(handler: (seen: Seen, res: ServerResponse) => void): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const s = { method: req.method ?? '', headers: req.headers, body };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** What a minimal legacy Streamable HTTP server answers to `initialize` and DELETE. */
function legacyAnswer(s: Seen, res: ServerResponse): boolean {
  if (s.method === 'DELETE') {
    res.writeHead(200).end();
    return true;
  }
  if (s.body?.method === 'initialize') {
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'edge-session' });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: s.body.id,
        result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'edge', version: '1.0.0' } },
      }),
    );
    return true;
  }
  return false;
}

async function rejection(work: Promise<unknown>): Promise<AdapterError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.instance(error, AdapterError);
  return error as AdapterError;
}

// ── stdio ────────────────────────────────────────────────────────────────────

const stdio = suite('probe over stdio');

stdio('should find a v2 dual-era server modern in one round trip and keep the process', async () => {
  const { events, seen, types } = record();
  const result = await probe(dualEraStdio, { cache: false, events, keepProcess: true, timeoutMs: 10_000 });
  try {
    assert.is(result.verdict.era, 'modern');
    assert.is(result.verdict.era === 'modern' && result.verdict.version, '2026-07-28');
    assert.equal(result.verdict.era === 'modern' && result.verdict.discover?.['supportedVersions'], ['2026-07-28']);
    assert.is(result.roundTrips, 1);
    assert.equal(types(), ['probe', 'verdict']);
    assert.is(seen[1]![1].source, 'probe');
    assert.ok(result.process?.pid, 'the probed process is handed over');
  } finally {
    await result.process?.close();
  }
});

stdio('should find server-everything legacy from its -32601 in one round trip, without waiting for the timeout', async () => {
  const { events, seen, types } = record();
  const started = Date.now();
  const result = await probe(
    { command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' },
    { cache: false, events, timeoutMs: 20_000 },
  );
  assert.equal(result.verdict, { era: 'legacy' });
  assert.is(result.roundTrips, 1);
  assert.ok(Date.now() - started < 10_000, 'decided by the answer, not the timeout');
  assert.equal(types(), ['probe', 'fallback', 'verdict']);
  assert.match(seen[1]![1].reason, '-32601');
  assert.is(result.process, undefined, 'without keepProcess the process is closed');
});

stdio('should know a server that ignores server/discover as legacy by its answer to initialize, not by a timer', async () => {
  const { events, seen } = record();
  const result = await probe(quirky('silent'), { cache: false, events, timeoutMs: 400, keepProcess: true });
  try {
    assert.equal(result.verdict, { era: 'legacy' });
    assert.equal(
      seen.filter(([t]) => t === 'probe').map(([, e]) => e.method),
      ['server/discover', 'initialize'],
    );
    assert.match(seen.find(([t]) => t === 'fallback')![1].reason, 'the server answered initialize, and not server/discover');
    // Its session began with the probe's initialize: it is not handed on to begin another.
    assert.is(result.process, undefined);
  } finally {
    await result.process?.close();
  }
});

stdio('should wait for a server that has not said a word yet, saying so, and take its era from its answer', async () => {
  const { events, seen } = record();
  const slowModern: ProbeTarget = {
    command: process.execPath,
    args: ['--import', 'tsx', resolve(FIXTURES, 'slowStart.mjs'), resolve(FIXTURES, 'modernStdioMain.ts')],
    env: { SLOW_START_MS: '2500' },
    stderr: 'ignore',
  };
  const result = await probe(slowModern, { cache: false, events, timeoutMs: 500 });
  assert.equal(result.verdict.era, 'modern', JSON.stringify(seen));
  const waiting = seen.filter(([t]) => t === 'waiting').map(([, e]) => e.reason as string);
  assert.ok(waiting.length >= 1, 'it said what it waits for');
  assert.match(waiting[0]!, 'the server has said nothing in');
});

stdio('should fail, not call it legacy, when the server says nothing at all within the start bound', async () => {
  const { events, seen } = record();
  const mute: ProbeTarget = { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], stderr: 'ignore' };
  const failed = await probe(mute, { cache: false, events, timeoutMs: 300, startTimeoutMs: 2000 }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failed instanceof AdapterError, `rejected: ${String(failed)}`);
  assert.match((failed as Error).message, 'the server said nothing in 2 s: it did not start');
  assert.not.ok(
    seen.some(([t]) => t === 'verdict'),
    'no verdict',
  );
});

stdio('should take a server that exits on the probe as legacy and hand over no dead process', async () => {
  const { events, seen } = record();
  const result = await probe(quirky('exit'), { cache: false, events, timeoutMs: 10_000, keepProcess: true });
  assert.equal(result.verdict, { era: 'legacy' });
  assert.is(result.process, undefined);
  assert.match(seen.find(([t]) => t === 'fallback')![1].reason, 'exited');
});

stdio('should take a -32022 that names only legacy versions as legacy', async () => {
  const { events, seen } = record();
  const result = await probe(quirky('legacy-versions'), { cache: false, events, timeoutMs: 10_000 });
  assert.equal(result.verdict, { era: 'legacy' });
  assert.is(result.roundTrips, 1);
  assert.match(seen.find(([t]) => t === 'fallback')![1].reason, '2025-06-18');
});

stdio('should retry once with the modern version a -32022 names', async () => {
  const { events, seen } = record();
  const result = await probe(quirky('modern-retry'), {
    cache: false,
    events,
    timeoutMs: 10_000,
    versions: ['2099-01-01' as ModernVersion, '2026-07-28'],
  });
  assert.is(result.verdict.era === 'modern' && result.verdict.version, '2026-07-28');
  assert.is(result.roundTrips, 2);
  assert.equal(
    seen.filter(([t]) => t === 'probe').map(([, e]) => e.version),
    ['2099-01-01', '2026-07-28'],
  );
});

stdio('should cache the verdict per command line: a second probe costs nothing', async () => {
  const cache = new VerdictCache();
  const first = record();
  await probe(quirky('plain'), { cache, events: first.events, timeoutMs: 10_000 });
  const second = record();
  const again = await probe(quirky('plain'), { cache, events: second.events, timeoutMs: 10_000, keepProcess: true });
  assert.is(again.source, 'cache');
  assert.is(again.roundTrips, 0);
  assert.is(again.process, undefined, 'nothing was spawned');
  assert.equal(second.types(), ['verdict']);
  const other = await probe(quirky('legacy-versions'), { cache, timeoutMs: 10_000 });
  assert.is(other.source, 'probe', 'another command line is probed on its own');
});

stdio.run();

// ── HTTP ─────────────────────────────────────────────────────────────────────

const http = suite('probe over HTTP');

http('should find a v2 dual-era server modern with one schema-valid modern POST', async () => {
  const handler = createMcpHandler(createDualEraServer);
  const posted: unknown[] = [];
  const server = await serveNodeHttp(
    async (request) => {
      posted.push({ headers: Object.fromEntries(request.headers), body: await request.clone().json() });
      return handler.fetch(request);
    },
    { port: 0 },
  );
  try {
    const { events, types } = record();
    const result = await probe({ url: `${server.origin}/mcp` }, { cache: false, events });
    assert.is(result.verdict.era, 'modern');
    assert.is(result.roundTrips, 1);
    assert.equal(types(), ['probe', 'verdict']);
    assert.is(posted.length, 1);
    const { headers, body } = posted[0] as { headers: Record<string, string>; body: unknown };
    assert.is(headers['mcp-protocol-version'], '2026-07-28');
    assert.is(headers['mcp-method'], 'server/discover');
    assert.equal(validateMessage('2026-07-28', body), []);
  } finally {
    await server.close();
  }
});

http(
  'should settle on legacy Streamable HTTP for server-everything from its refusal of server/discover (400, -32000 Server not initialized), with no initialize',
  async () => {
    const server = await startEverythingHttp();
    try {
      const { events, seen, types } = record();
      const result = await probe({ url: server.url }, { cache: false, events });
      assert.equal(result.verdict, { era: 'legacy', http: 'streamable' });
      assert.is(result.roundTrips, 1, 'the server/discover requests, as over stdio');
      assert.equal(types(), ['probe', 'fallback', 'verdict'], 'a JSON-RPC refusal on the POST already says Streamable HTTP: no initialize');
      assert.is(seen.at(-1)![1].roundTrips, 1, 'the verdict event says the same');
      const overStdio = await probe(
        { command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' },
        { cache: false, timeoutMs: 20_000 },
      );
      assert.is(overStdio.roundTrips, result.roundTrips, 'the same kind of server costs the same count on both transports');
      assert.match(seen[1]![1].reason, 'HTTP 400');
      assert.is(seen[0]![1].method, 'server/discover');
    } finally {
      await server.close();
    }
  },
);

http('should fall back to HTTP+SSE when Streamable HTTP is refused too', async () => {
  const server = await startSseServer();
  try {
    const { events, seen, types } = record();
    const result = await probe({ url: server.url }, { cache: false, events });
    assert.equal(result.verdict, { era: 'legacy', http: 'sse' });
    assert.equal(types(), ['probe', 'fallback', 'probe', 'fallback', 'verdict']);
    assert.equal([seen[1]![1].from, seen[1]![1].to, seen[3]![1].from, seen[3]![1].to], ['modern', 'legacy', 'streamable', 'sse']);
    assert.equal(server.requests.slice(0, 3), ['POST /sse', 'POST /sse', 'GET /sse']);
  } finally {
    await server.close();
  }
});

http('should fall back on a 400 with an empty body, and end the session it opened to find out', async () => {
  const server = await edge((s, res) => {
    if (!legacyAnswer(s, res)) res.writeHead(400).end();
  });
  try {
    const result = await probe({ url: server.url }, { cache: false });
    assert.equal(result.verdict, { era: 'legacy', http: 'streamable' });
    assert.equal(
      server.seen.map((s) => s.body?.method ?? s.method),
      ['server/discover', 'initialize', 'DELETE'],
    );
    assert.is(server.seen[2]!.headers['mcp-session-id'], 'edge-session');
    assert.equal(validateMessage('2026-07-28', server.seen[0]!.body), []);
    assert.equal(validateMessage('2025-11-25', server.seen[1]!.body), []);
  } finally {
    await server.close();
  }
});

http('should fall back on a 405 and on an unparseable body', async () => {
  for (const answer of [
    (res: ServerResponse) => res.writeHead(405).end(),
    (res: ServerResponse) => res.writeHead(400, { 'content-type': 'text/html' }).end('<h1>Bad request</h1>'),
  ]) {
    const server = await edge((s, res) => {
      if (!legacyAnswer(s, res)) answer(res);
    });
    try {
      const result = await probe({ url: server.url }, { cache: false });
      assert.equal(result.verdict, { era: 'legacy', http: 'streamable' });
    } finally {
      await server.close();
    }
  }
});

http('should never fall back on 401, 403 or 500: one request, then an error for the caller', async () => {
  for (const status of [401, 403, 500, 503]) {
    const server = await edge((_s, res) => res.writeHead(status, { 'content-type': 'application/json' }).end('{"error":"no"}'));
    try {
      const { events, types } = record();
      const error = await rejection(probe({ url: server.url }, { cache: false, events }));
      assert.match(error.message, `HTTP ${status}`);
      assert.is(server.seen.length, 1, `${status}: no second request`);
      assert.equal(types(), ['probe'], `${status}: no fallback, no verdict`);
    } finally {
      await server.close();
    }
  }
});

http('should not follow a redirect', async () => {
  const target = await edge((_s, res) => res.writeHead(200).end());
  const server = await edge((_s, res) => res.writeHead(307, { location: target.url }).end());
  try {
    const error = await rejection(probe({ url: server.url }, { cache: false }));
    assert.match(error.message, 'redirect (HTTP 307');
    assert.is(target.seen.length, 0);
  } finally {
    await server.close();
    await target.close();
  }
});

http('should report a network error and a server that never answers instead of falling back', async () => {
  const closed = await edge(() => {});
  const url = closed.url;
  await closed.close();
  assert.match((await rejection(probe({ url }, { cache: false }))).message, 'could not probe');
  const silent = await edge(() => {});
  try {
    const started = Date.now();
    const error = await rejection(probe({ url: silent.url }, { cache: false, timeoutMs: 300 }));
    assert.match(error.message, 'no answer within 300 ms');
    assert.ok(Date.now() - started < 3000);
    assert.is(silent.seen.length, 1);
  } finally {
    await silent.close();
  }
  const stalled = await edge((_s, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': keep-alive\n\n');
  });
  try {
    assert.match(
      (await rejection(probe({ url: stalled.url }, { cache: false, timeoutMs: 300 }))).message,
      'no answer within 300 ms',
      'an open stream with no answer is silence too',
    );
  } finally {
    await stalled.close();
  }
});

http('should retry once with the version a -32022 names, and take a recognised modern error as modern', async () => {
  const server = await edge((s, res) => {
    const version = s.headers['mcp-protocol-version'];
    res.writeHead(version === '2026-07-28' ? 200 : 400, { 'content-type': 'application/json' });
    if (version === '2026-07-28')
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: s.body.id,
          result: { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: {}, ttlMs: 0, cacheScope: 'public' },
        }),
      );
    else
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: s.body.id,
          error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'], requested: version } },
        }),
      );
  });
  try {
    const result = await probe({ url: server.url }, { cache: false, versions: ['2099-01-01' as ModernVersion, '2026-07-28'] });
    assert.is(result.verdict.era === 'modern' && result.verdict.version, '2026-07-28');
    assert.is(result.roundTrips, 2);
    assert.equal(
      server.seen.map((s) => s.headers['mcp-protocol-version']),
      ['2099-01-01', '2026-07-28'],
    );
  } finally {
    await server.close();
  }
  const notFound = await edge((s, res) =>
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: s.body.id, error: { code: -32601, message: 'Method not found' } })),
  );
  try {
    const result = await probe({ url: notFound.url }, { cache: false });
    assert.is(result.verdict.era, 'modern', '404 with a -32601 JSON-RPC body comes from a modern server');
    assert.is(notFound.seen.length, 1);
  } finally {
    await notFound.close();
  }
});

http.run();

// ── cache, prior, pin ────────────────────────────────────────────────────────

const known = suite('probe: cache, prior and pin');

known('should cache per endpoint for the TTL, then probe again', async () => {
  let now = 1_000;
  const cache = new VerdictCache({ now: () => now });
  const server = await edge((s, res) => {
    if (!legacyAnswer(s, res)) res.writeHead(404).end();
  });
  try {
    const first = await probe({ url: server.url }, { cache, ttlMs: 60_000 });
    assert.is(first.source, 'probe');
    const requests = server.seen.length;
    const { events, types } = record();
    const second = await probe({ url: `${server.url}?ignored=1` }, { cache, events });
    assert.equal([second.source, second.roundTrips, second.verdict], ['cache', 0, first.verdict]);
    assert.equal(types(), ['verdict']);
    assert.is(server.seen.length, requests, 'no request on a cache hit');
    const elsewhere = await probe({ url: server.url.replace('/mcp', '/other') }, { cache });
    assert.is(elsewhere.source, 'probe', 'another endpoint is probed on its own');
    now += 60_001;
    assert.is((await probe({ url: server.url }, { cache })).source, 'probe', 'an expired verdict is probed again');
    assert.is((await probe({ url: server.url }, { cache, force: true })).source, 'probe', 'force skips the cache');
  } finally {
    await server.close();
  }
});

known('should use a pin or a prior without sending anything', async () => {
  const server = await edge((_s, res) => res.writeHead(500).end());
  try {
    const { events, seen } = record();
    assert.equal(await probe({ url: server.url }, { cache: false, pin: 'legacy', events }), {
      verdict: { era: 'legacy' },
      source: 'pin',
      roundTrips: 0,
    });
    assert.equal((await probe({ url: server.url }, { cache: false, pin: 'modern' })).verdict, { era: 'modern', version: '2026-07-28' });
    const prior = await probe({ url: server.url }, { cache: false, prior: { era: 'legacy', http: 'sse' } });
    assert.equal([prior.source, prior.verdict], ['prior', { era: 'legacy', http: 'sse' }]);
    assert.is(server.seen.length, 0);
    assert.equal(seen[0], ['verdict', { target: server.url, verdict: { era: 'legacy' }, source: 'pin', roundTrips: 0 }]);
    const pinnedOverCache = new VerdictCache();
    pinnedOverCache.set(`http ${new URL(server.url).origin}/mcp`, { era: 'modern', version: '2026-07-28' }, 60_000);
    assert.is(
      (await probe({ url: server.url }, { cache: pinnedOverCache, pin: 'legacy' })).verdict.era,
      'legacy',
      'a pin wins over the cache',
    );
  } finally {
    await server.close();
  }
});

known.run();
