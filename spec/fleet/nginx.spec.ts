/**
 * Three replicas of `serve --fleet` behind a real nginx, round robin, no stickiness, in front of
 * server-everything: a v2 client pinned to 2026-07-28 completes the elicitation, sampling and
 * roots tools, every retry landing on another replica than the round before it, forwarded to the
 * owner of its parked call (the replicas' `/healthz` counts the forwards); and our fixture's call
 * of two rounds, each retry forwarded to the replica the call lives on.
 */
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { textOf } from '../helpers/everything.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import { startReplica, stopReplica, type Replica } from '../helpers/fleetReplicas.ts';
import { NGINX, startNginx, type RunningNginx } from '../helpers/nginx.ts';
import { CONFORMANCE_FIXTURE } from '../helpers/conformanceRun.ts';

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

async function forwardedIn(replicas: readonly Replica[]): Promise<number> {
  let n = 0;
  for (const r of replicas) n += ((await (await fetch(`${r.origin}/healthz`)).json()) as { forwarded: number }).forwarded;
  return n;
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
  const client = new ModernClient({ name: 'fleet-spec', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } }));
  client.setRequestHandler('sampling/createMessage', async () => ({ model: 'spec-model', role: 'assistant', content: { type: 'text', text: 'a sampled answer' } }));
  client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work/project', name: 'project' }] }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${nginx!.url}/mcp`)));
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
    // Round robin over three: the retry of each call lands on another replica than its first round.
    assert.is((await forwardedIn(replicas)) - before, rounds.length, 'every retry was forwarded once');
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
  await client.connect(new StreamableHTTPClientTransport(new URL(`${roundsNginx!.url}/mcp`)));
  try {
    const before = await forwardedIn(roundsReplicas);
    assert.is(textOf(await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} })), "Grace's favorite color is teal");
    assert.equal(asked, ['Step 1: What is your name?', 'Step 2: What is your favorite color?']);
    assert.is((await forwardedIn(roundsReplicas)) - before, 2, 'both retries were forwarded to the replica the call lives on');
  } finally {
    await client.close();
  }
});

rounds.run();
