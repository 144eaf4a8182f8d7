/**
 * Three replicas of `serve --fleet` behind a real nginx, round robin, no stickiness, in front of
 * server-everything: a v2 client pinned to 2026-07-28 completes the elicitation, sampling and
 * roots tools, every retry landing on another replica than the round before it, forwarded to the
 * owner of its parked call (the replicas' `/healthz` counts the forwards against the retries the
 * client sent); and our fixture's call of two rounds, each retry forwarded to the replica the call
 * lives on.
 *
 * How many rounds a call of server-everything takes is the server's timing, not ours: it asks a new
 * session's client for its roots right after `initialized`, and that push becomes a round of
 * whichever call is in flight, with the tool's own push or (on a loaded machine) before it. What
 * holds whatever the timing is that every retry is forwarded once.
 */
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { textOf } from '../helpers/everything.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { forwardedIn, startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { NGINX, startNginx, type RunningNginx } from '../helpers/nginx.ts';
import { CONFORMANCE_FIXTURE } from '../helpers/conformanceRun.ts';

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

/** A transport through nginx whose fetch counts the retries the client sends (calls carrying `requestState`), per tool. */
function countingTransport(url: string): { transport: StreamableHTTPClientTransport; retries: Map<string, number>; total: () => number } {
  const retries = new Map<string, number>();
  const counting: typeof fetch = (input, init) => {
    if (typeof init?.body === 'string') {
      const m = JSON.parse(init.body) as { method?: string; params?: { name?: string; requestState?: unknown } };
      if (m.method === 'tools/call' && m.params?.requestState !== undefined)
        retries.set(m.params.name!, (retries.get(m.params.name!) ?? 0) + 1);
    }
    return fetch(input, init);
  };
  const total = (): number => [...retries.values()].reduce((a, b) => a + b, 0);
  return { transport: new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { fetch: counting }), retries, total };
}

const behind = suite('three replicas behind nginx (round robin)');
let fleet: SpecFleet;
let replicas: Replica[] = [];
let nginx: RunningNginx | undefined;
behind.before(async () => {
  fleet = specFleet();
  replicas = await Promise.all([startReplica(fleet), startReplica(fleet), startReplica(fleet)]);
  nginx = await startNginx(replicas.map((r) => new URL(r.origin).host));
});
behind.after(async () => {
  await nginx?.stop();
  await Promise.all(replicas.map(stopReplica));
  await fleet.end();
});

behind('should have nginx to test with', () => {
  assert.ok(NGINX, 'nginx is installed (.ci/run installs nginx-light)');
});

behind('should complete elicitation, sampling and roots rounds, each retry forwarded to the owner of its call', async () => {
  const client = new ModernClient(
    { name: 'fleet-spec', version: '1.0.0' },
    { ...PINNED, capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
  );
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' },
  }));
  client.setRequestHandler('sampling/createMessage', async () => ({
    model: 'spec-model',
    role: 'assistant',
    content: { type: 'text', text: 'a sampled answer' },
  }));
  client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work/project', name: 'project' }] }));
  const sent = countingTransport(nginx!.url);
  await client.connect(sent.transport);
  try {
    const before = await forwardedIn(replicas);
    const rounds = [
      ['trigger-elicitation-request', {}, 'User provided the requested information!'],
      ['trigger-sampling-request', { prompt: 'say hi', maxTokens: 20 }, 'a sampled answer'],
      ['get-roots-list', {}, 'file:///work/project'],
    ] as const;
    for (const [tool, args, expected] of rounds) {
      const text = textOf(await client.callTool({ name: tool, arguments: args }));
      assert.match(text, expected, `${tool}: ${text.slice(0, 300)}`);
    }
    // The elicitation and the sampling each took a round at least; the roots were asked in a round
    // of their own call, or of an earlier call on the same replica (the server keeps them).
    assert.ok(
      (sent.retries.get('trigger-elicitation-request') ?? 0) >= 1 && (sent.retries.get('trigger-sampling-request') ?? 0) >= 1,
      JSON.stringify([...sent.retries]),
    );
    // Round robin over three, a call's rounds and retries one after another: a call of one or two
    // rounds has each retry land on another replica than the one its call lives on.
    assert.is((await forwardedIn(replicas)) - before, sent.total(), `every retry was forwarded once: ${JSON.stringify([...sent.retries])}`);
    assert.match(textOf(await client.callTool({ name: 'echo', arguments: { message: 'plain' } })), 'plain');
  } finally {
    await client.close();
  }
});

behind.run();

const rounds = suite('a call of two rounds through three replicas behind nginx');
let roundsFleet: SpecFleet;
let roundsReplicas: Replica[] = [];
let roundsNginx: RunningNginx | undefined;
rounds.before(async () => {
  roundsFleet = specFleet();
  roundsReplicas = await Promise.all([0, 1, 2].map(() => startReplica(roundsFleet, [], CONFORMANCE_FIXTURE)));
  roundsNginx = await startNginx(roundsReplicas.map((r) => new URL(r.origin).host));
});
rounds.after(async () => {
  await roundsNginx?.stop();
  await Promise.all(roundsReplicas.map(stopReplica));
  await roundsFleet.end();
});

rounds('should resume both rounds on the replica the call lives on, each retry forwarded there', async () => {
  const client = new ModernClient({ name: 'fleet-spec', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const message = (request.params as { message: string }).message;
    asked.push(message);
    return { action: 'accept', content: message.startsWith('Step 1') ? { name: 'Grace' } : { color: 'teal' } };
  });
  const sent = countingTransport(roundsNginx!.url);
  await client.connect(sent.transport);
  try {
    const before = await forwardedIn(roundsReplicas);
    assert.is(
      textOf(await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} })),
      "Grace's favorite color is teal",
    );
    assert.equal(asked, ['Step 1: What is your name?', 'Step 2: What is your favorite color?']);
    assert.is(sent.total(), 2, 'one retry per round');
    assert.is((await forwardedIn(roundsReplicas)) - before, 2, 'both retries were forwarded to the replica the call lives on');
  } finally {
    await client.close();
  }
});

rounds.run();
