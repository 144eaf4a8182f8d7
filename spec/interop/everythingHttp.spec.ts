/**
 * Interop over Streamable HTTP with real peers: the unmodified legacy server-everything, wrapped by
 * `wrapLegacyServer` and served on 127.0.0.1 in this process, used by a modern-only v2 SDK client
 * (pinned to 2026-07-28) and by a legacy v1 SDK client on the same endpoint. The modern client is
 * first shown to fail against server-everything's own HTTP server.
 */
import { randomUUID } from 'node:crypto';
import {
  Client as ModernClient,
  LOG_LEVEL_META_KEY,
  SdkError,
  StreamableHTTPClientTransport as ModernHttpTransport,
  type FetchLike,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import {
  assertLegacyProgress,
  assertLegacyResourceUpdate,
  atOrAbove,
  everythingBackend,
  LEVELS,
  markedProcesses,
  markedProcessesGone,
  reapMarked,
  sleep,
  startEverythingHttp,
  tappedParams,
  textOf,
  waitFor,
  type Level,
  type Tapped,
} from '../helpers/everything.ts';

const PINNED = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
const DOC = 'demo://resource/static/document/architecture.md';
const LONG_OP = 'Long running operation completed. Duration: 0.3 seconds, Steps: 3.';
const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];
const CONDITIONAL = ['get-roots-list', 'trigger-elicitation-request', 'trigger-sampling-request'];

interface Endpoint {
  /** In the environment of every server-everything process this endpoint starts. */
  marker: string;
  wrap: LegacyServerWrap;
  http: RunningHttpServer;
  url: URL;
  /** Every message on the upstream pipes (to server-everything and back), in order. */
  tapped: Tapped[];
}

async function startWrap(): Promise<Endpoint> {
  const tapped: Tapped[] = [];
  const marker = randomUUID();
  const wrap = wrapLegacyServer({ upstream: everythingBackend(marker, (seen) => tapped.push(seen)) });
  const http = await serveNodeHttp(wrap, { port: 0 });
  return { marker, wrap, http, url: new URL(`${http.origin}/mcp`), tapped };
}

/** Closes the wrap and the listener; returns the server-everything processes still running after 5 s (and kills them). */
async function stopWrap(endpoint: Endpoint | undefined): Promise<Array<{ pid: number; command: string }>> {
  if (!endpoint) return [];
  await endpoint.wrap.close();
  await endpoint.http.close();
  if (await markedProcessesGone(endpoint.marker, 5000)) return [];
  return reapMarked(endpoint.marker);
}

/** A fetch that records the JSON-RPC bodies the client POSTs, and the status and JSON body (not SSE) of each answer. */
function recordingFetch(): {
  fetch: FetchLike;
  posted: Array<Record<string, any>>;
  answers: Array<{ status: number; json?: Record<string, any> }>;
} {
  const posted: Array<Record<string, any>> = [];
  const answers: Array<{ status: number; json?: Record<string, any> }> = [];
  const fetchLike: FetchLike = async (input, init) => {
    if (typeof init?.body === 'string') posted.push(JSON.parse(init.body) as Record<string, any>);
    const response = await fetch(input, init);
    const json = response.headers.get('content-type')?.includes('application/json')
      ? ((await response.clone().json()) as Record<string, any>)
      : undefined;
    answers.push({ status: response.status, ...(json ? { json } : {}) });
    return response;
  };
  return { fetch: fetchLike, posted, answers };
}

/** A modern-only (pinned) v2 client; with `inputs`, it declares and answers elicitation, sampling and roots. */
function modernClient(inputs: boolean) {
  const asked: string[] = [];
  const client = new ModernClient(
    { name: 'modern-spec', version: '1.0.0' },
    { ...PINNED, capabilities: inputs ? { elicitation: { form: {} }, sampling: {}, roots: {} } : {} },
  );
  if (inputs) {
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(`elicitation: ${request.params.message}`);
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } };
    });
    client.setRequestHandler('sampling/createMessage', async (request) => {
      const first = request.params.messages[0]?.content;
      asked.push(`sampling: ${first && 'text' in first ? first.text : ''}`);
      return { model: 'spec-model', role: 'assistant', content: { type: 'text', text: 'a sampled answer' } };
    });
    client.setRequestHandler('roots/list', async () => {
      asked.push('roots');
      return { roots: ROOTS };
    });
  }
  return { client, asked };
}

// ── without the wrap ────────────────────────────────────────────────────────

const unwrapped = suite('server-everything over Streamable HTTP without a wrap');

unwrapped('should refuse a modern-only client: its server/discover gets 400 "Server not initialized"', async () => {
  const server = await startEverythingHttp();
  const { client } = modernClient(false);
  const recorder = recordingFetch();
  try {
    let failure: unknown;
    await client
      .connect(new ModernHttpTransport(server.url, { fetch: recorder.fetch }), { timeout: 10_000 })
      .catch((e: unknown) => (failure = e));
    assert.instance(failure, SdkError);
    assert.is((failure as SdkError).code, 'ERA_NEGOTIATION_FAILED');
    assert.is(recorder.posted[0]?.['method'], 'server/discover');
    assert.is(recorder.answers[0]?.status, 400);
    assert.equal(recorder.answers[0]?.json?.['error'], { code: -32000, message: 'Bad Request: Server not initialized' });
  } finally {
    await client.close();
    await server.close();
  }
});

unwrapped.run();

// ── a modern-only client through the wrap ───────────────────────────────────

const modern = suite('wrapLegacyServer over Streamable HTTP: server-everything to a modern-only client');
let endpoint: Endpoint | undefined;
let plain: ModernClient | undefined;

modern.before(async () => {
  endpoint = await startWrap();
  plain = modernClient(false).client;
  await plain.connect(new ModernHttpTransport(endpoint.url), { timeout: 20_000 });
});

modern.after(async () => {
  await plain?.close();
  await stopWrap(endpoint);
});

modern('should discover server-everything as a 2026-07-28 server', async () => {
  const client = plain!;
  assert.is(client.getProtocolEra(), 'modern');
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.equal(client.getServerVersion(), { name: 'mcp-servers/everything', title: 'Everything Reference Server', version: '2.0.0' });
  const discovered = await client.discover();
  assert.ok(discovered.supportedVersions.includes('2026-07-28'));
  assert.ok(!discovered.supportedVersions.some((v) => v.startsWith('2025') || v.startsWith('2024')));
  assert.equal(discovered.capabilities.resources, { subscribe: true, listChanged: true });
  assert.match(client.getInstructions() ?? '', /Everything Server/);
});

modern('should list and call tools, and hide the tools that need capabilities it did not declare', async () => {
  const client = plain!;
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['echo', 'get-sum', 'trigger-long-running-operation', 'toggle-simulated-logging'])
    assert.ok(names.includes(name), name);
  for (const name of CONDITIONAL) assert.not.ok(names.includes(name), name);
  assert.is(
    textOf(await client.callTool({ name: 'echo', arguments: { message: 'hello through the wrap' } })),
    'Echo: hello through the wrap',
  );
  assert.is(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 19, b: 23 } })), 'The sum of 19 and 23 is 42.');
  const structured = await client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } });
  assert.equal(structured.structuredContent, { temperature: 33, conditions: 'Cloudy', humidity: 82 });
});

modern('should list and get prompts, with their arguments', async () => {
  const client = plain!;
  const prompts = (await client.listPrompts()).prompts;
  assert.ok(prompts.some((p) => p.name === 'simple-prompt'));
  assert.equal(
    prompts.find((p) => p.name === 'args-prompt')?.arguments?.map((a) => [a.name, a.required ?? false]),
    [
      ['city', true],
      ['state', false],
    ],
  );
  const simple = await client.getPrompt({ name: 'simple-prompt' });
  assert.equal(simple.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } }]);
  const args = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: 'Texas' } });
  assert.equal(args.messages[0]?.content, { type: 'text', text: "What's weather in Paris, Texas?" });
});

modern('should list and read resources and resource templates', async () => {
  const client = plain!;
  const resources = (await client.listResources()).resources;
  assert.ok(resources.some((r) => r.uri === DOC && r.mimeType === 'text/markdown'));
  const doc = await client.readResource({ uri: DOC });
  assert.is(doc.contents[0]?.uri, DOC);
  assert.match((doc.contents[0] as { text: string }).text, /architecture/i);
  const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
  assert.ok(templates.includes('demo://resource/dynamic/text/{resourceId}'));
  const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
  assert.match((dynamic.contents[0] as { text: string }).text, /^Resource 7: This is a plaintext resource created at /);
});

modern('should stream the progress of a long-running tool to its progress handler', async () => {
  const progress: Array<{ progress: number; total?: number }> = [];
  const result = await plain!.callTool(
    { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
    { onprogress: (p) => progress.push({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}) }) },
  );
  assert.is(textOf(result), LONG_OP);
  await waitFor(() => progress.length >= 3, 1000);
  assert.equal(
    progress,
    [1, 2, 3].map((i) => ({ progress: i, total: 3 })),
  );
});

modern('should deliver the logs of a request only at or above the level it asked for', async () => {
  const client = plain!;
  const threshold: Level = 'error';
  const delivered: Array<{ level: string; data: unknown }> = [];
  client.setNotificationHandler('notifications/message', (n) => void delivered.push({ level: n.params.level, data: n.params.data }));
  const tapped = endpoint!.tapped;
  const from = tapped.length;
  const emitted = () => tappedParams(tapped.slice(from), 'down', 'notifications/message') as Array<{ level: string; data: unknown }>;
  // Each time simulated logging starts, server-everything sends one log of a random level at once
  // (and every 5 s after, so it is switched off again before the next call).
  for (let round = 0; round < 30; round++) {
    const meta = { _meta: { [LOG_LEVEL_META_KEY]: threshold } };
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
    const levels = emitted().map((l) => l.level);
    if (levels.some((l) => atOrAbove(l, threshold)) && levels.some((l) => !atOrAbove(l, threshold))) break;
  }
  await sleep(50);
  const upstream = emitted();
  assert.ok(
    upstream.some((l) => !atOrAbove(l.level, threshold)),
    'server-everything sent a log below the level',
  );
  assert.ok(
    upstream.some((l) => atOrAbove(l.level, threshold)),
    'server-everything sent a log at or above the level',
  );
  assert.ok(
    delivered.every((l) => atOrAbove(l.level, threshold)),
    `a log below ${threshold} arrived: ${JSON.stringify(delivered)}`,
  );
  assert.equal(
    delivered,
    upstream.filter((l) => atOrAbove(l.level, threshold)).map((l) => ({ level: l.level, data: l.data })),
  );
  client.removeNotificationHandler('notifications/message');
});

modern('should send no logs to a request that asked for none', async () => {
  const client = plain!;
  const delivered: unknown[] = [];
  client.setNotificationHandler('notifications/message', (n) => void delivered.push(n.params));
  const tapped = endpoint!.tapped;
  const from = tapped.length;
  for (let i = 0; i < 6; i++) await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
  await sleep(50);
  assert.ok(tappedParams(tapped.slice(from), 'down', 'notifications/message').length > 0, 'server-everything logged');
  assert.equal(delivered, []);
  client.removeNotificationHandler('notifications/message');
});

modern('should deliver resource updates on a subscriptions/listen stream', async () => {
  const client = plain!;
  const updates: Array<{ uri: string; subscriptionId: unknown }> = [];
  client.setNotificationHandler(
    'notifications/resources/updated',
    (n) => void updates.push({ uri: n.params.uri, subscriptionId: n.params._meta?.['io.modelcontextprotocol/subscriptionId'] }),
  );
  const subscription = await client.listen({ resourceSubscriptions: [DOC], toolsListChanged: true });
  try {
    assert.equal(subscription.honoredFilter, { toolsListChanged: true, resourceSubscriptions: [DOC] });
    assert.equal(tappedParams(endpoint!.tapped, 'up', 'resources/subscribe'), [{ uri: DOC }]);
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }); // sends one update at once, then every 5 s
    assert.ok(await waitFor(() => updates.length > 0, 2000), 'an update arrived');
    assert.is(updates[0]?.uri, DOC);
    assert.type(updates[0]?.subscriptionId, 'string');
  } finally {
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await subscription.close();
    client.removeNotificationHandler('notifications/resources/updated');
  }
  assert.is(await subscription.closed, 'local');
  assert.ok(
    await waitFor(() => tappedParams(endpoint!.tapped, 'up', 'resources/unsubscribe').length > 0, 2000),
    'unsubscribed upstream when the listen ended',
  );
});

modern('should complete server-everything roots, elicitation and sampling tools through input_required rounds', async () => {
  const { client, asked } = modernClient(true);
  const recorder = recordingFetch();
  await client.connect(new ModernHttpTransport(endpoint!.url, { fetch: recorder.fetch }), { timeout: 20_000 });
  try {
    // Called first: 350 ms after its session starts, server-everything fetches roots on its own
    // (outside any call, so the wrap answers) and caches them; until then the tool asks itself.
    const roots = textOf(await client.callTool({ name: 'get-roots-list', arguments: {} }));
    assert.match(roots, 'Current MCP Roots (1 total)');
    assert.match(roots, 'URI: file:///work/project');
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const name of CONDITIONAL) assert.ok(names.includes(name), name);
    const elicited = textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
    assert.match(elicited, 'User provided the requested information!');
    assert.match(elicited, '- Name: Ada Lovelace');
    assert.match(elicited, '- Email: ada@example.com');
    const sampled = textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } }));
    assert.match(sampled, '"model": "spec-model"');
    assert.match(sampled, '"text": "a sampled answer"');
    // The roots came through rounds: the get-roots-list call's own (it came first; the server's own
    // fetch 350 ms into its session may land while it runs and be asked too) and, the client being
    // anonymous (not to be told from another anonymous client on the same session), one before each
    // later call, so that the server holds this client's roots when it runs it.
    assert.equal(
      asked.filter((a) => a !== 'roots'),
      ['elicitation: Please provide inputs for the following fields:', 'sampling: Resource trigger-sampling-request context: say hi'],
    );
    // Each answer went back as a retry of the same call carrying inputResponses and the requestState.
    const retries = recorder.posted.filter((m) => m['method'] === 'tools/call' && m['params']?.['requestState'] !== undefined);
    const answered = (m: Record<string, any>) => Object.values(m['params']['inputResponses'] as Record<string, Record<string, unknown>>);
    const rootsRetries = retries.filter((m) => answered(m).every((a) => 'roots' in a));
    assert.is(rootsRetries[0]?.['params']['name'], 'get-roots-list');
    for (const retry of rootsRetries) for (const answer of answered(retry)) assert.equal(answer['roots'], ROOTS);
    const others = retries.filter((m) => !rootsRetries.includes(m));
    assert.equal(
      others.map((m) => m['params']['name']),
      ['trigger-elicitation-request', 'trigger-sampling-request'],
    );
    const answers = others.map((m) => answered(m)[0]);
    assert.equal((answers[0]?.['content'] as Record<string, unknown>)['name'], 'Ada Lovelace');
    assert.is((answers[1]?.['content'] as Record<string, unknown>)['text'], 'a sampled answer');
    // server-everything pushed real requests upstream; the modern client saw input_required rounds.
    assert.is(tappedParams(endpoint!.tapped, 'down', 'elicitation/create').length, 1);
    const rounds = recorder.answers.flatMap((a) => (a.json?.['result']?.['resultType'] === 'input_required' ? [a.json['result']] : []));
    const asks = rounds.map((r) => Object.values(r['inputRequests'] as Record<string, { method: string }>).map((i) => i.method));
    // The call's own round, with the server's own fetch of roots in it when that landed meanwhile.
    assert.ok(asks[0]!.length >= 1 && asks[0]!.every((m) => m === 'roots/list'), JSON.stringify(asks[0]));
    assert.equal(
      asks.filter((methods) => !methods.every((m) => m === 'roots/list')),
      [['elicitation/create'], ['sampling/createMessage']],
    );
    assert.ok(rounds.every((r) => typeof r['requestState'] === 'string'));
  } finally {
    await client.close();
  }
});

modern('should stop every server-everything process it started when the wrap closes', async () => {
  await plain?.close();
  assert.ok(markedProcesses(endpoint!.marker).length >= 2, 'one upstream per capability set is running');
  const left = await stopWrap(endpoint);
  endpoint = undefined;
  assert.equal(left, []);
});

modern.run();

// ── a legacy client on the same endpoint ────────────────────────────────────

const legacy = suite('wrapLegacyServer over Streamable HTTP: server-everything to a legacy client');
let legacyEndpoint: Endpoint | undefined;
let legacyClient: LegacyClient | undefined;
let legacyTransport: LegacyHttpTransport | undefined;
const legacyAsked: string[] = [];
const legacyLogs: Array<{ level: string; data: unknown }> = [];
const legacyUpdates: string[] = [];

legacy.before(async () => {
  legacyEndpoint = await startWrap();
  const client = new LegacyClient(
    { name: 'legacy-spec', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    legacyAsked.push(`elicitation: ${request.params.message}`);
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
  legacyTransport = new LegacyHttpTransport(legacyEndpoint.url);
  await client.connect(legacyTransport, { timeout: 20_000 });
  legacyClient = client;
});

legacy.after(async () => {
  await legacyTransport?.terminateSession().catch(() => {});
  await legacyClient?.close();
  await stopWrap(legacyEndpoint);
});

legacy('should initialize a legacy session relayed to server-everything', async () => {
  const client = legacyClient!;
  assert.is(legacyTransport!.protocolVersion, '2025-11-25');
  assert.type(legacyTransport!.sessionId, 'string');
  assert.equal(client.getServerVersion(), { name: 'mcp-servers/everything', title: 'Everything Reference Server', version: '2.0.0' });
  assert.equal(client.getServerCapabilities()?.resources, { subscribe: true, listChanged: true });
  const init = tappedParams(legacyEndpoint!.tapped, 'up', 'initialize');
  assert.equal(
    init.map((p) => p['clientInfo']),
    [{ name: 'legacy-spec', version: '1.0.0' }],
  );
});

legacy('should list and call tools, including the ones its capabilities unlock', async () => {
  const client = legacyClient!;
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['echo', 'get-sum', ...CONDITIONAL]) assert.ok(names.includes(name), name);
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: 'legacy hello' } })), 'Echo: legacy hello');
  assert.is(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })), 'The sum of 2 and 3 is 5.');
});

legacy('should list and get prompts', async () => {
  const client = legacyClient!;
  assert.ok((await client.listPrompts()).prompts.some((p) => p.name === 'args-prompt'));
  const args = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon' } });
  assert.equal(args.messages[0]?.content, { type: 'text', text: "What's weather in Lyon?" });
});

legacy('should list and read resources and templates', async () => {
  const client = legacyClient!;
  assert.ok((await client.listResources()).resources.some((r) => r.uri === DOC));
  assert.ok(
    (await client.listResourceTemplates()).resourceTemplates.some((t) => t.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'),
  );
  const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
  assert.match((dynamic.contents[0] as { text: string }).text, /^Resource 3: This is a plaintext resource created at /);
});

legacy('should relay progress to its progress handler', async () => {
  await assertLegacyProgress(legacyClient!);
});

legacy('should honour logging/setLevel: only logs at or above the level arrive', async () => {
  const client = legacyClient!;
  const collect = async (level: Level, until: (logs: Array<{ level: string }>) => boolean) => {
    await client.setLoggingLevel(level);
    legacyLogs.length = 0;
    for (let round = 0; round < 30 && !until(legacyLogs); round++) {
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
      await sleep(10);
    }
    await sleep(50);
    return [...legacyLogs];
  };
  const high = await collect('error', (logs) => logs.length >= 2);
  assert.ok(high.length >= 2, 'logs at error or above arrived');
  assert.ok(
    high.every((l) => atOrAbove(l.level, 'error')),
    JSON.stringify(high),
  );
  const low = await collect('debug', (logs) => logs.some((l) => !atOrAbove(l.level, 'error')));
  assert.ok(
    low.some((l) => !atOrAbove(l.level, 'error')),
    'at debug, lower levels arrive too',
  );
  assert.ok(low.every((l) => LEVELS.includes(l.level as Level) && typeof l.data === 'string'));
});

legacy('should deliver resources/updated for a resources/subscribe', async () => {
  await assertLegacyResourceUpdate(legacyClient!, legacyUpdates, DOC);
});

legacy('should relay server-everything roots, elicitation and sampling requests to its own handlers', async () => {
  const client = legacyClient!;
  const roots = textOf(await client.callTool({ name: 'get-roots-list', arguments: {} }));
  assert.match(roots, '1. legacy-root\n   URI: file:///legacy/root');
  const elicited = textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
  assert.match(elicited, '- Name: Grace Hopper');
  const sampled = textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } }));
  assert.match(sampled, '"text": "a legacy sample"');
  assert.ok(legacyAsked.includes('roots'));
  assert.ok(legacyAsked.includes('elicitation: Please provide inputs for the following fields:'));
  assert.ok(legacyAsked.includes('sampling'));
  // Relayed, not translated: server-everything got the client's own answers.
  const answers = legacyEndpoint!.tapped.flatMap((t) =>
    t.direction === 'up' && 'result' in t.message ? [JSON.stringify(t.message.result)] : [],
  );
  assert.ok(answers.some((a) => a.includes('"name":"Grace Hopper"')));
  assert.ok(answers.some((a) => a.includes('"text":"a legacy sample"')));
  assert.ok(answers.some((a) => a.includes('"uri":"file:///legacy/root"')));
});

/** Reads JSON-RPC messages from an SSE response body, one at a time. */
function sseReader(response: Response): { next(): Promise<Record<string, any> | undefined> } {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trimStart())
            .join('\n');
          if (data) return JSON.parse(data) as Record<string, any>;
          continue;
        }
        const { done, value } = await reader.read();
        if (done) return undefined;
        buffer += value;
      }
    },
  };
}

legacy("should send what server-everything sends during a call on that call's own stream, for a client without a GET stream", async () => {
  const url = legacyEndpoint!.url;
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { ...base, ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
  const init = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: { elicitation: {} }, clientInfo: { name: 'raw-legacy', version: '1.0.0' } },
  });
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
  await init.text();
  try {
    assert.is((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202);
    const progressCall = sseReader(
      await post(
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 }, _meta: { progressToken: 'raw-1' } },
        },
        session,
      ),
    );
    const seen: Array<Record<string, any>> = [];
    for (let m = await progressCall.next(); m; m = await progressCall.next()) seen.push(m);
    assert.equal(
      seen.map((m) => m['method'] ?? `result ${m['id']}`),
      ['notifications/progress', 'notifications/progress', 'notifications/progress', 'result 2'],
    );
    assert.equal(
      seen.slice(0, 3).map((m) => m['params']),
      [1, 2, 3].map((progress) => ({ progress, total: 3, progressToken: 'raw-1' })),
    );

    const elicitCall = sseReader(
      await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'trigger-elicitation-request', arguments: {} } }, session),
    );
    const push = await elicitCall.next();
    assert.is(push?.['method'], 'elicitation/create');
    assert.is(
      (await post({ jsonrpc: '2.0', id: push!['id'], result: { action: 'accept', content: { name: 'Raw Client' } } }, session)).status,
      202,
    );
    const answer = await elicitCall.next();
    assert.is(answer?.['id'], 3);
    assert.match(textOf(answer?.['result']), '- Name: Raw Client');
  } finally {
    await fetch(url, { method: 'DELETE', headers: session }).catch(() => {});
  }
});

legacy('should stop the server-everything process of the session when the wrap closes', async () => {
  await legacyClient?.close();
  assert.ok(markedProcesses(legacyEndpoint!.marker).length >= 1);
  const left = await stopWrap(legacyEndpoint);
  legacyEndpoint = undefined;
  assert.equal(left, []);
});

legacy.run();
