/**
 * Many clients of both eras at once through one wrap over HTTP: modern clients (plain HTTP, the
 * 2026-07-28 wire) calling `echo` and completing `ask_name` MRTR rounds, legacy clients (SDK v1
 * `Client`, Streamable HTTP sessions) calling `echo` and answering `ask_name`'s elicitation. Every
 * answer is checked against its own request (no lost, duplicated or mis-routed answer), then the
 * wrap must hold nothing: no parked call, no upstream call in flight, no session hold, no legacy
 * session after the clients close.
 *
 * `spec/load/mixed.spec.ts` runs a short version in `npm test`; `npm run load` the full one
 * (200 clients × 50 calls).
 */
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Agent } from 'node:http';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { MrtrBroker } from '../../lib/wrap/mrtr/suspend.ts';
import { wrapLegacyServer } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { rawPost } from '../helpers/rawPost.ts';

export interface LoadOptions {
  readonly clients: number;
  readonly callsPerClient: number;
  /** Every n-th call of a client is an `ask_name` round (default 5). */
  readonly roundEvery?: number;
}

export interface LoadReport {
  readonly calls: number;
  readonly rounds: number;
  readonly wrong: string[];
  readonly seconds: number;
  /** What the wrap still holds after every client has finished and closed. */
  readonly left: { parked: number; inFlight: number; holds: number; legacySessions: number };
}

const CAPS = { elicitation: { form: {} } };

function modernMeta(client: number): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: `modern-${client}`, version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': CAPS,
  };
}

/** Runs the load and reports what went wrong (nothing, when all is well). */
export async function runMixedLoad(options: LoadOptions): Promise<LoadReport> {
  const broker = new MrtrBroker({ parkTimeoutMs: 60_000 });
  const wrap = wrapLegacyServer({
    upstream: () => createPushServer(),
    mrtr: broker,
    sessions: { max: 512, perKey: 16, perPrincipal: 512 },
    legacySessions: { max: 64, perPrincipal: 64 },
  });
  const http = await serveNodeHttp(wrap, { port: 0 });
  const url = new URL(`${http.origin}/mcp`);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const wrong: string[] = [];
  let calls = 0;
  let rounds = 0;
  const roundEvery = options.roundEvery ?? 5;
  const started = performance.now();

  const post = (body: unknown, headers: Record<string, string>) => rawPost(agent, url, body, headers);

  const callHeaders = (name: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name });

  const modern = async (c: number) => {
    for (let i = 0; i < options.callsPerClient; i++) {
      const id = `m${c}-${i}`;
      if (i % roundEvery === roundEvery - 1) {
        const first = await post(
          { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask_name', _meta: modernMeta(c) } },
          callHeaders('ask_name'),
        );
        const round = first.json?.result;
        if (first.json?.id !== id || round?.resultType !== 'input_required') {
          wrong.push(`${id}: expected input_required, got ${JSON.stringify(first.json).slice(0, 200)}`);
          continue;
        }
        const key = Object.keys(round.inputRequests)[0]!;
        const retryId = `${id}-retry`;
        const done = await post(
          {
            jsonrpc: '2.0',
            id: retryId,
            method: 'tools/call',
            params: {
              name: 'ask_name',
              inputResponses: { [key]: { action: 'accept', content: { name: id } } },
              requestState: round.requestState,
              _meta: modernMeta(c),
            },
          },
          callHeaders('ask_name'),
        );
        const text = done.json?.result?.content?.[0]?.text;
        if (done.json?.id !== retryId || text !== `Hello, ${id}!`) wrong.push(`${retryId}: ${JSON.stringify(done.json).slice(0, 200)}`);
        rounds++;
      } else {
        const answer = await post(
          { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: id }, _meta: modernMeta(c) } },
          callHeaders('echo'),
        );
        if (answer.json?.id !== id || answer.json?.result?.content?.[0]?.text !== id || answer.json?.result?.resultType !== 'complete')
          wrong.push(`${id}: ${JSON.stringify(answer.json).slice(0, 200)}`);
      }
      calls++;
    }
  };

  const legacy = async (c: number) => {
    const client = new LegacyClient({ name: `legacy-${c}`, version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let asked = '';
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: asked } }));
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    try {
      for (let i = 0; i < options.callsPerClient; i++) {
        const id = `l${c}-${i}`;
        if (i % roundEvery === roundEvery - 1) {
          asked = id;
          const result = await client.callTool({ name: 'ask_name', arguments: {} });
          const text = (result.content as Array<{ text?: string }>)[0]?.text;
          if (text !== `Hello, ${id}!`) wrong.push(`${id}: ${text}`);
          rounds++;
        } else {
          const result = await client.callTool({ name: 'echo', arguments: { text: id } });
          const text = (result.content as Array<{ text?: string }>)[0]?.text;
          if (text !== id) wrong.push(`${id}: ${text}`);
          if ('resultType' in result) wrong.push(`${id}: a legacy client got resultType`);
        }
        calls++;
      }
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  };

  try {
    await Promise.all(
      Array.from({ length: options.clients }, (_, c) =>
        (c % 2 === 0 ? modern(c) : legacy(c)).catch(
          (e: unknown) => void wrong.push(`client ${c}: ${e instanceof Error ? e.message : String(e)}`),
        ),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 50));
    const sessions = wrap.pool.sessions();
    const left = {
      parked: broker.parked,
      inFlight: sessions.reduce((n, s) => n + s.session.inFlight, 0),
      holds: sessions.reduce((n, s) => n + s.session.holds, 0),
      legacySessions: wrap.legacySessions,
    };
    return { calls, rounds, wrong, seconds, left };
  } finally {
    agent.destroy();
    await http.close();
    await wrap.close();
  }
}
