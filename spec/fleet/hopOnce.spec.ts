/**
 * A hop of the fleet is taken once, by the replica it was sent to, as it was sent; only replicas
 * in the fleet's directory send hops; and the directory holds only records the fleet signed. Real
 * replicas of `serve --fleet` in front of server-everything, on the machine's Redis; one replica
 * is advertised behind a recording proxy of the spec's own, which stands for whoever can see the
 * traffic between replicas.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FleetDirectory } from '../../lib/fleet/directory.ts';
import { fleetForwarding } from '../../lib/fleet/forwarding.ts';
import { FleetStateKeys } from '../../lib/fleet/fleetStateKeys.ts';
import { HopSecrets } from '../../lib/fleet/hopSecrets.ts';
import { Keyring } from '../../lib/state/keyring.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import {
  ELICITATION_ANSWER,
  ELICITATION_HEADERS,
  ELICITATION_META,
  elicitationCall,
  startReplica,
  stopReplica,
  type Replica,
} from '../helpers/fleetReplicas.ts';

/** A request as the proxy saw it. */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A proxy in front of `target()` that records what passes; while `holding`, it keeps requests and answers 502 itself. */
function recordingProxy(target: () => string): { server: Server; seen: Seen[]; holding: { on: boolean } } {
  const seen: Seen[] = [];
  const holding = { on: false };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
      if (holding.on) return void res.writeHead(502).end();
      const upstream = httpRequest(new URL(req.url ?? '/', target()), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  return { server, seen, holding };
}

/** Sends `seen` again to `origin`, with `change` made to its headers (`null` removes one) and its path. */
function sendAgain(origin: string, seen: Seen, change: { headers?: Record<string, string | null>; path?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(seen.headers))
    if (value !== undefined && !['host', 'connection', 'content-length'].includes(name))
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
  for (const [name, value] of Object.entries(change.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return fetch(`${origin}${change.path ?? seen.url}`, { method: seen.method, headers, body: seen.body });
}

/** Parks a call of server-everything's eliciting tool at `url`: the retry that answers it. */
async function park(url: string, id: number, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const parked = (await (await elicitationCall(url, id, {}, headers)).json()) as {
    result: { requestState: string; inputRequests: Record<string, unknown> };
  };
  const [key] = Object.keys(parked.result.inputRequests);
  return { requestState: parked.result.requestState, inputResponses: { [key!]: ELICITATION_ANSWER } };
}

const SERVED = 'User provided the requested information!';

const hops = suite('hops between replicas (serve --fleet, real replicas)');
let fleet: SpecFleet;
let replicas: Replica[] = [];
let proxy: ReturnType<typeof recordingProxy>;
let front: Replica;
let owner: Replica;
hops.before(async () => {
  fleet = specFleet();
  proxy = recordingProxy(() => owner.origin);
  await new Promise<void>((r) => proxy.server.listen(0, '127.0.0.1', r));
  const proxied = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
  [front, owner] = await Promise.all([startReplica(fleet), startReplica(fleet, ['--advertise', proxied])]);
  replicas = [front, owner];
});
hops.after(async () => {
  await Promise.all(replicas.map(stopReplica));
  proxy.server.close();
  await fleet.end();
});

hops('should take a hop once, on the replica it was sent to, with the path and headers it was signed with', async () => {
  const alice = { authorization: 'Bearer alice', 'x-tenant': 'alice' };
  const retry = await park(owner.url, 1, alice);
  proxy.holding.on = true;
  const kept = await elicitationCall(front.url, 2, retry, alice);
  proxy.holding.on = false;
  assert.is(kept.status, 502, 'the proxy kept the hop');
  const hop = proxy.seen.at(-1)!;
  assert.ok(hop.headers['x-mcp-dual-era-hop'], 'it is a hop of the fleet');
  const refused = async (answer: Promise<Response>, what: string) => {
    const r = await answer;
    const text = await r.text();
    assert.is(r.status, 403, `${what}: ${text}`);
    assert.not.match(text, SERVED);
  };
  await refused(sendAgain(owner.origin, hop, { path: '/mcp?elsewhere=1' }), 'another path');
  await refused(sendAgain(owner.origin, hop, { headers: { authorization: 'Bearer mallory' } }), 'another Authorization');
  await refused(sendAgain(owner.origin, hop, { headers: { authorization: null } }), 'without its Authorization');
  await refused(sendAgain(owner.origin, hop, { headers: { 'x-tenant': 'mallory' } }), 'another header it carried');
  await refused(sendAgain(front.origin, hop), 'sent to a replica it was not sent to');
  const first = await (await sendAgain(owner.origin, hop)).text();
  assert.match(first, SERVED, `as it was sent, it is served: ${first}`);
  await refused(sendAgain(owner.origin, hop), 'sent again');
});

hops('should refuse a hop signed with the fleet’s secret by a replica the directory does not list', async () => {
  const retry = await park(owner.url, 3);
  const redis = await fleet.client();
  const secrets = await HopSecrets.agree(redis, fleet.keys);
  const keys = await new FleetStateKeys(redis, fleet.keys).read();
  // Whoever read the secret from Redis runs the fleet's own forwarding as a replica nobody started.
  const intruder = fleetForwarding({
    id: 'intruder',
    keyring: new Keyring(keys),
    secrets,
    directory: new FleetDirectory(redis, fleet.keys, secrets),
  });
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/call',
    params: { name: 'trigger-elicitation-request', arguments: {}, ...retry, _meta: ELICITATION_META },
  });
  const request = new Request(front.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...ELICITATION_HEADERS },
    body,
  });
  const answer = await intruder.forward(await ownerId(redis, fleet, proxy), request, body, { call: 4 });
  const text = await answer.text();
  assert.is(answer.status, 403, text);
  assert.not.match(text, SERVED);
});

hops('should not forward to an address a record nobody in the fleet signed names', async () => {
  const reached: string[] = [];
  const elsewhere = createServer((req, res) => {
    reached.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  try {
    const redis = await fleet.client();
    const advertise = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    await redis.set(fleet.keys.replica('ghost'), JSON.stringify({ id: 'ghost', advertise, startedAt: Date.now(), ready: true }), {
      PX: 60_000,
    });
    await redis.set(
      fleet.keys.replica('phantom'),
      JSON.stringify({ id: 'phantom', advertise, startedAt: Date.now(), ready: true, signature: 'c2lnbmF0dXJl' }),
      { PX: 60_000 },
    );
    for (const replica of ['ghost', 'phantom']) {
      const answer = await fetch(front.url, {
        method: 'GET',
        headers: { accept: 'text/event-stream', 'mcp-session-id': `${replica}.${randomUUID()}` },
      });
      assert.is(answer.status, 404, `a session of ${replica}: ${await answer.text()}`);
    }
    assert.equal(reached, [], 'the address the records name got nothing');
  } finally {
    elsewhere.close();
  }
});

/** The id of the replica advertised behind the proxy, as the directory lists it. */
async function ownerId(redis: Awaited<ReturnType<SpecFleet['client']>>, fleet: SpecFleet, proxy: { server: Server }): Promise<string> {
  const secrets = await HopSecrets.agree(redis, fleet.keys);
  const port = (proxy.server.address() as AddressInfo).port;
  const record = (await new FleetDirectory(redis, fleet.keys, secrets).replicas()).find((r) => r.advertise === `http://127.0.0.1:${port}`);
  assert.ok(record, 'the owner is listed');
  return record!.id;
}

hops.run();
