/**
 * A fleet refuses what one process refuses, on every replica (real Redis, three replicas of
 * `serve --fleet` in front of server-everything, suspend mode): a tampered state, a state brought
 * by another caller, an expired state, and a retry brought twice (also on two replicas at once)
 * each get the same answer wherever they land as on the replica that parked the call, and the call
 * itself is resumed once.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'trigger-elicitation-request',
};
const ANSWER = { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } };
/** Long enough that three calls parked and retried one after another stay parked on a loaded 2-core machine (3 s was not, once). */
const PARK_MS = 8000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(replica: Replica, id: number, params: Record<string, unknown>, caller = 'alice'): Promise<any> {
  const res = await fetch(replica.url, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${caller}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'trigger-elicitation-request', arguments: {}, ...params, _meta: META },
    }),
  });
  return { status: res.status, ...((await res.json()) as object) };
}

/** A call parked on `replica`: its retry's params. */
async function park(replica: Replica, id: number): Promise<Record<string, unknown>> {
  const first = await call(replica, id, {});
  assert.is(first.result?.resultType, 'input_required', JSON.stringify(first));
  const [key] = Object.keys(first.result.inputRequests);
  return { requestState: first.result.requestState, inputResponses: { [key!]: ANSWER } };
}

/** What a refusal comes down to: status, code, message. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const refusal = (a: any) => ({ status: a.status, code: a.error?.code, message: a.error?.message });

function tamper(state: string): string {
  const at = Math.floor(state.length / 2);
  return `${state.slice(0, at)}${state[at] === 'A' ? 'B' : 'A'}${state.slice(at + 1)}`;
}

const refusals = suite('a fleet refuses what one process refuses, on every replica');
let fleet: SpecFleet;
let replicas: Replica[] = [];
refusals.before(async () => {
  fleet = specFleet();
  const options = ['--limit', `park-timeout-ms=${PARK_MS}`];
  replicas = await Promise.all([startReplica(fleet, options), startReplica(fleet, options), startReplica(fleet, options)]);
});
refusals.after(async () => {
  await Promise.all(replicas.map(stopReplica));
  await fleet.end();
});

refusals('should refuse a tampered state, another caller’s state and an expired state alike on every replica', async () => {
  const [a] = replicas as [Replica, Replica, Replica];
  // Each case: how the retry is spoiled, who brings it, whether the park is waited out first,
  // what the refusal says.
  const cases: Array<[string, (retry: Record<string, unknown>) => Record<string, unknown>, string | undefined, boolean, string]> = [
    ['tampered', (r) => ({ ...r, requestState: tamper(r['requestState'] as string) }), undefined, false, 'requestState'],
    ['another caller', (r) => r, 'mallory', false, 'belongs to another caller'],
    ['expired', (r) => r, undefined, true, 'has expired'],
  ];
  let id = 10;
  for (const [what, spoil, caller, expire, expected] of cases) {
    // A call parked on A for each replica, spoiled the same way; A's own answer is the one process's.
    const retries = [];
    for (let i = 0; i < replicas.length; i++) retries.push(spoil(await park(a, id++)));
    if (expire) await new Promise((s) => setTimeout(s, PARK_MS + 500));
    const answers = [];
    for (const [i, replica] of replicas.entries()) answers.push(refusal(await call(replica, id++, retries[i]!, caller)));
    assert.is(answers[0]!.code, -32602, `${what}: ${JSON.stringify(answers[0])}`);
    assert.match(answers[0]!.message ?? '', expected, `${what}: ${JSON.stringify(answers[0])}`);
    for (const other of answers.slice(1)) assert.equal(other, answers[0], `${what}: every replica answers as the owner does`);
  }
});

refusals('should resume a retry brought twice once, whether on one replica after another or on two at once', async () => {
  const [a, b, c] = replicas as [Replica, Replica, Replica];
  const retry = await park(a, 100);
  const [onB, onC] = await Promise.all([call(b, 101, retry), call(c, 102, retry)]);
  const served = [onB, onC].filter((x) => x.result?.content);
  const refused = [onB, onC].filter((x) => x.error);
  assert.is(served.length, 1, JSON.stringify([onB, onC]));
  assert.match(JSON.stringify(served[0].result.content), 'User provided the requested information!');
  assert.is(refused.length, 1);
  assert.is(refused[0].error.code, -32602);
  // And again later, anywhere: refused as on its owner.
  const later = await Promise.all(replicas.map((r, i) => call(r, 110 + i, retry)));
  for (const answer of later) assert.equal(refusal(answer), refusal(later[0]));
  assert.is(later[0].error?.code, -32602);
});

refusals.run();
