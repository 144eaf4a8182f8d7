/**
 * Interop over stdio with real peers: `mcp-dual-era serve --stdio -- node server-everything stdio`
 * (the CLI, in a child process) used by a modern-only v2 SDK client (pinned to 2026-07-28) and by a
 * legacy v1 SDK client, each through its own SDK's stdio transport. The modern client is first
 * shown to fail against server-everything on stdio without the wrap. Every process a suite starts
 * carries a marker in its environment, so the suite can check that none is left behind.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client as ModernClient, LOG_LEVEL_META_KEY, SdkError } from '@modelcontextprotocol/client';
import {
  getDefaultEnvironment as modernDefaultEnvironment,
  StdioClientTransport as ModernStdioTransport,
} from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  getDefaultEnvironment as legacyDefaultEnvironment,
  StdioClientTransport as LegacyStdioTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  assertLegacyProgress,
  assertLegacyResourceUpdate,
  atOrAbove,
  EVERYTHING,
  MARKER,
  markedProcesses,
  markedProcessesGone,
  reapMarked,
  serveStdioCommand,
  sleep,
  textOf,
  waitFor,
  type Level,
} from '../helpers/everything.ts';

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
const DOC = 'demo://resource/static/document/architecture.md';
const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];
const LONG_OP = 'Long running operation completed. Duration: 0.3 seconds, Steps: 3.';

// ── without the wrap ────────────────────────────────────────────────────────

const unwrapped = suite('server-everything over stdio without a wrap');

unwrapped('should refuse a modern-only client: server/discover is not a method it knows', async () => {
  const marker = randomUUID();
  const client = new ModernClient({ name: 'modern-spec', version: '1.0.0' }, PINNED);
  const transport = new ModernStdioTransport({
    command: process.execPath,
    args: [EVERYTHING, 'stdio'],
    env: { ...modernDefaultEnvironment(), [MARKER]: marker },
    stderr: 'ignore',
  });
  try {
    let failure: unknown;
    await client.connect(transport, { timeout: 10_000 }).catch((e: unknown) => (failure = e));
    assert.instance(failure, SdkError);
    assert.is((failure as SdkError).code, 'ERA_NEGOTIATION_FAILED');
    assert.match((failure as Error).message, 'did not offer pinned protocol version 2026-07-28');
  } finally {
    await client.close();
    await transport.close();
    await markedProcessesGone(marker, 3000);
    reapMarked(marker);
  }
});

unwrapped.run();

// ── a modern-only client through `serve --stdio` ────────────────────────────

const modern = suite('mcp-dual-era serve --stdio: server-everything to a modern-only client');
const modernMarker = randomUUID();
let modernClient: ModernClient | undefined;
let modernTransport: ModernStdioTransport | undefined;
const modernSent: Array<Record<string, any>> = [];
const modernAsked: string[] = [];

modern.before(async () => {
  const client = new ModernClient(
    { name: 'modern-spec', version: '1.0.0' },
    { ...PINNED, capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    modernAsked.push(`elicitation: ${request.params.message}`);
    return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
  });
  client.setRequestHandler('sampling/createMessage', async () => {
    modernAsked.push('sampling');
    return { model: 'spec-model', role: 'assistant', content: { type: 'text', text: 'a sampled answer' } };
  });
  client.setRequestHandler('roots/list', async () => {
    modernAsked.push('roots');
    return { roots: ROOTS };
  });
  const transport = new ModernStdioTransport({ ...serveStdioCommand(modernMarker, modernDefaultEnvironment()), stderr: 'ignore' });
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    modernSent.push(message as Record<string, any>);
    return send(message);
  };
  await client.connect(transport, { timeout: 30_000 });
  modernClient = client;
  modernTransport = transport;
});

modern.after(async () => {
  await modernClient?.close();
  await modernTransport?.close();
  reapMarked(modernMarker);
});

modern('should complete server-everything roots, elicitation and sampling tools through input_required rounds', async () => {
  const client = modernClient!;
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.is(client.getServerVersion()?.name, 'mcp-servers/everything');
  // Called first: 350 ms after its session starts, server-everything fetches roots on its own
  // (outside any call, so the wrap answers) and caches them; until then the tool asks itself.
  const roots = textOf(await client.callTool({ name: 'get-roots-list', arguments: {} }));
  assert.match(roots, 'Current MCP Roots (1 total)');
  assert.match(roots, 'URI: file:///work/project');
  const elicited = textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
  assert.match(elicited, '- Name: Ada Lovelace');
  assert.match(elicited, '- Agreed to terms: true');
  const sampled = textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } }));
  assert.match(sampled, '"text": "a sampled answer"');
  // The roots came through a round (the call came first), or from the server's own fetch 350 ms
  // into its session, answered by the wrap from its configured roots; on stdio a fetch that lands
  // while the call runs cannot be told from the call's own (no related request id), so the client
  // may be asked twice.
  const rootsRounds = modernAsked.filter((a) => a === 'roots').length;
  assert.ok(rootsRounds <= 2);
  assert.equal(modernAsked.slice(rootsRounds), ['elicitation: Please provide inputs for the following fields:', 'sampling']);
  const retries = modernSent.filter((m) => m['method'] === 'tools/call' && m['params']?.['requestState'] !== undefined);
  assert.equal(
    retries.map((m) => m['params']['name']),
    [...Array.from({ length: rootsRounds }, () => 'get-roots-list'), 'trigger-elicitation-request', 'trigger-sampling-request'],
  );
  for (const retry of retries.slice(0, rootsRounds))
    assert.equal(Object.values(retry['params']['inputResponses'] as Record<string, { roots: unknown }>)[0]?.roots, ROOTS);
});

modern('should list and call tools', async () => {
  const client = modernClient!;
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['echo', 'get-sum', 'get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request'])
    assert.ok(names.includes(name), name);
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: 'over stdio' } })), 'Echo: over stdio');
  assert.is(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } })), 'The sum of 40 and 2 is 42.');
});

modern('should get a prompt and read resources', async () => {
  const client = modernClient!;
  const prompt = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
  assert.equal(prompt.messages[0]?.content, { type: 'text', text: "What's weather in Paris?" });
  assert.ok((await client.listResources()).resources.some((r) => r.uri === DOC));
  assert.ok(
    (await client.listResourceTemplates()).resourceTemplates.some((t) => t.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'),
  );
  const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
  assert.match((dynamic.contents[0] as { text: string }).text, /^Resource 7: This is a plaintext resource created at /);
});

modern('should deliver the progress of a long-running tool to its progress handler', async () => {
  const progress: number[] = [];
  const result = await modernClient!.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
    { onprogress: (p) => progress.push(p.progress) },
  );
  assert.is(textOf(result), LONG_OP);
  await waitFor(() => progress.length >= 3, 1000);
  // The v2 client runs progress handlers a tick after reading them and forgets a request once its
  // answer is read, so under load it can miss the last one; the wire itself is checked below.
  assert.ok(progress.length >= 2 && progress.every((v, i) => v === i + 1), JSON.stringify(progress));
});

modern('should write every progress notification before the answer on the wire', async () => {
  const cmd = serveStdioCommand(modernMarker, process.env as Record<string, string>);
  const child = spawn(cmd.command, cmd.args, { stdio: ['pipe', 'pipe', 'ignore'], env: cmd.env, cwd: cmd.cwd });
  const lines: any[] = [];
  let buffer = '';
  const done = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const message = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        lines.push(message);
        if (message.id === 7) resolve();
      }
    });
  });
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    progressToken: 'wire',
  };
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 0.1, steps: 3 }, _meta: meta } })}\n`,
  );
  await done;
  child.stdin.end();
  assert.equal(
    lines.map((m) => (m.method === 'notifications/progress' ? [m.params.progressToken, m.params.progress] : m.id)),
    [['wire', 1], ['wire', 2], ['wire', 3], 7],
  );
  await new Promise((r) => child.once('exit', r));
});

modern('should deliver logs only to requests that asked, and only at or above their level', async () => {
  const client = modernClient!;
  const logs: Array<{ level: string; data: unknown }> = [];
  client.setNotificationHandler('notifications/message', (n) => void logs.push({ level: n.params.level, data: n.params.data }));
  // Each time simulated logging starts, server-everything sends one log of a random level at once
  // (and every 5 s after, so it is switched off again straight away).
  const toggles = async (level: Level | undefined, until: () => boolean) => {
    logs.length = 0;
    const meta = level ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {};
    let starts = 0;
    for (; starts < 30 && !until(); starts++) {
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
    }
    await sleep(50);
    return { starts, logs: [...logs] };
  };
  const none = await toggles(undefined, () => false);
  assert.equal(none.logs, [], 'no logLevel, no logs');
  const all = await toggles('debug', () => logs.some((l) => !atOrAbove(l.level, 'error')));
  assert.ok(
    all.logs.some((l) => !atOrAbove(l.level, 'error')),
    'at debug, logs below error arrive',
  );
  const high = await toggles('error', () => logs.length >= 2);
  assert.ok(high.logs.length >= 2, 'logs at error or above arrive');
  assert.ok(
    high.logs.every((l) => atOrAbove(l.level, 'error')),
    JSON.stringify(high.logs),
  );
  client.removeNotificationHandler('notifications/message');
});

modern('should deliver resource updates on a subscriptions/listen stream', async () => {
  const client = modernClient!;
  const updates: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
  const subscription = await client.listen({ resourceSubscriptions: [DOC] });
  try {
    assert.equal(subscription.honoredFilter.resourceSubscriptions, [DOC]);
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    assert.ok(await waitFor(() => updates.length > 0, 2000), 'an update arrived');
    assert.is(updates[0], DOC);
  } finally {
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await subscription.close();
    client.removeNotificationHandler('notifications/resources/updated');
  }
});

modern('should leave no process behind once the client has closed', async () => {
  assert.ok(markedProcesses(modernMarker).length >= 2, 'the wrap and server-everything are running');
  await modernClient!.close();
  await modernTransport!.close();
  const gone = await markedProcessesGone(modernMarker, 5000);
  assert.ok(gone, `still running: ${JSON.stringify(markedProcesses(modernMarker))}`);
});

modern.run();

// ── a legacy client through `serve --stdio` ─────────────────────────────────

const legacy = suite('mcp-dual-era serve --stdio: server-everything to a legacy client');
const legacyMarker = randomUUID();
let legacyClient: LegacyClient | undefined;
const legacyAsked: string[] = [];
const legacyLogs: Array<{ level: string; data: unknown }> = [];
const legacyUpdates: string[] = [];

legacy.before(async () => {
  const client = new LegacyClient(
    { name: 'legacy-spec', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => {
    legacyAsked.push('elicitation');
    return { action: 'accept', content: { name: 'Grace Hopper', check: true } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    legacyAsked.push('sampling');
    return { model: 'legacy-model', role: 'assistant', content: { type: 'text', text: 'a legacy sample' } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    legacyAsked.push('roots');
    return { roots: [{ uri: 'file:///legacy/root', name: 'legacy-root' }] };
  });
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n) => void legacyLogs.push({ level: n.params.level, data: n.params.data }),
  );
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void legacyUpdates.push(n.params.uri));
  const transport = new LegacyStdioTransport({ ...serveStdioCommand(legacyMarker, legacyDefaultEnvironment()), stderr: 'ignore' });
  await client.connect(transport, { timeout: 30_000 });
  legacyClient = client;
});

legacy.after(async () => {
  await legacyClient?.close();
  reapMarked(legacyMarker);
});

legacy('should initialize with server-everything itself and list and call tools', async () => {
  const client = legacyClient!;
  assert.equal(client.getServerVersion(), { name: 'mcp-servers/everything', title: 'Everything Reference Server', version: '2.0.0' });
  assert.equal(client.getServerCapabilities()?.resources, { subscribe: true, listChanged: true });
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['echo', 'get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request'])
    assert.ok(names.includes(name), name);
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: 'legacy stdio' } })), 'Echo: legacy stdio');
});

legacy('should get a prompt and read a resource', async () => {
  const client = legacyClient!;
  const prompt = await client.getPrompt({ name: 'simple-prompt' });
  assert.equal(prompt.messages[0]?.content, { type: 'text', text: 'This is a simple prompt without arguments.' });
  const doc = await client.readResource({ uri: DOC });
  assert.is(doc.contents[0]?.mimeType, 'text/markdown');
});

legacy('should relay progress to its progress handler', async () => {
  await assertLegacyProgress(legacyClient!);
});

legacy('should honour logging/setLevel: only logs at or above the level arrive', async () => {
  const client = legacyClient!;
  const collect = async (level: Level, until: () => boolean) => {
    await client.setLoggingLevel(level);
    legacyLogs.length = 0;
    for (let round = 0; round < 30 && !until(); round++) {
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    }
    await sleep(50);
    return [...legacyLogs];
  };
  const high = await collect('error', () => legacyLogs.length >= 2);
  assert.ok(high.length >= 2 && high.every((l) => atOrAbove(l.level, 'error')), JSON.stringify(high));
  const low = await collect('debug', () => legacyLogs.some((l) => !atOrAbove(l.level, 'error')));
  assert.ok(
    low.some((l) => !atOrAbove(l.level, 'error')),
    'at debug, lower levels arrive too',
  );
});

legacy('should deliver resources/updated for a resources/subscribe', async () => {
  await assertLegacyResourceUpdate(legacyClient!, legacyUpdates, DOC);
});

legacy('should relay server-everything roots, elicitation and sampling requests to its own handlers', async () => {
  const client = legacyClient!;
  assert.match(textOf(await client.callTool({ name: 'get-roots-list', arguments: {} })), '1. legacy-root\n   URI: file:///legacy/root');
  assert.match(textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })), '- Name: Grace Hopper');
  assert.match(
    textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } })),
    '"text": "a legacy sample"',
  );
  assert.ok(
    legacyAsked.includes('roots') && legacyAsked.includes('elicitation') && legacyAsked.includes('sampling'),
    JSON.stringify(legacyAsked),
  );
});

legacy('should leave no process behind once the client has closed', async () => {
  assert.ok(markedProcesses(legacyMarker).length >= 2, 'the wrap and server-everything are running');
  await legacyClient!.close();
  const gone = await markedProcessesGone(legacyMarker, 5000);
  assert.ok(gone, `still running: ${JSON.stringify(markedProcesses(legacyMarker))}`);
});

legacy.run();
