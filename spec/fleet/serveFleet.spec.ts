/**
 * `serve --fleet` with real replicas on real Redis, in front of server-everything: replicas given
 * no key agree on one through Redis, so a replay-mode round started on one replica continues on
 * another (replay needs no forwarding), and a state is served once fleet-wide, whichever replicas
 * its copies land on. The replicas register in the directory and leave it when they stop.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FleetDirectory } from '../../lib/fleet/directory.ts';
import { HopSecrets } from '../../lib/fleet/hopSecrets.ts';
import { EVERYTHING } from '../helpers/everything.ts';
import { REDIS_URL, specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import {
  ELICITATION_ANSWER,
  ELICITATION_HEADERS,
  ELICITATION_META,
  elicitationCall,
  startReplica as start,
  stopReplica as stop,
  type Replica,
} from '../helpers/fleetReplicas.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');
const CLI = resolve(ROOT, 'lib/cli/main.ts');
const META = ELICITATION_META;
const CALL_HEADERS = ELICITATION_HEADERS;

async function call(url: string, id: number, params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<any> {
  return (await elicitationCall(url, id, params, headers)).json();
}

const ANSWER = ELICITATION_ANSWER;

const fleetSuite = suite('serve --fleet (real Redis, real replicas)');
let fleet: SpecFleet;
let replicas: Replica[] = [];
fleetSuite.before.each(() => {
  fleet = specFleet();
  replicas = [];
});
fleetSuite.after.each(async () => {
  await Promise.all(replicas.map(stop));
  await fleet.end();
});

fleetSuite('should continue a replay round on another replica, and serve its state once fleet-wide', async () => {
  replicas = await Promise.all([start(fleet, ['--mrtr', 'replay']), start(fleet, ['--mrtr', 'replay'])]);
  const [a, b] = replicas as [Replica, Replica];
  assert.match(a.log() + b.log(), "a key this replica wrote to the fleet's Redis");
  assert.match(a.log() + b.log(), 'the key the fleet agreed on');
  const first = await call(a.url, 1, {});
  assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
  const [key] = Object.keys(first.result.inputRequests);
  const retry = { requestState: first.result.requestState, inputResponses: { [key!]: ANSWER } };
  // The retry lands on the other replica, and on both at once as a replay: one is served.
  const answers = await Promise.all([call(b.url, 2, retry), call(a.url, 3, retry), call(b.url, 4, retry)]);
  const served = answers.filter((x) => x.result?.content);
  const refused = answers.filter((x) => x.error);
  assert.is(served.length, 1, JSON.stringify(answers));
  assert.match(JSON.stringify(served[0].result.content), 'User provided the requested information!');
  assert.is(refused.length, 2);
  for (const r of refused) {
    assert.is(r.error.code, -32602);
    assert.match(r.error.message, 'requestState was already used');
  }
});

fleetSuite('should forward a suspend-mode retry to the replica that parked the call, and end one whose owner is gone', async () => {
  replicas = await Promise.all([start(fleet), start(fleet), start(fleet)]);
  const [a, b, c] = replicas as [Replica, Replica, Replica];
  // Parked on A, retried on B: B forwards it to A, which resumes it.
  const first = await call(a.url, 1, {});
  assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
  const [key] = Object.keys(first.result.inputRequests);
  const done = await call(b.url, 2, { requestState: first.result.requestState, inputResponses: { [key!]: ANSWER } });
  assert.match(JSON.stringify(done.result?.content), 'User provided the requested information!', JSON.stringify(done));
  // The same state again, on C: forwarded to A, which has already resumed that round.
  const again = await call(c.url, 3, { requestState: first.result.requestState, inputResponses: { [key!]: ANSWER } });
  assert.is(again.error?.code, -32602, JSON.stringify(again));
  // Parked on A, which is then killed: the retry on B ends at once with the defined error.
  const parked = await call(a.url, 4, {});
  assert.is(parked.result?.resultType, 'input_required');
  a.child.kill('SIGKILL');
  await new Promise((r) => a.child.once('exit', r));
  const started = Date.now();
  const orphan = await call(b.url, 5, { requestState: parked.result.requestState, inputResponses: { [key!]: ANSWER } });
  assert.ok(Date.now() - started < 6000, `answered in ${Date.now() - started} ms`);
  assert.is(orphan.error?.code, -32602, JSON.stringify(orphan));
  assert.is(orphan.error?.data?.reason, 'owner-gone');
  assert.is(orphan.error?.data?.retryWithoutRequestState, true);
  // The fleet goes on: a new call on C is served from start to end on B.
  const fresh = await call(c.url, 6, {});
  const [freshKey] = Object.keys(fresh.result.inputRequests);
  const finished = await call(b.url, 7, { requestState: fresh.result.requestState, inputResponses: { [freshKey!]: ANSWER } });
  assert.match(JSON.stringify(finished.result?.content), 'User provided the requested information!');
});

fleetSuite(
  "attack: a retry whose state names another owner than the call's reaches no parked call, and the call stays parked for its caller",
  async () => {
    replicas = await Promise.all([start(fleet), start(fleet)]);
    const [a, b] = replicas as [Replica, Replica];
    const first = await call(a.url, 1, {});
    assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
    const state: string = first.result.requestState;
    // The owner is in the clear at the end of the text (what a replica routes by).
    const parts = state.split('.');
    assert.is(parts.length, 3, state);
    const [key] = Object.keys(first.result.inputRequests);
    const other = (await call(b.url, 2, {})).result.requestState.split('.')[2] as string;
    assert.is.not(other, parts[2]);
    const forged = [...parts.slice(0, 2), other].join('.');
    // Sent to A (the real owner, which passes it to B) or to B (which the forged owner names): B
    // holds no such call.
    for (const [url, id] of [
      [a.url, 3],
      [b.url, 4],
    ] as const) {
      const refused = await call(url, id, { requestState: forged, inputResponses: { [key!]: ANSWER } });
      assert.is(refused.error?.code, -32602, JSON.stringify(refused));
      assert.match(refused.error.message, 'requestState refers to a call that is no longer waiting');
    }
    // The owner taken off, sent to B: B holds no such call either. The honest retry, sent to B,
    // still reaches the parked call on A.
    const bare = await call(b.url, 5, { requestState: parts.slice(0, 2).join('.'), inputResponses: { [key!]: ANSWER } });
    assert.is(bare.error?.code, -32602, JSON.stringify(bare));
    assert.match(bare.error.message, 'requestState refers to a call that is no longer waiting');
    const done = await call(b.url, 6, { requestState: state, inputResponses: { [key!]: ANSWER } });
    assert.match(JSON.stringify(done.result?.content), 'User provided the requested information!', JSON.stringify(done));
  },
);

fleetSuite(
  'should drain on SIGTERM: unready, new calls handed to a ready replica, parked calls served to their end, then exit',
  async () => {
    replicas = await Promise.all([start(fleet), start(fleet)]);
    const [a, b] = replicas as [Replica, Replica];
    const origin = new URL(a.url).origin;
    assert.is((await fetch(`${origin}/healthz`)).status, 200);
    assert.is((await fetch(`${origin}/readyz`)).status, 200);
    const parked = await call(a.url, 1, {});
    assert.is(parked.result?.resultType, 'input_required');
    const exited = new Promise<number | null>((r) => a.child.once('exit', r));
    a.child.kill('SIGTERM');
    let ready = 200;
    for (let i = 0; i < 100 && ready === 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      ready = (await fetch(`${origin}/readyz`)).status;
    }
    assert.is(ready, 503, 'unready while it drains');
    assert.is((await fetch(`${origin}/healthz`)).status, 200, 'alive meanwhile');
    const fresh = await fetch(a.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...CALL_HEADERS },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'trigger-elicitation-request', arguments: {}, _meta: META },
      }),
    });
    // Handed to the ready replica, which parks it: its retry is B's own.
    assert.is(fresh.status, 200, 'a new call is handed to a ready replica');
    const handed = (await fresh.json()) as { result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> } };
    assert.is(handed.result.resultType, 'input_required');
    assert.is(((await (await fetch(`${origin}/healthz`)).json()) as { forwarded: number }).forwarded, 1);
    const [handedKey] = Object.keys(handed.result.inputRequests);
    const handedDone = await call(b.url, 4, { requestState: handed.result.requestState, inputResponses: { [handedKey!]: ANSWER } });
    assert.match(JSON.stringify(handedDone.result?.content), 'User provided the requested information!', JSON.stringify(handedDone));
    assert.is(
      ((await (await fetch(`${new URL(b.url).origin}/healthz`)).json()) as { forwarded: number }).forwarded,
      0,
      'B resumed its own call',
    );
    const client = await fleet.client();
    const record = (await new FleetDirectory(client, fleet.keys, await HopSecrets.agree(client, fleet.keys)).replicas()).find(
      (r) => origin === r.advertise,
    );
    assert.is(record?.ready, false, 'the directory says it drains');
    // The parked call's retry, landing on the other replica, is forwarded and served to its end.
    const [key] = Object.keys(parked.result.inputRequests);
    const done = await call(b.url, 3, { requestState: parked.result.requestState, inputResponses: { [key!]: ANSWER } });
    assert.match(JSON.stringify(done.result?.content), 'User provided the requested information!', JSON.stringify(done));
    assert.is(await exited, 0, 'then it exits');
    // Its port is closed: a balancer's request is refused before it is sent.
    assert.ok(
      await fetch(a.url, { method: 'POST', body: '{}' }).then(
        () => false,
        () => true,
      ),
      'nothing listens there',
    );
  },
);

fleetSuite('should refuse a forwarded request that no replica of the fleet signed', async () => {
  replicas = [await start(fleet)];
  const forged = await fetch(replicas[0]!.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...CALL_HEADERS,
      'x-mcp-dual-era-hop': `intruder.${Date.now()}.c2lnbmF0dXJl`,
      origin: 'https://evil.example',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'trigger-elicitation-request', arguments: {}, _meta: META },
    }),
  });
  assert.is(forged.status, 403);
});

fleetSuite('should list the replicas in the directory while they run, and not after', async () => {
  replicas = await Promise.all([
    start(fleet, ['--mrtr', 'replay']),
    start(fleet, ['--mrtr', 'replay', '--advertise', 'http://10.0.0.7:3000/']),
  ]);
  const client = await fleet.client();
  const directory = new FleetDirectory(client, fleet.keys, await HopSecrets.agree(client, fleet.keys));
  const listed = await directory.replicas();
  assert.is(listed.length, 2);
  assert.ok(
    listed.some((r) => r.advertise === 'http://10.0.0.7:3000'),
    JSON.stringify(listed),
  );
  assert.ok(
    listed.some((r) => replicas[0]!.url.startsWith(r.advertise)),
    JSON.stringify(listed),
  );
  assert.ok(listed.every((r) => r.ready));
  await Promise.all(replicas.map(stop));
  assert.equal(await directory.replicas(), []);
});

fleetSuite('should refuse a fleet it cannot reach, and options that do not go together', async () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; err: string }>((done) => {
      const child = spawn(TSX, [CLI, 'serve', '--port', '0', ...args, '--', process.execPath, EVERYTHING, 'stdio'], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      child.once('exit', (code) => done({ code, err }));
    });
  const unreachable = await run(['--fleet', 'redis://127.0.0.1:1']);
  assert.is(unreachable.code, 1, unreachable.err);
  assert.match(unreachable.err, 'cannot join the fleet at redis://127.0.0.1:1');
  const notRedis = await run(['--fleet', 'http://127.0.0.1:6379']);
  assert.is(notRedis.code, 2);
  assert.match(notRedis.err, '--fleet takes a redis:// or rediss:// URL');
  const stdio = await run(['--stdio', '--fleet', REDIS_URL]);
  assert.is(stdio.code, 2);
  assert.match(stdio.err, 'does not go with --stdio');
  const alone = await run(['--advertise', 'http://127.0.0.1:1']);
  assert.is(alone.code, 2);
  assert.match(alone.err, 'go with --fleet');
});

fleetSuite.run();
