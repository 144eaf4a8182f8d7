/**
 * Load through a fleet: clients of both eras through a real nginx (round robin) in front of three
 * replicas of `serve --fleet`, all in front of one legacy HTTP server (the v1 SDK's sessionful
 * transport). Modern clients speak the 2026-07-28 wire (plain calls, and elicitation and sampling
 * rounds whose retries land wherever nginx sends them); legacy clients are SDK 1.32.2 clients with
 * sessions, answering the server's own requests. Every answer is checked against its own request:
 * a lost, duplicated or mis-routed answer is a wrong one.
 *
 * A fault may strike in the middle: `kill` (SIGKILL one replica) or `rolling` (SIGTERM each replica
 * in turn and start it again on its port). Clients then do what the protocol tells them: a call
 * whose owner is gone (`owner-gone`) is sent again without requestState, a legacy session whose
 * replica is gone (404) is initialized again, a call the balancer could not deliver (502) is sent
 * again. The report counts each, and how long each owner-gone answer took.
 */
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Agent } from 'node:http';
import { startLegacyHttp } from '../../fixtures/servers/legacyHttp.ts';
import { specFleet } from '../helpers/fleetRedis.ts';
import { startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { freePort, startNginx } from '../helpers/nginx.ts';
import { rawPost, type Posted } from '../helpers/rawPost.ts';

export interface FleetLoadOptions {
  readonly clients: number;
  readonly callsPerClient: number;
  readonly fault?: 'kill' | 'rolling';
  /** A pause between two calls of a client (default none), so the load outlasts a slow fault. */
  readonly paceMs?: number;
}

export interface FleetLoadReport {
  readonly calls: number;
  /** Calls answered right (each call counts once, however many times it was sent). */
  readonly answered: number;
  readonly rounds: number;
  readonly wrong: string[];
  /** Retries whose call's owner was gone, and the longest time such an answer took (ms). */
  readonly ownerGone: number;
  readonly ownerGoneMaxMs: number;
  /** Legacy sessions initialized again because their replica was gone. */
  readonly reinitialized: number;
  /** Requests the balancer answered 502 or 503 (sent again by the client). */
  readonly resent: number;
  /** What those requests got, by status (and error, for a legacy client). */
  readonly resentFor: Readonly<Record<string, number>>;
  /** Retries forwarded to their owner, summed over the replicas alive at the end. */
  readonly forwarded: number;
  /** What the replicas alive at the end still hold. */
  readonly left: { parked: number; inFlight: number; legacySessions: number };
  readonly seconds: number;
  /** When the fault was over (s from the start), and how many calls were answered by then. */
  readonly faultOver?: { readonly at: number; readonly answered: number; readonly steps: readonly string[] };
}

const CAPS = { elicitation: { form: {} }, sampling: {} };
const MAX_ATTEMPTS = 6;
/**
 * How long a legacy client waits for an answer (the v1 SDK's default is 60 s): a call whose
 * stream went through a replica that was killed is never answered (nginx had begun passing it on).
 */
const LEGACY_TIMEOUT_MS = 15_000;

function meta(client: number): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: `modern-${client}`, version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': CAPS,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the load, with its fault, and reports. */
export async function runFleetLoad(options: FleetLoadOptions): Promise<FleetLoadReport> {
  const fleet = specFleet();
  const upstream = await startLegacyHttp();
  const ports = await Promise.all([freePort(), freePort(), freePort()]);
  const extra = (port: number) => [
    '--upstream',
    upstream.url,
    '--port',
    String(port),
    '--limit',
    'legacy-sessions=128',
    '--limit',
    'park-timeout-ms=10000',
  ];
  const replicas: Replica[] = await Promise.all(ports.map((p) => startReplica(fleet, extra(p), [])));
  const nginx = await startNginx(ports.map((p) => `127.0.0.1:${p}`));
  const url = new URL(`${nginx.url}/mcp`);
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  const wrong: string[] = [];
  const total = options.clients * options.callsPerClient;
  let answered = 0;
  let rounds = 0;
  let ownerGone = 0;
  let ownerGoneMaxMs = 0;
  let reinitialized = 0;
  let resent = 0;
  const resentFor: Record<string, number> = {};
  const resend = (why: string) => {
    resent++;
    resentFor[why] = (resentFor[why] ?? 0) + 1;
  };
  const started = performance.now();
  const steps: string[] = [];
  const step = (what: string) => steps.push(`${what} at ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const post = (body: unknown, headers: Record<string, string>): Promise<Posted> => rawPost(agent, url, body, headers);

  const headersFor = (client: number, name: string) => ({
    authorization: `Bearer modern-${client}`,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': name,
  });
  /** A request the balancer could not deliver, or a replica refused while it drained: sent again. */
  const undelivered = (p: Posted) => p.status === 0 || p.status === 502 || p.status === 503 || p.json === undefined;

  const modernCall = async (c: number, id: string, pushing: 'ask_name' | 'sample' | undefined): Promise<void> => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (!pushing) {
        const answer = await post(
          { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: id }, _meta: meta(c) } },
          headersFor(c, 'echo'),
        );
        if (undelivered(answer)) {
          resend(`${answer.status} ${JSON.stringify(answer.json?.error?.message ?? '').slice(0, 80)}`);
          await sleep(50);
          continue;
        }
        if (answer.json?.id !== id || answer.json?.result?.content?.[0]?.text !== id)
          wrong.push(`${id}: ${JSON.stringify(answer.json).slice(0, 300)}`);
        else answered++;
        return;
      }
      const first = await post(
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: pushing, arguments: {}, _meta: meta(c) } },
        headersFor(c, pushing),
      );
      if (undelivered(first)) {
        resend(`${first.status} ${JSON.stringify(first.json?.error?.message ?? '').slice(0, 80)}`);
        await sleep(50);
        continue;
      }
      const round = first.json?.result;
      if (first.json?.id !== id || round?.resultType !== 'input_required') {
        wrong.push(`${id}: expected input_required, got ${first.status} ${JSON.stringify(first.json).slice(0, 300)}`);
        return;
      }
      const key = Object.keys(round.inputRequests)[0]!;
      const response =
        pushing === 'ask_name'
          ? { action: 'accept', content: { name: id } }
          : { role: 'assistant', model: 'm', content: { type: 'text', text: id } };
      const retryId = `${id}-retry${attempt}`;
      const sent = performance.now();
      const done = await post(
        {
          jsonrpc: '2.0',
          id: retryId,
          method: 'tools/call',
          params: { name: pushing, arguments: {}, inputResponses: { [key]: response }, requestState: round.requestState, _meta: meta(c) },
        },
        headersFor(c, pushing),
      );
      if (done.json?.error?.data?.reason === 'owner-gone') {
        // The protocol's answer: the call again, from the start, without requestState.
        ownerGone++;
        step(`owner-gone ${done.json?.error?.data?.owner} for ${id} (first round ${first.status})`);
        ownerGoneMaxMs = Math.max(ownerGoneMaxMs, performance.now() - sent);
        if (done.json.error.data.retryWithoutRequestState !== true || done.json.id !== retryId)
          wrong.push(`${retryId}: ${JSON.stringify(done.json)}`);
        continue;
      }
      if (undelivered(done)) {
        // The retry was not delivered: the parked call may still be there, but not for a client
        // that cannot know; start again.
        resend(`${done.status} ${JSON.stringify(done.json?.error?.message ?? '').slice(0, 80)}`);
        await sleep(50);
        continue;
      }
      const text = done.json?.result?.content?.[0]?.text;
      const expected = pushing === 'ask_name' ? `Hello, ${id}!` : `model said ${id}`;
      if (done.json?.id !== retryId || text !== expected)
        wrong.push(`${retryId}: ${done.status} ${JSON.stringify(done.json).slice(0, 300)}`);
      else {
        answered++;
        rounds++;
      }
      return;
    }
    wrong.push(`${id}: not answered after ${MAX_ATTEMPTS} attempts`);
  };

  const modern = async (c: number) => {
    for (let i = 0; i < options.callsPerClient; i++) {
      if (i > 0 && options.paceMs) await sleep(options.paceMs);
      await modernCall(c, `m${c}-${i}`, i % 4 === 1 ? 'ask_name' : i % 4 === 3 ? 'sample' : undefined);
    }
  };

  const legacy = async (c: number) => {
    let current = '';
    let asked = 0;
    const connect = async () => {
      const client = new LegacyClient({ name: `legacy-${c}`, version: '1.0.0' }, { capabilities: { elicitation: {}, sampling: {} } });
      client.setRequestHandler(ElicitRequestSchema, async () => (asked++, { action: 'accept', content: { name: current } }));
      client.setRequestHandler(
        CreateMessageRequestSchema,
        async () => (asked++, { role: 'assistant', model: 'm', content: { type: 'text', text: current } }),
      );
      const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer legacy-${c}` } } });
      await client.connect(transport);
      return { client, transport };
    };
    const connected = async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await connect();
        } catch (e) {
          // A replica that could not take it (draining with no other ready yet, or going): again.
          if (attempt >= MAX_ATTEMPTS) throw e;
          resend(
            `legacy initialize: ${(e as { code?: unknown }).code ?? ''} ${(e instanceof Error ? e.message : String(e)).slice(0, 160)}`,
          );
          await sleep(100);
        }
      }
    };
    let session = await connected();
    try {
      for (let i = 0; i < options.callsPerClient; i++) {
        if (i > 0 && options.paceMs) await sleep(options.paceMs);
        const id = `l${c}-${i}`;
        const tool = i % 4 === 1 ? 'ask_name' : i % 4 === 3 ? 'sample' : 'echo';
        const expected = tool === 'ask_name' ? `Hello, ${id}!` : tool === 'sample' ? `model said ${id}` : id;
        current = id;
        for (let attempt = 0; ; attempt++) {
          const askedBefore = asked;
          try {
            const result = await session.client.callTool({ name: tool, arguments: tool === 'echo' ? { text: id } : {} }, undefined, {
              timeout: LEGACY_TIMEOUT_MS,
            });
            const text = (result.content as Array<{ text?: string }>)[0]?.text;
            if (text !== expected) wrong.push(`${id}: ${text}`);
            else if (tool !== 'echo' && asked !== askedBefore + 1) wrong.push(`${id}: the client was asked ${asked - askedBefore} times`);
            else answered++;
            if (tool !== 'echo') rounds++;
            break;
          } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            if (attempt >= MAX_ATTEMPTS) {
              wrong.push(`${id}: ${message}`);
              break;
            }
            // Its replica is gone (404: initialize again, as the spec says) or the balancer could
            // not deliver (502/503): a new session, and the call again.
            if (/404|Session not found/.test(message)) reinitialized++;
            else resend(`legacy ${tool}: ${message.slice(0, 100)}`);
            await session.transport.terminateSession().catch(() => {});
            await session.client.close().catch(() => {});
            await sleep(50);
            session = await connected();
          }
        }
      }
    } finally {
      await session.transport.terminateSession().catch(() => {});
      await session.client.close();
    }
  };

  const progress = () => answered + wrong.length;
  let faultOver: FleetLoadReport['faultOver'];
  const fault = (async () => {
    if (!options.fault) return;
    while (progress() < total * (options.fault === 'kill' ? 0.35 : 0.05)) await sleep(20);
    if (options.fault === 'kill') {
      const victim = replicas[0]!;
      victim.child.kill('SIGKILL');
      await new Promise((r) => victim.child.once('exit', r));
      return;
    }
    for (let i = 0; i < replicas.length; i++) {
      const old = replicas[i]!;
      const exited = new Promise((r) => old.child.once('exit', r));
      step(`SIGTERM ${i} (${/this replica is (\S+);/.exec(old.log())?.[1]})`);
      old.child.kill('SIGTERM');
      await exited;
      step(`exited ${i}`);
      if (process.env['FLEET_LOAD_LOGS']) console.error(`--- replica ${i} ---\n${old.log()}`);
      replicas[i] = await startReplica(fleet, extra(ports[i]!), []);
      step(`serving ${i}`);
    }
  })().then(() => {
    if (options.fault) faultOver = { at: (performance.now() - started) / 1000, answered, steps };
  });

  const deadline = sleep(240_000).then(() => 'deadline' as const);
  try {
    const clients = Promise.all(
      Array.from({ length: options.clients }, (_, c) =>
        (c % 2 === 0 ? modern(c) : legacy(c)).catch(
          (e: unknown) => void wrong.push(`client ${c}: ${e instanceof Error ? e.stack : String(e)}`),
        ),
      ),
    );
    if ((await Promise.race([clients.then(() => 'done' as const), deadline])) === 'deadline')
      wrong.push('the load did not finish within 240 s');
    await fault;
    const seconds = (performance.now() - started) / 1000;
    await sleep(100);
    const alive = replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
    let forwarded = 0;
    const left = { parked: 0, inFlight: 0, legacySessions: 0 };
    for (const r of alive) {
      const health = (await (await fetch(`${r.origin}/healthz`)).json()) as {
        forwarded: number;
        parked: number;
        inFlight: number;
        legacySessions: number;
      };
      forwarded += health.forwarded;
      left.parked += health.parked;
      left.inFlight += health.inFlight;
      left.legacySessions += health.legacySessions;
    }
    return {
      calls: total,
      answered,
      rounds,
      wrong,
      ownerGone,
      ownerGoneMaxMs: Math.round(ownerGoneMaxMs),
      reinitialized,
      resent,
      resentFor,
      forwarded,
      left,
      seconds,
      ...(faultOver ? { faultOver } : {}),
    };
  } finally {
    agent.destroy();
    await nginx.stop();
    await Promise.all(replicas.map(stopReplica));
    await upstream.close();
    await fleet.end();
  }
}
