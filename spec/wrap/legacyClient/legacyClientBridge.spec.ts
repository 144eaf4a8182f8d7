/**
 * `LegacyClientBridge` driven message by message, as a legacy client would, against the real
 * modern-only fixture (v2 SDK) in process: what goes upstream (the 2026-07-28 envelope, checked
 * against the official schema), what comes back (checked against the client's legacy revision),
 * version negotiation, the discover cache, batches, input rounds that cannot complete, refusals at
 * `initialize`, and the relay to an upstream that turns out to be legacy.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { suite } from 'uvu';
import { z } from 'zod';
import * as assert from 'uvu/assert';
import { createModernHandler } from '../../../fixtures/servers/modernHttp.ts';
import { STATE } from '../../../fixtures/servers/modernServer.ts';
import { serveModernStdio } from '../../../fixtures/servers/modernStdio.ts';
import { createPushServer } from '../../../fixtures/servers/pushServer.ts';
import type { JsonRpcMessage } from '../../../lib/core/jsonrpc.ts';
import { createMemoryPair } from '../../../lib/transport/memory.ts';
import type { Transport } from '../../../lib/transport/transport.ts';
import { DiscoverCache, LegacyClientBridge, type LegacyClientBridgeOptions } from '../../../lib/wrap/legacyClient/legacyClientBridge.ts';
import { wrapLegacyClient } from '../../../lib/wrap/legacyClient/wrapLegacyClient.ts';
import { startEverythingHttp } from '../../helpers/everything.ts';
import { validateMessage, type Revision } from '../../helpers/schemas.ts';

type Msg = Record<string, any>;

/** A pipe that records what crosses it in both directions. */
class Tap implements Transport {
  onmessage?: ((message: JsonRpcMessage, extra?: unknown) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;
  readonly sent: Msg[] = [];
  readonly received: Msg[] = [];
  constructor(readonly inner: Transport) {
    inner.onmessage = (m, extra) => {
      this.received.push(m as Msg);
      this.onmessage?.(m, extra);
    };
    inner.onclose = () => this.onclose?.();
  }
  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JsonRpcMessage, options?: unknown): Promise<void> {
    this.sent.push(message as Msg);
    return this.inner.send(message, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The fixture in process on a memory pair, behind a tap. */
function modernPipe(): { tap: Tap; close(): Promise<void> } {
  const [client, server] = createMemoryPair();
  const served = serveModernStdio(server as never);
  return { tap: new Tap(client), close: () => served.close() };
}

/** A legacy client speaking raw JSON-RPC to a bridge: answers pushes with `onPush`, validates what it receives. */
class RawClient {
  readonly inbox: Msg[] = [];
  readonly pushes: Msg[] = [];
  readonly problems: string[] = [];
  #next = 1;
  readonly #waiting = new Map<unknown, (m: Msg) => void>();
  readonly #methods = new Map<unknown, string>();
  constructor(
    readonly bridge: Transport,
    readonly revision: Revision,
    readonly onPush: (push: Msg) => Msg = () => ({ result: { action: 'accept', content: { name: 'Ada' } } }),
  ) {
    bridge.onmessage = (raw) => {
      const m = raw as Msg;
      this.inbox.push(m);
      if (Array.isArray(m)) {
        for (const item of m) this.#deliver(item);
        return;
      }
      this.#deliver(m);
    };
  }
  #deliver(m: Msg): void {
    if ('method' in m && 'id' in m) {
      this.pushes.push(m);
      this.problems.push(...validateMessage(this.revision, m).map((p) => `push ${m['method']}: ${p}`));
      const answer = this.onPush(m);
      void this.bridge.send({ jsonrpc: '2.0', id: m['id'], ...answer } as never);
      return;
    }
    if ('method' in m) this.problems.push(...validateMessage(this.revision, m).map((p) => `${m['method']}: ${p}`));
    else {
      const method = this.#methods.get(m['id']);
      if (method && 'result' in m)
        this.problems.push(...validateMessage(this.revision, m, { method }).map((p) => `${method} result: ${p}`));
      this.#waiting.get(m['id'])?.(m);
    }
  }
  request(method: string, params?: Msg): Promise<Msg> {
    const id = this.#next++;
    this.#methods.set(id, method);
    const answered = new Promise<Msg>((resolve) => this.#waiting.set(id, resolve));
    void this.bridge.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) } as never);
    return answered;
  }
  notify(method: string, params?: Msg): Promise<void> {
    return this.bridge.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) } as never);
  }
  async initialize(
    version: string = this.revision,
    capabilities: Msg = { elicitation: {}, sampling: {}, roots: { listChanged: true } },
  ): Promise<Msg> {
    const answer = await this.request('initialize', {
      protocolVersion: version,
      capabilities,
      clientInfo: { name: 'raw', version: '1.0.0' },
    });
    await this.notify('notifications/initialized');
    return answer;
  }
}

function upstreamProblems(tap: Tap): string[] {
  return tap.sent.flatMap((m) => validateMessage('2026-07-28', m).map((p) => `upstream ${m['method'] ?? 'response'}: ${p}`));
}

async function withBridge(
  options: LegacyClientBridgeOptions,
  body: (bridge: LegacyClientBridge, tap: Tap) => Promise<void>,
): Promise<void> {
  const pipe = modernPipe();
  const bridge = wrapLegacyClient(pipe.tap, options);
  await bridge.start();
  try {
    await body(bridge, pipe.tap);
  } finally {
    await bridge.close();
    await pipe.close();
  }
}

// ── initialize and the envelope ─────────────────────────────────────────────

const envelope = suite('LegacyClientBridge: initialize and the envelope');

envelope('should answer initialize with the client version when supported, else the newest legacy one', async () => {
  for (const [asked, got] of [
    ['2025-03-26', '2025-03-26'],
    ['2024-11-05', '2024-11-05'],
    ['2026-07-28', '2025-11-25'],
    ['1999-01-01', '2025-11-25'],
  ] as const) {
    await withBridge({}, async (bridge) => {
      const client = new RawClient(bridge, got);
      const init = await client.initialize(asked);
      assert.is(init['result']['protocolVersion'], got, asked);
      assert.equal(init['result']['serverInfo'], { name: 'modern-fixture', version: '2.4.0' });
      assert.equal(client.problems, []);
    });
  }
});

envelope('should stamp every forwarded request with the session _meta, and swallow legacy-only notifications', async () => {
  await withBridge({}, async (bridge, tap) => {
    const client = new RawClient(bridge, '2025-11-25');
    await client.initialize();
    await client.notify('notifications/roots/list_changed');
    await client.request('logging/setLevel', { level: 'warning' });
    await client.request('tools/call', { name: 'echo', arguments: { text: 'x' }, _meta: { progressToken: 'tok' } });
    const calls = tap.sent.filter((m) => m['method'] === 'tools/call');
    assert.is(calls.length, 1);
    const meta = calls[0]!['params']['_meta'];
    assert.is(meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
    assert.equal(meta['io.modelcontextprotocol/clientInfo'], { name: 'raw', version: '1.0.0' });
    assert.equal(meta['io.modelcontextprotocol/clientCapabilities'], { elicitation: {}, sampling: {}, roots: {} });
    assert.is(meta['io.modelcontextprotocol/logLevel'], 'warning');
    assert.ok(meta['progressToken'] !== undefined, 'a progress token travels');
    const methods = tap.sent.map((m) => m['method']);
    assert.not.ok(
      methods.includes('initialize') ||
        methods.includes('notifications/initialized') ||
        methods.includes('notifications/roots/list_changed') ||
        methods.includes('logging/setLevel') ||
        methods.includes('ping'),
    );
    assert.equal(upstreamProblems(tap), []);
    assert.equal(client.problems, []);
  });
});

envelope('should refuse requests before initialize', async () => {
  await withBridge({}, async (bridge) => {
    const client = new RawClient(bridge, '2025-11-25');
    const answer = await client.request('tools/list');
    assert.is(answer['error']['code'], -32600);
  });
});

envelope('should reuse a discover result while its ttlMs lasts, across sessions sharing a cache', async () => {
  const pipe = modernPipe();
  let now = 1_000;
  const cache = new DiscoverCache();
  const upstreamBridge = () =>
    new LegacyClientBridge(wrapLegacyClient(pipe.tap).upstream, { discoverCache: cache, now: () => now, ownsUpstream: false });
  try {
    const first = upstreamBridge();
    await new RawClient(first, '2025-11-25').initialize();
    const discovered = tap(pipe.tap);
    const ttl = discovered.ttl;
    const second = upstreamBridge();
    await new RawClient(second, '2025-11-25').initialize();
    assert.is(count(pipe.tap), ttl > 0 ? 1 : 2, `ttlMs ${ttl}`);
    now += Math.max(ttl, 1) + 1;
    const third = upstreamBridge();
    await new RawClient(third, '2025-11-25').initialize();
    assert.is(count(pipe.tap), ttl > 0 ? 2 : 3);
    await Promise.all([first.close(), second.close(), third.close()]);
  } finally {
    await pipe.close();
  }
  function count(t: Tap): number {
    return t.sent.filter((m) => m['method'] === 'server/discover').length;
  }
  function tap(t: Tap): { ttl: number } {
    const discover = t.sent.find((m) => m['method'] === 'server/discover')!;
    const answer = t.received.find((m) => m['id'] === discover['id'])!;
    return { ttl: Number(answer['result']['ttlMs'] ?? 0) };
  }
});

envelope.run();

// ── calls ─────────────────────────────────────────────────────────────────

const calls = suite('LegacyClientBridge: calls and input rounds');

calls('should push an elicitation, retry with inputResponses and the requestState byte for byte', async () => {
  await withBridge({}, async (bridge, tap) => {
    const client = new RawClient(bridge, '2025-11-25');
    await client.initialize();
    const answer = await client.request('tools/call', { name: 'ask_name', arguments: {} });
    assert.is(answer['result']['content'][0]['text'], 'Hello, Ada! (state intact)');
    assert.is(client.pushes.length, 1);
    assert.is(client.pushes[0]!['method'], 'elicitation/create');
    const attempts = tap.sent.filter((m) => m['method'] === 'tools/call');
    assert.is(attempts.length, 2);
    assert.is(attempts[1]!['params']['requestState'], STATE);
    assert.equal(attempts[1]!['params']['inputResponses'], { user_name: { action: 'accept', content: { name: 'Ada' } } });
    assert.not.equal(attempts[0]!['id'], attempts[1]!['id']);
    assert.not.ok('resultType' in answer['result']);
    assert.equal(upstreamProblems(tap), []);
    assert.equal(client.problems, []);
  });
});

calls('should push a URL-mode elicitation with a synthesised elicitationId', async () => {
  await withBridge({}, async (bridge, tap) => {
    const client = new RawClient(bridge, '2025-11-25', () => ({ result: { action: 'accept' } }));
    await client.initialize('2025-11-25', { elicitation: { form: {}, url: {} } });
    const answer = await client.request('tools/call', { name: 'connect_account', arguments: {} });
    assert.is(answer['result']['content'][0]['text'], 'login accept');
    const push = client.pushes[0]!;
    assert.is(push['params']['mode'], 'url');
    assert.is(push['params']['url'], 'https://example.com/login');
    assert.type(push['params']['elicitationId'], 'string');
    const retry = tap.sent.filter((m) => m['method'] === 'tools/call')[1]!;
    assert.equal(retry['params']['inputResponses'], { login: { action: 'accept' } });
    assert.equal(client.problems, []);
    assert.equal(upstreamProblems(tap), []);
  });
});

calls('should end a tools/call with an isError result when the client lacks the capability, pushing nothing', async () => {
  await withBridge({}, async (bridge) => {
    const client = new RawClient(bridge, '2025-11-25');
    await client.initialize('2025-11-25', { sampling: {} });
    const answer = await client.request('tools/call', { name: 'ask_name', arguments: {} });
    assert.is(answer['result']['isError'], true);
    assert.match(answer['result']['content'][0]['text'], 'elicitation');
    assert.is(client.pushes.length, 0);
  });
});

calls('should end a tools/call with an isError result when the client answers the push with an error', async () => {
  await withBridge({}, async (bridge) => {
    const client = new RawClient(bridge, '2025-11-25', () => ({ error: { code: -32603, message: 'no user here' } }));
    await client.initialize();
    const answer = await client.request('tools/call', { name: 'ask_name', arguments: {} });
    assert.is(answer['result']['isError'], true);
    assert.match(answer['result']['content'][0]['text'], 'no user here');
  });
});

calls('should stop after the round cap', async () => {
  await withBridge({ maxRounds: 2 }, async (bridge) => {
    const client = new RawClient(bridge, '2025-11-25', (push) =>
      push['method'] === 'sampling/createMessage'
        ? { result: { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' } }
        : { result: { roots: [] } },
    );
    await client.initialize();
    const answer = await client.request('tools/call', { name: 'consult', arguments: {} });
    assert.is(answer['result']['isError'], true);
    assert.match(answer['result']['content'][0]['text'], '2 rounds');
  });
});

calls('should split a 2025-03-26 batch and answer it as one array, in order', async () => {
  await withBridge({}, async (bridge) => {
    const client = new RawClient(bridge, '2025-03-26');
    await client.initialize('2025-03-26', {});
    const before = client.inbox.length;
    await bridge.send([
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { text: 'one' } } },
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { jsonrpc: '2.0', id: 'b', method: 'ping' },
      { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'echo', arguments: { text: 'two' } } },
    ] as never);
    const arrived = await new Promise<Msg[]>((resolve) => {
      const poll = () => (client.inbox.length > before ? resolve(client.inbox[before] as Msg[]) : setTimeout(poll, 10));
      poll();
    });
    assert.ok(Array.isArray(arrived));
    assert.equal(
      arrived.map((m) => m['id']),
      ['a', 'b', 'c'],
    );
    assert.is(arrived[0]!['result']['content'][0]['text'], 'one');
    assert.equal(arrived[1]!['result'], {});
    assert.is(arrived[2]!['result']['content'][0]['text'], 'two');
  });
});

calls('should answer a call the upstream never finishes when its deadline passes, and cancel it upstream', async () => {
  await withBridge({ requestTimeoutMs: 200 }, async (bridge, tap) => {
    const client = new RawClient(bridge, '2025-11-25');
    await client.initialize();
    const answer = await client.request('tools/call', { name: 'wait', arguments: {} });
    assert.is(answer['error']['code'], -32603);
    assert.match(answer['error']['message'], 'within 200 ms');
    const call = tap.sent.find((m) => m['method'] === 'tools/call')!;
    assert.ok(
      tap.sent.some((m) => m['method'] === 'notifications/cancelled' && m['params']['requestId'] === call['id']),
      'cancelled upstream',
    );
  });
});

calls('should answer every request when the upstream goes away mid-call', async () => {
  const pipe = modernPipe();
  const bridge = wrapLegacyClient(pipe.tap);
  await bridge.start();
  const client = new RawClient(bridge, '2025-11-25');
  await client.initialize();
  const waiting = client.request('tools/call', { name: 'wait', arguments: {} });
  await new Promise((r) => setTimeout(r, 50));
  await pipe.tap.close();
  const answer = await waiting;
  assert.is(answer['error']['code'], -32603);
  await bridge.close();
  await pipe.close();
});

calls.run();

// ── refusals and legacy upstreams ────────────────────────────────────────────

const refusals = suite('LegacyClientBridge: refusals and legacy upstreams');

function fixedHttp(respond: () => Response): typeof fetch {
  return (async () => respond()) as typeof fetch;
}

refusals('should name the versions when the upstream shares none (-32022)', async () => {
  const bridge = wrapLegacyClient({
    url: 'http://127.0.0.1:1/mcp',
    fetch: fixedHttp(() =>
      Response.json(
        {
          jsonrpc: '2.0',
          id: 'x',
          error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2027-03-01'], requested: '2026-07-28' } },
        },
        { status: 400 },
      ),
    ),
  });
  const client = new RawClient(bridge, '2025-11-25');
  const answer = await client.initialize();
  assert.is(answer['error']['code'], -32602);
  assert.match(answer['error']['message'], '2027-03-01');
  assert.equal(answer['error']['data']['supported'], ['2027-03-01']);
  await bridge.close();
});

for (const status of [401, 403]) {
  refusals(`should say so when the upstream answers ${status}`, async () => {
    const bridge = wrapLegacyClient({
      url: 'http://127.0.0.1:1/mcp',
      fetch: fixedHttp(() => new Response('no', { status, headers: { 'www-authenticate': 'Bearer' } })),
    });
    const client = new RawClient(bridge, '2025-11-25');
    const answer = await client.initialize();
    assert.is(answer['error']['code'], -32603);
    assert.match(answer['error']['message'], `HTTP ${status}`);
    assert.is(answer['error']['data']['httpStatus'], status);
    await bridge.close();
  });
}

refusals('should send the routing headers over HTTP, Mcp-Param-* from the tool list', async () => {
  const handler = createModernHandler();
  const seen: Headers[] = [];
  const bridge = wrapLegacyClient({
    url: 'http://127.0.0.1/mcp',
    fetch: (async (url: string, init: RequestInit) => {
      const request = new Request(url, init);
      seen.push(request.headers);
      return handler.fetch(request);
    }) as typeof fetch,
  });
  try {
    const client = new RawClient(bridge, '2025-11-25');
    await client.initialize();
    await client.request('tools/list');
    const answer = await client.request('tools/call', { name: 'route', arguments: { region: 'Zürich', text: 'x' } });
    assert.is(answer['result']['content'][0]['text'], 'Zürich:x:=?base64?WsO8cmljaA==?=');
    const last = seen[seen.length - 1]!;
    assert.is(last.get('mcp-protocol-version'), '2026-07-28');
    assert.is(last.get('mcp-method'), 'tools/call');
    assert.is(last.get('mcp-name'), 'route');
    assert.is(last.get('mcp-param-region'), '=?base64?WsO8cmljaA==?=');
  } finally {
    await bridge.close();
    await handler.close();
  }
});

refusals('should ask again in the version a -32022 names, once', async () => {
  const versions: string[] = [];
  const handler = createModernHandler();
  const bridge = wrapLegacyClient({
    url: 'http://127.0.0.1/mcp',
    fetch: (async (url: string, init: RequestInit) => {
      const request = new Request(url, init);
      versions.push(request.headers.get('mcp-protocol-version') ?? '');
      if (versions.length === 1)
        return Response.json(
          {
            jsonrpc: '2.0',
            id: 'x',
            error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'], requested: '2026-07-28' } },
          },
          { status: 400 },
        );
      return handler.fetch(request);
    }) as typeof fetch,
  });
  try {
    const init = await new RawClient(bridge, '2025-11-25').initialize();
    assert.equal(init['result']['serverInfo'], { name: 'modern-fixture', version: '2.4.0' });
    assert.equal(versions.slice(0, 2), ['2026-07-28', '2026-07-28']);
  } finally {
    await bridge.close();
    await handler.close();
  }
});

refusals('should learn the tools and call again when a tool it never listed needs Mcp-Param-* headers', async () => {
  const handler = createModernHandler();
  const methods: string[] = [];
  const bridge = wrapLegacyClient({
    url: 'http://127.0.0.1/mcp',
    fetch: (async (url: string, init: RequestInit) => {
      const request = new Request(url, init);
      methods.push(`${request.headers.get('mcp-method')}${request.headers.has('mcp-param-region') ? '+param' : ''}`);
      return handler.fetch(request);
    }) as typeof fetch,
  });
  try {
    const client = new RawClient(bridge, '2025-11-25');
    await client.initialize();
    const answer = await client.request('tools/call', { name: 'route', arguments: { region: 'eu-west', text: 'x' } });
    assert.is(answer['result']['content'][0]['text'], 'eu-west:x:eu-west');
    const calls = methods.filter((m) => m.startsWith('tools/'));
    assert.equal(calls, ['tools/call', 'tools/list', 'tools/call+param']);
  } finally {
    await bridge.close();
    await handler.close();
  }
});

refusals('should relay a session unchanged to a legacy HTTP server', async () => {
  const everything = await startEverythingHttp();
  const client = new Client({ name: 'v1', version: '1.32.2' });
  try {
    await client.connect(wrapLegacyClient(everything.url) as never);
    assert.is(client.getServerVersion()?.name, 'mcp-servers/everything');
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'echo'));
    const echoed = await client.callTool({ name: 'echo', arguments: { message: 'legacy over http' } });
    assert.match(JSON.stringify(echoed), 'legacy over http');
  } finally {
    await client.close();
    await everything.close();
  }
});

refusals('should relay a session unchanged when the upstream is a legacy server', async () => {
  const [client, server] = createMemoryPair();
  await createPushServer().connect(server as never);
  const bridge = wrapLegacyClient(client);
  await bridge.start();
  let passthrough = false;
  bridge.events.on('passthrough', () => (passthrough = true));
  const raw = new RawClient(bridge, '2025-11-25');
  const init = await raw.initialize();
  assert.equal(init['result']['serverInfo'], { name: 'push-server', version: '1.0.0' });
  assert.ok(passthrough);
  const answer = await raw.request('tools/call', { name: 'echo', arguments: { text: 'legacy' } });
  assert.is(answer['result']['content'][0]['text'], 'legacy');
  const asked = await raw.request('tools/call', { name: 'ask_name', arguments: {} });
  assert.is(asked['result']['content'][0]['text'], 'Hello, Ada!');
  await bridge.close();
});

refusals(
  'should relay a session unchanged when a legacy server answers server/discover with a result that is not a DiscoverResult',
  async () => {
    // A legacy server with a handler for every method: its answer has no supportedVersions, so it proves
    // nothing modern (the same verdict as the probe's, core/verdict.ts), and initialize goes to it.
    const [client, server] = createMemoryPair();
    const legacy = createPushServer();
    legacy.server.setRequestHandler(z.object({ method: z.literal('server/discover') }).passthrough(), () => ({}));
    await legacy.connect(server as never);
    const bridge = wrapLegacyClient(client);
    await bridge.start();
    let passthrough = false;
    bridge.events.on('passthrough', () => (passthrough = true));
    const raw = new RawClient(bridge, '2025-11-25');
    const init = await raw.initialize();
    assert.equal(init['result']['serverInfo'], { name: 'push-server', version: '1.0.0' });
    assert.ok(passthrough, 'relayed as a legacy session');
    const answer = await raw.request('tools/call', { name: 'echo', arguments: { text: 'still legacy' } });
    assert.is(answer['result']['content'][0]['text'], 'still legacy');
    await bridge.close();
  },
);

refusals.run();
