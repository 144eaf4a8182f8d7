/**
 * Trace context across the eras, with the real OpenTelemetry SDK (in-memory exporter) registered in
 * this process: a pinned v2 SDK client calls server-everything (legacy, over stdio) through
 * `wrapLegacyServer` served on HTTP. The client's `traceparent` reaches the upstream request's
 * `_meta`, as the context of our upstream span; a two-round elicitation is one trace whether the
 * retry carries the caller's context or none; without an SDK, `_meta` and the HTTP header's
 * context pass through untouched.
 */
import { randomUUID } from 'node:crypto';
import { context, propagation, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { joinFleet, type Fleet } from '../../lib/fleet/fleet.ts';
import { REDIS_URL, specFleet } from '../helpers/fleetRedis.ts';
import { everythingBackend, markedProcessesGone, reapMarked, tappedParams, textOf, waitFor, type Tapped } from '../helpers/everything.ts';

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const exporter = new InMemorySpanExporter();
let provider: NodeTracerProvider | undefined;
/** server-everything behind `wrapLegacyServer` on HTTP, with every message on its pipes. */
interface Endpoint {
  readonly marker: string;
  readonly wrap: LegacyServerWrap;
  readonly http: RunningHttpServer;
  readonly tapped: Tapped[];
}

async function startEndpoint(): Promise<Endpoint> {
  const marker = randomUUID();
  const tapped: Tapped[] = [];
  const wrap = wrapLegacyServer({ upstream: everythingBackend(marker, (seen) => tapped.push(seen)) });
  return { marker, wrap, http: await serveNodeHttp(wrap, { port: 0 }), tapped };
}

async function stopEndpoint(e: Endpoint | undefined): Promise<void> {
  if (!e) return;
  await e.wrap.close();
  await e.http.close();
  if (!(await markedProcessesGone(e.marker, 5000))) reapMarked(e.marker);
}

let endpoint: Endpoint | undefined;

/** A client whose HTTP requests carry `traceparent` headers as `header(n)` says for its nth POST (none when undefined). */
async function connect(
  to: Endpoint,
  header: (n: number) => string | undefined = () => undefined,
): Promise<{ client: Client; posted: Array<Record<string, any>> }> {
  const posted: Array<Record<string, any>> = [];
  const fetchLike: FetchLike = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (typeof init?.body === 'string') {
      posted.push(JSON.parse(init.body) as Record<string, any>);
      const value = header(posted.length);
      if (value !== undefined) headers.set('traceparent', value);
    }
    return fetch(input, { ...init, headers });
  };
  const client = new Client({ name: 'traced-spec', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' },
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${to.http.origin}/mcp`), { fetch: fetchLike }), { timeout: 20_000 });
  return { client, posted };
}

function spansOf(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === name);
}

const traced = suite('trace context through wrapLegacyServer, with the OpenTelemetry SDK');

traced.before(async () => {
  provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  endpoint = await startEndpoint();
});

traced.after(async () => {
  await stopEndpoint(endpoint);
  await provider?.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

traced("should carry a caller's traceparent from _meta to the upstream request, as the context of our upstream span", async () => {
  exporter.reset();
  const { client } = await connect(endpoint!);
  try {
    const before = tappedParams(endpoint!.tapped, 'up', 'tools/call').length;
    const result = await client.callTool({
      name: 'echo',
      arguments: { message: 'traced' },
      _meta: { traceparent: CALLER, tracestate: 'vendor=1' },
    });
    assert.match(textOf(result), 'traced');
    const sent = tappedParams(endpoint!.tapped, 'up', 'tools/call').slice(before);
    assert.is(sent.length, 1);
    const upstreamMeta = sent[0]!['_meta'] as Record<string, string>;
    const [server] = spansOf('tools/call echo').filter((s) => s.kind === SpanKind.SERVER);
    const [upstream] = spansOf('tools/call echo').filter((s) => s.kind === SpanKind.CLIENT);
    assert.ok(server && upstream, 'a server span and an upstream span');
    // One trace: the caller's span → our server span → our upstream span → the server's request.
    assert.is(server.spanContext().traceId, TRACE_ID);
    assert.is(server.parentSpanContext?.spanId, CALLER_SPAN);
    assert.is(upstream.parentSpanContext?.spanId, server.spanContext().spanId);
    assert.is(upstreamMeta['traceparent'], `00-${TRACE_ID}-${upstream.spanContext().spanId}-01`);
    assert.is(upstreamMeta['tracestate'], 'vendor=1');
    // Attributes as documented (the OpenTelemetry MCP conventions, and ours).
    const a = server.attributes;
    assert.is(a['mcp.method.name'], 'tools/call');
    assert.is(a['gen_ai.tool.name'], 'echo');
    assert.is(a['gen_ai.operation.name'], 'execute_tool');
    assert.is(a['mcp.protocol.version'], '2026-07-28');
    assert.is(a['network.transport'], 'tcp');
    assert.is(a['mcp_dual_era.client.era'], 'modern');
    assert.is(a['mcp_dual_era.server.era'], 'legacy');
    assert.ok(
      ['reused', 'opened', 'waited'].includes(a['mcp_dual_era.upstream.session'] as string),
      String(a['mcp_dual_era.upstream.session']),
    );
    assert.is(a['mcp_dual_era.result_type'], 'complete');
    assert.type(a['jsonrpc.request.id'], 'string');
    assert.is(upstream.attributes['mcp_dual_era.server.era'], 'legacy');
    assert.is(upstream.status.code, SpanStatusCode.UNSET);
  } finally {
    await client.close();
  }
});

traced("should record no span for a request its caller did not sample, and pass the caller's context on as it came", async () => {
  exporter.reset();
  const { client } = await connect(endpoint!);
  try {
    const before = tappedParams(endpoint!.tapped, 'up', 'tools/call').length;
    const unsampled = `00-${TRACE_ID}-${CALLER_SPAN}-00`;
    const result = await client.callTool({ name: 'echo', arguments: { message: 'unsampled' }, _meta: { traceparent: unsampled } });
    assert.match(textOf(result), 'unsampled');
    const sent = tappedParams(endpoint!.tapped, 'up', 'tools/call').slice(before);
    assert.is(sent.length, 1);
    // The SDK's parent-based sampler follows the caller: nothing recorded, the caller's context sent on unchanged.
    assert.is((sent[0]!['_meta'] as Record<string, string>)['traceparent'], unsampled);
    assert.is(spansOf('tools/call echo').length, 0, 'no span recorded');
  } finally {
    await client.close();
  }
});

traced('should record an error answer on the span: its JSON-RPC code and an error status', async () => {
  exporter.reset();
  const { client } = await connect(endpoint!, () => CALLER);
  try {
    await client.callTool({ name: 'no-such-tool', arguments: {} }).catch(() => undefined);
    const [server] = spansOf('tools/call no-such-tool').filter((s) => s.kind === SpanKind.SERVER);
    assert.ok(server, 'a span for the failed call');
    const code = server.attributes['rpc.response.status_code'];
    // server-everything answers an unknown tool with an error result or a JSON-RPC error, by version.
    if (code !== undefined) {
      assert.is(server.status.code, SpanStatusCode.ERROR);
      assert.is(server.attributes['error.type'], code);
    } else assert.is(server.attributes['mcp_dual_era.result_type'], 'complete');
  } finally {
    await client.close();
  }
});

/** The spans of one elicitation call through two rounds, checked to form one trace. */
async function twoRounds(
  header: (n: number) => string | undefined,
): Promise<{ rounds: ReadableSpan[]; upstream: ReadableSpan; posted: Array<Record<string, any>> }> {
  exporter.reset();
  const { client, posted } = await connect(endpoint!, header);
  try {
    const text = textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
    assert.match(text, 'Ada Lovelace');
  } finally {
    await client.close();
  }
  assert.ok(
    await waitFor(() => spansOf('tools/call trigger-elicitation-request').some((s) => s.kind === SpanKind.CLIENT), 5000),
    'the upstream span ended',
  );
  const all = spansOf('tools/call trigger-elicitation-request');
  const rounds = all
    .filter((s) => s.kind === SpanKind.SERVER)
    .sort((x, y) => Number(x.attributes['mcp_dual_era.mrtr.round']) - Number(y.attributes['mcp_dual_era.mrtr.round']));
  const upstream = all.find((s) => s.kind === SpanKind.CLIENT)!;
  assert.is(rounds.length, 2, 'a span per round');
  assert.equal(
    rounds.map((s) => s.attributes['mcp_dual_era.mrtr.round']),
    [1, 2],
  );
  assert.equal(
    rounds.map((s) => s.attributes['mcp_dual_era.result_type']),
    ['input_required', 'complete'],
  );
  // The upstream call belongs to the first round, and the retry is linked to it.
  assert.is(upstream.parentSpanContext?.spanId, rounds[0]!.spanContext().spanId);
  assert.equal(
    rounds[1]!.links.map((l) => l.context.spanId),
    [rounds[0]!.spanContext().spanId],
  );
  for (const s of [...rounds, upstream]) assert.is(s.spanContext().traceId, TRACE_ID, s.name);
  return { rounds, upstream, posted };
}

traced("should keep a two-round elicitation in one trace when every request carries the caller's traceparent header", async () => {
  const { rounds, posted } = await twoRounds(() => CALLER);
  const retries = posted.filter((m) => m['params']?.['requestState'] !== undefined);
  assert.is(retries.length, 1);
  for (const s of rounds) assert.is(s.parentSpanContext?.spanId, CALLER_SPAN);
});

traced("should continue the first round's trace when the retry carries no trace context of its own", async () => {
  let callPost = 0;
  const { rounds, posted } = await twoRounds((n) => {
    // Only the first tools/call POST (after the client's discover) carries a header.
    return n > 1 && ++callPost === 1 ? CALLER : undefined;
  });
  const retry = posted.find((m) => m['params']?.['requestState'] !== undefined)!;
  assert.is(retry['params']['_meta']?.['traceparent'], undefined, 'the retry carried no trace context');
  assert.is(rounds[0]!.parentSpanContext?.spanId, CALLER_SPAN);
  // Its parent is the first round, found in the requestState.
  assert.is(rounds[1]!.parentSpanContext?.spanId, rounds[0]!.spanContext().spanId);
});

traced("should record a retry forwarded to the replica its call is parked on, in the caller's trace", async () => {
  const spec = specFleet();
  const replicas: Array<{ fleet: Fleet; wrap: LegacyServerWrap; http: RunningHttpServer }> = [];
  try {
    for (let i = 0; i < 2; i++) {
      const fleet = await joinFleet({ redis: REDIS_URL, name: spec.name });
      const w = wrapLegacyServer({ upstream: () => createPushServer(), fleet });
      const h = await serveNodeHttp(w, { port: 0 });
      await fleet.register(h.origin);
      replicas.push({ fleet, wrap: w, http: h });
    }
    exporter.reset();
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
      traceparent: CALLER,
    };
    const post = async (origin: string, body: unknown) =>
      (await (
        await fetch(`${origin}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'ask_name',
          },
          body: JSON.stringify(body),
        })
      ).json()) as Record<string, any>;
    const first = await post(a.http.origin, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_name', _meta: meta } });
    assert.is(first['result']?.resultType, 'input_required', JSON.stringify(first));
    const key = Object.keys(first['result'].inputRequests)[0]!;
    // The retry lands on the other replica, which forwards it to the owner.
    const done = await post(b.http.origin, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'ask_name',
        inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
        requestState: first['result'].requestState,
        _meta: meta,
      },
    });
    assert.is(done['result']?.content?.[0]?.text, 'Hello, Ada!', JSON.stringify(done));
    assert.ok(
      await waitFor(() => spansOf('tools/call ask_name').filter((s) => s.kind === SpanKind.SERVER).length === 3, 5000),
      'three server spans',
    );
    const servers = spansOf('tools/call ask_name').filter((s) => s.kind === SpanKind.SERVER);
    const forwarded = servers.filter((s) => s.attributes['mcp_dual_era.forwarded_to'] !== undefined);
    assert.is(forwarded.length, 1);
    assert.is(forwarded[0]!.attributes['mcp_dual_era.forwarded_to'], a.fleet.id);
    assert.equal(
      servers
        .map((s) => s.attributes['mcp_dual_era.mrtr.round'])
        .filter((r) => r !== undefined)
        .sort(),
      [1, 2],
    );
    for (const span of servers) {
      assert.is(span.spanContext().traceId, TRACE_ID);
      assert.is(span.parentSpanContext?.spanId, CALLER_SPAN);
    }
  } finally {
    for (const r of replicas) {
      await r.http.close();
      await r.wrap.close();
      await r.fleet.leave();
    }
    await spec.end();
  }
});

traced.run();

const untraced = suite('trace context through wrapLegacyServer, without an SDK');
let plain: Endpoint | undefined;

untraced.before(async () => {
  plain = await startEndpoint();
});

untraced.after(() => stopEndpoint(plain));

untraced("should pass _meta's trace context on as sent, and the HTTP header's when _meta has none", async () => {
  assert.is(trace.getTracer('x').startSpan('probe').isRecording(), false, 'no SDK is registered');
  const { client } = await connect(plain!, () => `00-${TRACE_ID}-${'1'.repeat(16)}-01`);
  try {
    await client.callTool({ name: 'echo', arguments: { message: 'one' }, _meta: { traceparent: CALLER, baggage: 'k=v' } });
    await client.callTool({ name: 'echo', arguments: { message: 'two' } });
    const sent = tappedParams(plain!.tapped, 'up', 'tools/call').map((p) => p['_meta'] as Record<string, string> | undefined);
    assert.is(sent.length, 2);
    assert.is(sent[0]?.['traceparent'], CALLER);
    assert.is(sent[0]?.['baggage'], 'k=v');
    assert.is(sent[1]?.['traceparent'], `00-${TRACE_ID}-${'1'.repeat(16)}-01`);
  } finally {
    await client.close();
  }
});

untraced.run();
