/**
 * Relayed legacy sessions observed, with the real OpenTelemetry SDK (in-memory exporter)
 * registered in this process: a v1 SDK client's session through `wrapLegacyServer` served on HTTP
 * to server-everything (legacy, over stdio), a legacy session on the stdio front, and a legacy
 * session through `wrapModernServer` to the v2 SDK fixture, and a legacy and a modern host through
 * `connect` to the v2 SDK fixture over HTTP. Each request the session carries gets a
 * server span and a span for the request sent on, whose context reaches the server in `_meta`,
 * continuing the caller's (from `_meta`, or the POST's `traceparent` header when `_meta` has none);
 * a cancelled request's spans end without an answer; the metrics count the relayed requests.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { context, propagation, trace, SpanKind } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { wrapModernServer } from '../../lib/wrap/modernServer/wrapModernServer.ts';
import { createMemoryPair } from '../../lib/transport/memory.ts';
import { serveStdio } from '../../lib/fronts/stdioFront.ts';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { serveModernStdio } from '../../fixtures/servers/modernStdio.ts';
import { createModernHandler } from '../../fixtures/servers/modernHttp.ts';
import { connect } from '../../lib/cli/connect.ts';
import { startModernHttp } from '../helpers/modernFixture.ts';
import { everythingBackend, markedProcessesGone, reapMarked, tappedParams, textOf, waitFor, type Tapped } from '../helpers/everything.ts';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const CALLER = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const HEADER_SPAN = '53995c3f42cd8ad8';
const HEADER_CALLER = `00-${TRACE_ID}-${HEADER_SPAN}-01`;
const LEGACY_VERSION = '2025-06-18';

// One SDK for the whole file, shut down after the last suite.
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

function spansOf(name: string, kind: SpanKind): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === name && s.kind === kind);
}

/** The one server span named `name` and the upstream span under it, once both ended. */
async function pairOf(name: string): Promise<{ server: ReadableSpan; upstream: ReadableSpan }> {
  assert.ok(
    await waitFor(() => spansOf(name, SpanKind.SERVER).length === 1 && spansOf(name, SpanKind.CLIENT).length === 1, 5000),
    `one server and one upstream span named ${name}: ${exporter
      .getFinishedSpans()
      .map((s) => `${s.name}/${s.kind}`)
      .join(', ')}`,
  );
  const [server] = spansOf(name, SpanKind.SERVER);
  const [upstream] = spansOf(name, SpanKind.CLIENT);
  assert.is(upstream!.parentSpanContext?.spanId, server!.spanContext().spanId, "the upstream span is the server span's child");
  return { server: server!, upstream: upstream! };
}

/** A pipe of newline-delimited messages: what is written to `input`, and the answers read from `output`. */
function linePipe(): {
  input: PassThrough;
  output: PassThrough;
  answers: Array<Record<string, any>>;
  send(m: unknown): void;
  answered(id: number): Promise<boolean>;
} {
  const input = new PassThrough();
  const output = new PassThrough();
  const answers: Array<Record<string, any>> = [];
  let buffer = '';
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      answers.push(JSON.parse(buffer.slice(0, nl)) as Record<string, any>);
      buffer = buffer.slice(nl + 1);
    }
  });
  return {
    input,
    output,
    answers,
    send: (m) => input.write(`${JSON.stringify(m)}\n`),
    answered: (id) => waitFor(() => answers.some((a) => a['id'] === id), 10_000),
  };
}

/** Opens a legacy session on `pipe`: `initialize` (id 1), answered, then `notifications/initialized`. */
async function initializeOn(pipe: ReturnType<typeof linePipe>): Promise<void> {
  pipe.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'lines', version: '1' } },
  });
  assert.ok(await pipe.answered(1), 'initialized');
  pipe.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

const relayed = suite('relayed legacy sessions, with the OpenTelemetry SDK');

interface Endpoint {
  readonly marker: string;
  readonly wrap: LegacyServerWrap;
  readonly http: RunningHttpServer;
  readonly tapped: Tapped[];
}
let endpoint: Endpoint | undefined;

relayed.before(async () => {
  const marker = randomUUID();
  const tapped: Tapped[] = [];
  const wrap = wrapLegacyServer({ upstream: everythingBackend(marker, (seen) => tapped.push(seen)), metrics: true });
  endpoint = { marker, wrap, http: await serveNodeHttp(wrap, { port: 0 }), tapped };
});

relayed.after(async () => {
  if (endpoint) {
    await endpoint.wrap.close();
    await endpoint.http.close();
    if (!(await markedProcessesGone(endpoint.marker, 5000))) reapMarked(endpoint.marker);
  }
});

/** A v1 SDK client in a legacy session over HTTP; `header` says the `traceparent` header of each POST (none when undefined). */
async function legacyClient(header: () => string | undefined = () => undefined): Promise<Client> {
  const client = new Client({ name: 'relayed-spec', version: '1.0.0' });
  const fetchWithHeader = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const value = header();
    if (value !== undefined && init?.method === 'POST') headers.set('traceparent', value);
    return fetch(input, { ...init, headers });
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${endpoint!.http.origin}/mcp`), { fetch: fetchWithHeader }));
  return client;
}

relayed(
  'should give each request of a legacy session a server span and an upstream span whose context reaches the server in _meta',
  async () => {
    exporter.reset();
    const client = await legacyClient();
    try {
      const before = tappedParams(endpoint!.tapped, 'up', 'tools/call').length;
      const result = await client.callTool({
        name: 'echo',
        arguments: { message: 'relayed' },
        _meta: { traceparent: CALLER, tracestate: 'vendor=2' },
      });
      assert.match(textOf(result), 'relayed');
      const { server, upstream } = await pairOf('tools/call echo');
      assert.is(server.spanContext().traceId, TRACE_ID);
      assert.is(server.parentSpanContext?.spanId, CALLER_SPAN);
      const sent = tappedParams(endpoint!.tapped, 'up', 'tools/call').slice(before);
      assert.is(sent.length, 1);
      assert.is(sent[0]!['_meta']?.['traceparent'], `00-${TRACE_ID}-${upstream.spanContext().spanId}-01`);
      assert.is(sent[0]!['_meta']?.['tracestate'], 'vendor=2');
      assert.equal(sent[0]!['arguments'], { message: 'relayed' }, 'the rest of the request relayed as it was');
      const a = server.attributes;
      assert.is(a['mcp.method.name'], 'tools/call');
      assert.is(a['gen_ai.tool.name'], 'echo');
      assert.is(a['network.transport'], 'tcp');
      assert.is(a['mcp_dual_era.client.era'], 'legacy');
      assert.is(a['mcp_dual_era.server.era'], 'legacy');
      assert.is(a['mcp_dual_era.result_type'], 'complete');
      // The session's own handshake is observed too (its own trace: the client sent no context).
      assert.is(spansOf('initialize', SpanKind.SERVER).length, 1);
    } finally {
      await client.close();
    }
  },
);

relayed("should continue the POST's traceparent header when the request's _meta has none", async () => {
  exporter.reset();
  const client = await legacyClient(() => HEADER_CALLER);
  try {
    const before = tappedParams(endpoint!.tapped, 'up', 'tools/call').length;
    await client.callTool({ name: 'echo', arguments: { message: 'by header' } });
    const { server, upstream } = await pairOf('tools/call echo');
    assert.is(server.spanContext().traceId, TRACE_ID);
    assert.is(server.parentSpanContext?.spanId, HEADER_SPAN);
    const sent = tappedParams(endpoint!.tapped, 'up', 'tools/call').slice(before);
    assert.is(sent[0]!['_meta']?.['traceparent'], `00-${TRACE_ID}-${upstream.spanContext().spanId}-01`);
  } finally {
    await client.close();
  }
});

relayed("should end a cancelled request's spans without an answer, and count what the session carried", async () => {
  exporter.reset();
  const client = await legacyClient();
  try {
    const abort = new AbortController();
    const call = client
      .callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 10 } }, undefined, { signal: abort.signal })
      .catch((e: unknown) => e);
    assert.ok(
      await waitFor(
        () => tappedParams(endpoint!.tapped, 'up', 'tools/call').some((p) => p['name'] === 'trigger-long-running-operation'),
        5000,
      ),
      'the call reached the server',
    );
    abort.abort();
    assert.instance(await call, Error);
    const { server, upstream } = await pairOf('tools/call trigger-long-running-operation');
    assert.is(server.attributes['mcp_dual_era.result_type'], 'none');
    assert.is(upstream.attributes['mcp_dual_era.result_type'], 'none');
    // The relayed requests are counted like the modern ones, by method and outcome.
    const { body } = await endpoint!.wrap.metrics!.text();
    const counted = (method: string, outcome: string) =>
      Number(
        new RegExp(
          `^mcp_dual_era_requests_total\\{[^}]*method="${method.replace('/', '\\/')}"[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`,
          'm',
        ).exec(body)?.[1] ?? 0,
      );
    assert.ok(counted('tools/call', 'complete') >= 2, body);
    assert.ok(counted('tools/call', 'none') >= 1, body);
    assert.ok(counted('initialize', 'complete') >= 3, body);
  } finally {
    await client.close();
  }
});

relayed('should observe a legacy session on the stdio front', async () => {
  exporter.reset();
  const pipe = linePipe();
  const running = serveStdio(endpoint!.wrap, { input: pipe.input, output: pipe.output, closeOnEnd: false });
  const before = tappedParams(endpoint!.tapped, 'up', 'tools/call').length;
  await initializeOn(pipe);
  pipe.send({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'echo', arguments: { message: 'piped' }, _meta: { traceparent: CALLER } },
  });
  assert.ok(await pipe.answered(2), 'answered');
  const { server, upstream } = await pairOf('tools/call echo');
  assert.is(server.attributes['network.transport'], 'pipe');
  assert.is(server.attributes['mcp_dual_era.client.era'], 'legacy');
  assert.is(server.parentSpanContext?.spanId, CALLER_SPAN);
  assert.is(
    tappedParams(endpoint!.tapped, 'up', 'tools/call').slice(before)[0]!['_meta']?.['traceparent'],
    `00-${TRACE_ID}-${upstream.spanContext().spanId}-01`,
  );
  pipe.input.end();
  await running.done;
});

relayed.run();

const bridged = suite('a legacy session through wrapModernServer, with the OpenTelemetry SDK');

bridged("should carry the span's context to the modern server in the translated request's _meta", async () => {
  exporter.reset();
  const [client, server] = createMemoryPair();
  const seen: JsonRpcMessage[] = [];
  const send = client.send.bind(client);
  client.send = (message, options) => {
    seen.push(message);
    return send(message, options);
  };
  const served = serveModernStdio(server as never);
  const wrap = wrapModernServer(client);
  const pipe = linePipe();
  const running = wrap.serveStdio({ input: pipe.input, output: pipe.output });
  try {
    await initializeOn(pipe);
    pipe.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'bridged' }, _meta: { traceparent: CALLER } },
    });
    assert.ok(await pipe.answered(2), 'answered');
    assert.is(pipe.answers.find((a) => a['id'] === 2)?.['result']?.['content']?.[0]?.['text'], 'bridged');
    const { server: span, upstream } = await pairOf('tools/call echo');
    assert.is(span.attributes['mcp_dual_era.client.era'], 'legacy');
    assert.is(span.attributes['mcp_dual_era.server.era'], 'modern');
    assert.is(span.parentSpanContext?.spanId, CALLER_SPAN);
    const call = seen.find((m): m is Extract<JsonRpcMessage, { method: string }> => 'method' in m && m.method === 'tools/call');
    assert.ok(call, 'the call reached the modern server');
    const meta = (call.params as Record<string, any>)['_meta'];
    assert.is(meta?.['traceparent'], `00-${TRACE_ID}-${upstream.spanContext().spanId}-01`);
    assert.is(meta?.['io.modelcontextprotocol/protocolVersion'], '2026-07-28', 'translated to the modern era');
  } finally {
    pipe.input.end();
    await running.done;
    await wrap.close();
    await served.close();
  }
});

bridged.run();

const connected = suite('a host through connect, with the OpenTelemetry SDK');

connected.after(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

connected(
  "should trace a legacy host's call and a modern host's call to the modern server, their context in the _meta it gets",
  async () => {
    const posted: Array<Record<string, any>> = [];
    const handler = createModernHandler();
    const server = await startModernHttp({
      fetch: async (request: Request) => {
        if (request.method === 'POST') posted.push((await request.clone().json()) as Record<string, any>);
        return handler.fetch(request);
      },
      close: () => handler.close(),
    });
    const callsSeen = () => posted.filter((m) => m['method'] === 'tools/call');
    try {
      for (const era of ['legacy', 'modern'] as const) {
        exporter.reset();
        const host = linePipe();
        const running = connect(['--quiet', server.url], { input: host.input, output: host.output });
        const meta =
          era === 'modern'
            ? {
                'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientInfo': { name: 'lines', version: '1' },
                'io.modelcontextprotocol/clientCapabilities': {},
                traceparent: CALLER,
              }
            : { traceparent: CALLER };
        if (era === 'legacy') await initializeOn(host);
        const before = callsSeen().length;
        host.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: era }, _meta: meta } });
        assert.ok(await host.answered(2), `${era}: answered`);
        assert.is(host.answers.find((a) => a['id'] === 2)?.['result']?.['content']?.[0]?.['text'], era);
        const { server: span, upstream } = await pairOf('tools/call echo');
        assert.is(span.attributes['mcp_dual_era.client.era'], era);
        assert.is(span.attributes['network.transport'], 'pipe');
        assert.is(span.parentSpanContext?.spanId, CALLER_SPAN, era);
        const sent = callsSeen().slice(before);
        assert.is(sent.length, 1, era);
        assert.is(sent[0]!['params']?.['_meta']?.['traceparent'], `00-${TRACE_ID}-${upstream.spanContext().spanId}-01`, era);
        host.input.end();
        assert.is(await running, 0);
      }
    } finally {
      await server.close();
    }
  },
);

connected.run();
