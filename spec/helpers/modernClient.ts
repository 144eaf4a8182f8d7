/**
 * A modern-only v2 SDK client (pinned to 2026-07-28) on a `wrapModernClient` transport, with a
 * record of what it sent and received on that transport, and the checks the interop specs run
 * against server-everything through it, whichever transport the server is on.
 */
import { Client, LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import * as assert from 'uvu/assert';
import type { ModernClientTransport } from '../../lib/wrap/modernClient/wrapModernClient.ts';
import { atOrAbove, sleep, textOf, waitFor, type Level } from './everything.ts';

export const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
export const DOC = 'demo://resource/static/document/architecture.md';
export const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];

/** A pinned client with elicitation, sampling and roots handlers, connected through `transport`. */
export interface Connected {
  readonly client: Client;
  readonly transport: ModernClientTransport;
  /** What the client sent on the transport. */
  readonly sent: Array<Record<string, any>>;
  /** What reached the client from the transport. */
  readonly received: Array<Record<string, any>>;
  /** Input requests the client's handlers answered, in order. */
  readonly asked: string[];
}

export async function connectPinned(transport: ModernClientTransport): Promise<Connected> {
  const client = new Client(
    { name: 'modern-spec', version: '1.0.0' },
    { ...PINNED, capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
  );
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(`elicitation: ${request.params.message}`);
    const fields = Object.keys((request.params as { requestedSchema?: { properties?: object } }).requestedSchema?.properties ?? {});
    if (fields.includes('confirm')) return { action: 'accept', content: { confirm: true } };
    return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
  });
  client.setRequestHandler('sampling/createMessage', async () => {
    asked.push('sampling');
    return { model: 'spec-model', role: 'assistant', content: { type: 'text', text: 'a sampled answer' } };
  });
  client.setRequestHandler('roots/list', async () => {
    asked.push('roots');
    return { roots: ROOTS };
  });
  const sent: Array<Record<string, any>> = [];
  const received: Array<Record<string, any>> = [];
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    sent.push(message as Record<string, any>);
    return send(message);
  };
  // (The cast only bridges this repository's exactOptionalPropertyTypes and the SDK's message typings.)
  await client.connect(transport as never, { timeout: 30_000 });
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message as Record<string, any>);
    deliver?.(message, extra);
  };
  return { client, transport, sent, received, asked };
}

/** Tools, prompts and resources of server-everything through the wrap. */
export async function assertBasics({ client }: Connected): Promise<void> {
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.is(client.getServerVersion()?.name, 'mcp-servers/everything');
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['echo', 'get-sum', 'get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request'])
    assert.ok(names.includes(name), name);
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: 'through the wrap' } })), 'Echo: through the wrap');
  assert.is(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } })), 'The sum of 40 and 2 is 42.');
  const prompt = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
  assert.equal(prompt.messages[0]?.content, { type: 'text', text: "What's weather in Paris?" });
  assert.ok((await client.listResources()).resources.some((r) => r.uri === DOC));
  assert.ok(
    (await client.listResourceTemplates()).resourceTemplates.some((t) => t.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'),
  );
  const doc = await client.readResource({ uri: DOC });
  assert.is(doc.contents[0]?.mimeType, 'text/markdown');
}

/** Elicitation and sampling pushed by server-everything reach the client as input_required rounds. */
export async function assertInputRounds(c: Connected): Promise<void> {
  const { client, sent, asked } = c;
  asked.length = 0;
  const elicited = textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
  assert.match(elicited, '- Name: Ada Lovelace');
  assert.match(elicited, '- Agreed to terms: true');
  const sampled = textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } }));
  assert.match(sampled, '"text": "a sampled answer"');
  // server-everything also fetches roots on its own shortly after a session starts; over HTTP that
  // push can land on whichever call is in flight and then becomes one of its rounds.
  assert.equal(
    asked.filter((a) => a !== 'roots'),
    ['elicitation: Please provide inputs for the following fields:', 'sampling'],
  );
  const retries = sent.filter((m) => m['method'] === 'tools/call' && m['params']?.['requestState'] !== undefined);
  const elicitationRetry = retries.find((m) => m['params']['name'] === 'trigger-elicitation-request');
  assert.ok(elicitationRetry, 'the elicitation call was retried with requestState');
  assert.ok(
    Object.values(elicitationRetry!['params']['inputResponses'] as Record<string, unknown>).some(
      (r) => JSON.stringify(r) === JSON.stringify({ action: 'accept', content: { name: 'Ada Lovelace', check: true } }),
    ),
    JSON.stringify(elicitationRetry),
  );
  assert.ok(
    retries.some((m) => m['params']['name'] === 'trigger-sampling-request'),
    'the sampling call was retried with requestState',
  );
  const roots = textOf(await client.callTool({ name: 'get-roots-list', arguments: {} }));
  assert.match(roots, 'URI: file:///work/project');
}

export async function assertProgress({ client }: Connected): Promise<void> {
  const progress: number[] = [];
  const result = await client.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  assert.is(textOf(result), 'Long running operation completed. Duration: 0.3 seconds, Steps: 3.');
  await waitFor(() => progress.length >= 3, 1000);
  // The v2 client runs progress handlers a tick late and forgets the request once answered, so it can miss the last one.
  assert.ok(progress.length >= 2 && progress.every((v, i) => v === i + 1), JSON.stringify(progress));
}

/** Logs reach only requests that carry a logLevel, and only at or above it. */
export async function assertLogLevels({ client }: Connected): Promise<void> {
  const logs: Array<{ level: string; data: unknown }> = [];
  client.setNotificationHandler('notifications/message', (n) => void logs.push({ level: n.params.level, data: n.params.data }));
  // Each time simulated logging starts, server-everything sends one log of a random level at once.
  const toggles = async (level: Level | undefined, until: () => boolean) => {
    logs.length = 0;
    const meta = level ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {};
    for (let starts = 0; starts < 30 && !until(); starts++) {
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
    }
    await sleep(50);
    return [...logs];
  };
  try {
    assert.equal(await toggles(undefined, () => false), [], 'no logLevel, no logs');
    const all = await toggles('debug', () => logs.some((l) => !atOrAbove(l.level, 'error')));
    assert.ok(
      all.some((l) => !atOrAbove(l.level, 'error')),
      'at debug, logs below error arrive',
    );
    const high = await toggles('error', () => logs.length >= 2);
    assert.ok(high.length >= 2, 'logs at error or above arrive');
    assert.ok(
      high.every((l) => atOrAbove(l.level, 'error')),
      JSON.stringify(high),
    );
  } finally {
    client.removeNotificationHandler('notifications/message');
  }
}

export async function assertSubscription({ client }: Connected): Promise<void> {
  const updates: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
  const subscription = await client.listen({ resourceSubscriptions: [DOC] });
  try {
    assert.equal(subscription.honoredFilter.resourceSubscriptions, [DOC]);
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    assert.ok(await waitFor(() => updates.length > 0, 3000), 'an update arrived');
    assert.is(updates[0], DOC);
  } finally {
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await subscription.close();
    client.removeNotificationHandler('notifications/resources/updated');
  }
}

/** A cancelled call ends at once for the client, nothing more arrives for it, and the client goes on. */
export async function assertCancellation({ client, sent, received }: Connected): Promise<void> {
  const abort = new AbortController();
  const started = Date.now();
  const call = client.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 2 } },
    { signal: abort.signal, onprogress: () => {} },
  );
  setTimeout(() => abort.abort('changed my mind'), 300);
  const failure = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failure, 'the call was rejected');
  assert.ok(Date.now() - started < 1500, 'long before the tool would have finished');
  const id = sent.findLast((m) => m['method'] === 'tools/call' && m['params']?.['name'] === 'trigger-long-running-operation')!['id'];
  assert.ok(
    sent.some((m) => m['method'] === 'notifications/cancelled' && m['params']?.['requestId'] === id),
    'the client sent notifications/cancelled',
  );
  await sleep(2000);
  assert.not.ok(
    received.some((m) => m['id'] === id),
    'no answer for the cancelled request',
  );
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: 'still here' } })), 'Echo: still here');
}
