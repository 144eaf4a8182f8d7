/**
 * `wrapLegacyServer({ metrics: true })`: `GET /metrics` scraped while a load runs through the wrap
 * (modern clients over plain HTTP: echo calls, ask_name MRTR rounds, refused retries; legacy
 * sessions held open), its counts checked against what the load did, and its label values bounded
 * whatever a caller sends.
 */
import { Agent } from 'node:http';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { rawPost } from '../helpers/rawPost.ts';

const CLIENTS = 16;
const CALLS = 10;
/** Every fifth call of a client is an ask_name round (first call and retry). */
const ROUND_EVERY = 5;
const LEGACY = 3;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'metrics-spec', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/** One sample of the exposition: `name{labels} value`. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Reads the Prometheus text exposition (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m![2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m![1]!, labels, value: Number(m![3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
function sum(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

const m = suite('wrapLegacyServer metrics at /metrics');

m('should count what a load did, while it runs and after it, with bounded labels', async () => {
  const wrap = wrapLegacyServer({
    upstream: () => createPushServer(),
    metrics: true,
    sessions: { max: 128, perKey: 32, perPrincipal: 128 },
  });
  const http = await serveNodeHttp(wrap, { port: 0 });
  const url = new URL(`${http.origin}/mcp`);
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const post = (body: unknown, name: string) =>
    rawPost(agent, url, body, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });
  const scrape = async () => {
    const res = await fetch(`${http.origin}/metrics`);
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', 'text/plain');
    return parse(await res.text());
  };
  const legacy: Array<{ client: LegacyClient; transport: StreamableHTTPClientTransport }> = [];
  try {
    assert.is(wrap.metrics !== undefined, true);
    const done = { complete: 0, rounds: 0, refused: 0, wrong: [] as string[] };
    let mid: Sample[] | undefined;
    const client = async (c: number) => {
      for (let i = 0; i < CALLS; i++) {
        const id = `c${c}-${i}`;
        if (i % ROUND_EVERY === ROUND_EVERY - 1) {
          const first = await post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask_name', _meta: META } }, 'ask_name');
          const round = first.json?.result;
          if (round?.resultType !== 'input_required') {
            done.wrong.push(`${id}: ${JSON.stringify(first.json)}`);
            continue;
          }
          done.rounds++;
          // A retry with a state altered on the way: refused with -32602, the call still parked.
          const forged = await post(
            {
              jsonrpc: '2.0',
              id: `${id}-forged`,
              method: 'tools/call',
              params: { name: 'ask_name', inputResponses: {}, requestState: `${round.requestState}x`, _meta: META },
            },
            'ask_name',
          );
          if (forged.json?.error?.code !== -32602) done.wrong.push(`${id}-forged: ${JSON.stringify(forged.json)}`);
          else done.refused++;
          // Scraped in the middle of the load, with this call parked.
          if (c === 0 && mid === undefined) mid = await scrape();
          const key = Object.keys(round.inputRequests)[0]!;
          const retry = await post(
            {
              jsonrpc: '2.0',
              id: `${id}-retry`,
              method: 'tools/call',
              params: {
                name: 'ask_name',
                inputResponses: { [key]: { action: 'accept', content: { name: id } } },
                requestState: round.requestState,
                _meta: META,
              },
            },
            'ask_name',
          );
          if (retry.json?.result?.content?.[0]?.text !== `Hello, ${id}!`) done.wrong.push(`${id}-retry: ${JSON.stringify(retry.json)}`);
          else done.complete++;
        } else {
          const answer = await post(
            { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: id }, _meta: META } },
            'echo',
          );
          if (answer.json?.result?.content?.[0]?.text !== id) done.wrong.push(`${id}: ${JSON.stringify(answer.json)}`);
          else done.complete++;
        }
      }
    };
    for (let i = 0; i < LEGACY; i++) {
      const transport = new StreamableHTTPClientTransport(url);
      const c = new LegacyClient({ name: `legacy-${i}`, version: '1.0.0' });
      await c.connect(transport);
      legacy.push({ client: c, transport });
    }
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    // A method no protocol has is counted, under `other`: a caller cannot mint label values.
    for (const method of ['x/one', 'x/two'])
      await rawPost(
        agent,
        url,
        { jsonrpc: '2.0', id: method, method, params: { _meta: META } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method },
      );
    assert.equal(done.wrong, []);
    const end = await scrape();

    const calls = CLIENTS * CALLS;
    const rounds = CLIENTS * (CALLS / ROUND_EVERY);
    assert.is(done.rounds, rounds);
    assert.is(sum(end, 'mcp_dual_era_requests_total', { method: 'tools/call', outcome: 'complete' }), calls);
    assert.is(sum(end, 'mcp_dual_era_requests_total', { method: 'tools/call', outcome: 'input_required' }), rounds);
    assert.is(sum(end, 'mcp_dual_era_requests_total', { method: 'tools/call', outcome: 'error', error_type: '-32602' }), done.refused);
    assert.is(sum(end, 'mcp_dual_era_requests_total', { method: 'other' }), 2);
    assert.ok(
      end.filter((s) => s.name === 'mcp_dual_era_requests_total').every((s) => !s.labels['method']!.startsWith('x/')),
      'no label value a caller made up',
    );
    // Every request served is in the duration histogram.
    assert.is(sum(end, 'mcp_server_operation_duration_seconds_count', { mcp_method_name: 'tools/call' }), calls + rounds + done.refused);
    assert.is(
      sum(end, 'mcp_server_operation_duration_seconds_bucket', { mcp_method_name: 'tools/call', error_type: '', le: '+Inf' }),
      calls + rounds,
    );
    // What is held now: nothing parked, the sessions the wrap has, the legacy sessions still open.
    const stats = wrap.stats();
    assert.is(sum(end, 'mcp_dual_era_parked_calls'), 0);
    assert.is(sum(end, 'mcp_dual_era_upstream_sessions'), stats.sessions);
    assert.is(sum(end, 'mcp_dual_era_legacy_sessions'), LEGACY);
    assert.is(sum(end, 'mcp_dual_era_upstream_calls_in_flight'), 0);
    assert.ok(sum(end, 'mcp_dual_era_upstream_sessions_opened_total') >= stats.sessions);
    assert.ok(sum(end, 'mcp_dual_era_session_wait_seconds_count') >= 1, 'the first calls waited for sessions to open');
    // Scraped in the middle: counts that only grow, no more than the end's.
    assert.ok(mid, 'scraped while the load ran');
    const midServed = sum(mid!, 'mcp_dual_era_requests_total');
    assert.ok(midServed > 0 && midServed < sum(end, 'mcp_dual_era_requests_total'), `${midServed} served by the middle`);
    assert.ok(sum(mid!, 'mcp_dual_era_parked_calls') >= 1, 'the scrape saw the call parked');
    assert.ok(sum(mid!, 'mcp_dual_era_requests_in_progress') >= 0);
  } finally {
    for (const { client, transport } of legacy) {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
    agent.destroy();
    await http.close();
    await wrap.close();
  }
});

m('should answer /metrics only when asked for', async () => {
  const wrap = wrapLegacyServer({ upstream: () => createPushServer() });
  const http = await serveNodeHttp(wrap, { port: 0 });
  try {
    assert.is(wrap.metrics, undefined);
    const res = await fetch(`${http.origin}/metrics`);
    assert.is(res.status, 404);
    await res.body?.cancel();
  } finally {
    await http.close();
    await wrap.close();
  }
});

m.run();
