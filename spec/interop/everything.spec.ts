/**
 * Interop with the unmodified legacy server-everything behind the wrap, over Streamable HTTP and
 * over stdio: one suite run per transport, used by a modern-only v2 SDK client (pinned to
 * 2026-07-28) and by a legacy v1 SDK client, each through its own SDK's transport. Over HTTP the
 * wrap is `wrapLegacyServer` served on 127.0.0.1 in this process, both clients on the same kind of
 * endpoint, and the upstream pipes (to server-everything and back) are tapped, so the checks also
 * compare with what server-everything sent and was sent; over stdio it is
 * `mcp-dual-era serve --stdio -- node server-everything stdio`, the CLI in a child process. On each
 * transport the modern client is first shown to fail against server-everything without the wrap.
 * Every process a suite starts carries a marker in its environment, so the suite can check that
 * none is left behind. Beside the checks both transports pass are each one's own: over HTTP, what a
 * raw legacy client without a GET stream gets on its call's own stream; over stdio, the order of
 * progress and answer on the wire.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  Client as ModernClient,
  LOG_LEVEL_META_KEY,
  SdkError,
  StreamableHTTPClientTransport as ModernHttpTransport,
  type FetchLike,
  type Transport as ModernTransport,
} from '@modelcontextprotocol/client';
import {
  getDefaultEnvironment as modernDefaultEnvironment,
  StdioClientTransport as ModernStdioTransport,
} from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  getDefaultEnvironment as legacyDefaultEnvironment,
  StdioClientTransport as LegacyStdioTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js';
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
  EVERYTHING,
  everythingBackend,
  LEVELS,
  MARKER,
  markedProcesses,
  markedProcessesGone,
  reapMarked,
  serveStdioCommand,
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
const ELICITED = 'elicitation: Please provide inputs for the following fields:';
const SAMPLED = 'sampling: Resource trigger-sampling-request context: say hi';

type Processes = Array<{ pid: number; command: string }>;

/** What a suite's checks have of the wrap in front of server-everything, whichever the transport. */
interface Wrapped {
  /** In the environment of every process of this wrap (server-everything's, and over stdio the wrap's own). */
  readonly marker: string;
  /** Every message on the upstream pipes (to server-everything and back), in order: over HTTP, where the wrap runs in this process. */
  readonly upstream?: Tapped[];
  /** Where the wrap listens, over HTTP. */
  readonly url?: URL;
  /**
   * Checks that the wrap's processes are running, then closes the client (over HTTP the wrap too,
   * which outlives its clients); returns the processes still running 5 s later (and kills them).
   */
  end(): Promise<Processes>;
  /** Closes whatever is still open and kills what is left. */
  close(): Promise<void>;
}

/** A modern-only client through the wrap. */
interface ModernWrapped extends Wrapped {
  /** The suite's client. */
  readonly client: ModernClient;
  /** Whether the suite's client declares elicitation, sampling and roots (one client to a process over stdio; none over HTTP). */
  readonly declaresInputs: boolean;
  /**
   * Whether its progress handler may miss the last progress of a call: over stdio the v2 client
   * runs progress handlers a tick after reading them and forgets a request once its answer is
   * read, so under load it can miss the last one (the wire itself is checked by stdio's own check).
   */
  readonly lastProgressMayBeMissed: boolean;
  /** A client that declares elicitation, sampling and roots: over stdio the suite's own, over HTTP a second one on the same endpoint. */
  inputs(): Promise<InputsClient>;
}

/** A modern client that answers elicitation, sampling and roots, and what it was asked. */
interface InputsClient {
  readonly client: ModernClient;
  readonly asked: string[];
  /** Checks the input_required rounds its calls took, as this transport has them. */
  rounds(): void;
  close(): Promise<void>;
}

/** The legacy suite's client, with what its handlers were asked and received. */
interface LegacyPeer {
  readonly client: LegacyClient;
  readonly asked: string[];
  readonly logs: Array<{ level: string; data: unknown }>;
  readonly updates: string[];
}

/** A legacy client's session through the wrap. */
interface LegacyConnection extends Wrapped {
  /** Checks what the client's transport shows of its session, where it shows it (over HTTP: the version and the session id). */
  session?(): void;
}

type LegacyWrapped = LegacyPeer & LegacyConnection;

type Checks<W> = ReadonlyArray<readonly [string, (w: W) => Promise<void>]>;

/** The wrap in front of server-everything on one transport, and how each client reaches it (or server-everything alone). */
interface WrapOn {
  readonly name: 'Streamable HTTP' | 'stdio';
  /** The wrap, as its suites are named. */
  readonly wrap: string;
  /** Why server-everything alone refuses a modern-only client on this transport. */
  readonly refusal: string;
  /** server-everything without the wrap: the transport to it, what its refusal shows here (`failure` is what connecting threw), and its end. */
  unwrapped(): Promise<{ transport: ModernTransport; refused(failure: unknown): void; close(): Promise<void> }>;
  /** Starts the wrap and connects the modern suite's client to it. */
  modern(): Promise<ModernWrapped>;
  /** Starts the wrap and connects `client` to it. */
  legacy(client: LegacyClient): Promise<LegacyConnection>;
  /** What ends the processes of the wrap. */
  readonly done: string;
  /** This transport's own checks, run after the shared ones. */
  readonly modernOwn: Checks<ModernWrapped>;
  readonly legacyOwn: Checks<LegacyWrapped>;
}

// ── the clients ─────────────────────────────────────────────────────────────

/** A modern-only (pinned) v2 client; with `inputs`, it declares and answers elicitation, sampling and roots. */
function modernClient(inputs: boolean): { client: ModernClient; asked: string[] } {
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

/** A legacy v1 client that answers elicitation, sampling and roots, and collects logs and resource updates. */
function legacyPeer(): LegacyPeer {
  const peer: LegacyPeer = {
    client: new LegacyClient(
      { name: 'legacy-spec', version: '1.0.0' },
      { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } },
    ),
    asked: [],
    logs: [],
    updates: [],
  };
  const { client, asked } = peer;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(`elicitation: ${request.params.message}`);
    return { action: 'accept', content: { name: 'Grace Hopper', check: true } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked.push('sampling');
    return { model: 'legacy-model', role: 'assistant', content: { type: 'text', text: 'a legacy sample' } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.push('roots');
    return { roots: [{ uri: 'file:///legacy/root', name: 'legacy-root' }] };
  });
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n) => void peer.logs.push({ level: n.params.level, data: n.params.data }),
  );
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void peer.updates.push(n.params.uri));
  return peer;
}

/** The processes marked with `marker` still running after 5 s (killed then). */
async function leftBehind(marker: string): Promise<Processes> {
  if (await markedProcessesGone(marker, 5000)) return [];
  return reapMarked(marker);
}

// ── what a modern-only client must get through the wrap, on either transport ──

/**
 * Starts and stops server-everything's simulated logging until `until()` holds (at most 30 times),
 * each call asking for `level` (no logLevel without). Each time simulated logging starts,
 * server-everything sends one log of a random level at once (and every 5 s after, so it is
 * switched off again straight away).
 */
async function toggleLogging(client: ModernClient, level: Level | undefined, until: () => boolean): Promise<void> {
  const meta = level ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {};
  for (let starts = 0; starts < 30 && !until(); starts++) {
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {}, ...meta });
  }
  await sleep(50);
}

const MODERN: Checks<ModernWrapped> = [
  [
    'should complete server-everything roots, elicitation and sampling tools through input_required rounds',
    async (w) => {
      const inputs = await w.inputs();
      const { client } = inputs;
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
        assert.match(elicited, '- Agreed to terms: true');
        const sampled = textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } }));
        assert.match(sampled, '"model": "spec-model"');
        assert.match(sampled, '"text": "a sampled answer"');
        inputs.rounds();
      } finally {
        await inputs.close();
      }
    },
  ],
  [
    'should discover server-everything as a 2026-07-28 server',
    async ({ client }) => {
      assert.is(client.getProtocolEra(), 'modern');
      assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
      assert.equal(client.getServerVersion(), { name: 'mcp-servers/everything', title: 'Everything Reference Server', version: '2.0.0' });
      const discovered = await client.discover();
      assert.ok(discovered.supportedVersions.includes('2026-07-28'));
      assert.ok(!discovered.supportedVersions.some((v) => v.startsWith('2025') || v.startsWith('2024')));
      assert.equal(discovered.capabilities.resources, { subscribe: true, listChanged: true });
      assert.match(client.getInstructions() ?? '', /Everything Server/);
    },
  ],
  [
    'should list and call tools, and list the tools that need capabilities only to a client that declared them',
    async ({ client, declaresInputs }) => {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ['echo', 'get-sum', 'trigger-long-running-operation', 'toggle-simulated-logging'])
        assert.ok(names.includes(name), name);
      for (const name of CONDITIONAL) assert.is(names.includes(name), declaresInputs, name);
      assert.is(
        textOf(await client.callTool({ name: 'echo', arguments: { message: 'hello through the wrap' } })),
        'Echo: hello through the wrap',
      );
      assert.is(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 19, b: 23 } })), 'The sum of 19 and 23 is 42.');
      const structured = await client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } });
      assert.equal(structured.structuredContent, { temperature: 33, conditions: 'Cloudy', humidity: 82 });
    },
  ],
  [
    'should list and get prompts, with their arguments',
    async ({ client }) => {
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
      const city = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
      assert.equal(city.messages[0]?.content, { type: 'text', text: "What's weather in Paris?" });
    },
  ],
  [
    'should list and read resources and resource templates',
    async ({ client }) => {
      const resources = (await client.listResources()).resources;
      assert.ok(resources.some((r) => r.uri === DOC && r.mimeType === 'text/markdown'));
      const doc = await client.readResource({ uri: DOC });
      assert.is(doc.contents[0]?.uri, DOC);
      assert.match((doc.contents[0] as { text: string }).text, /architecture/i);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      assert.ok(templates.includes('demo://resource/dynamic/text/{resourceId}'));
      const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
      assert.match((dynamic.contents[0] as { text: string }).text, /^Resource 7: This is a plaintext resource created at /);
    },
  ],
  [
    'should deliver the progress of a long-running tool to its progress handler',
    async ({ client, lastProgressMayBeMissed }) => {
      const progress: Array<{ progress: number; total?: number }> = [];
      const result = await client.callTool(
        { name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
        { onprogress: (p) => progress.push({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}) }) },
      );
      assert.is(textOf(result), LONG_OP);
      await waitFor(() => progress.length >= 3, 1000);
      const all = [1, 2, 3].map((i) => ({ progress: i, total: 3 }));
      if (!lastProgressMayBeMissed) assert.equal(progress, all);
      else {
        assert.ok(progress.length >= 2, JSON.stringify(progress));
        assert.equal(progress, all.slice(0, progress.length));
      }
    },
  ],
  [
    'should deliver the logs of a request only at or above the level it asked for',
    async ({ client, upstream }) => {
      const threshold: Level = 'error';
      const delivered: Array<{ level: string; data: unknown }> = [];
      client.setNotificationHandler('notifications/message', (n) => void delivered.push({ level: n.params.level, data: n.params.data }));
      await toggleLogging(client, 'debug', () => delivered.some((l) => !atOrAbove(l.level, threshold)));
      assert.ok(
        delivered.some((l) => !atOrAbove(l.level, threshold)),
        `at debug, logs below ${threshold} arrive`,
      );
      delivered.length = 0;
      const from = upstream?.length ?? 0;
      const emitted = () =>
        upstream ? (tappedParams(upstream.slice(from), 'down', 'notifications/message') as Array<{ level: string; data: unknown }>) : [];
      const bothSent = () => {
        const levels = emitted().map((l) => l.level);
        return levels.some((l) => atOrAbove(l, threshold)) && levels.some((l) => !atOrAbove(l, threshold));
      };
      await toggleLogging(client, threshold, () => delivered.length >= 2 && (!upstream || bothSent()));
      assert.ok(delivered.length >= 2, `logs at ${threshold} or above arrive`);
      assert.ok(
        delivered.every((l) => atOrAbove(l.level, threshold)),
        `a log below ${threshold} arrived: ${JSON.stringify(delivered)}`,
      );
      if (upstream) {
        const sent = emitted();
        assert.ok(
          sent.some((l) => !atOrAbove(l.level, threshold)),
          'server-everything sent a log below the level',
        );
        assert.ok(
          sent.some((l) => atOrAbove(l.level, threshold)),
          'server-everything sent a log at or above the level',
        );
        assert.equal(
          delivered,
          sent.filter((l) => atOrAbove(l.level, threshold)).map((l) => ({ level: l.level, data: l.data })),
        );
      }
      client.removeNotificationHandler('notifications/message');
    },
  ],
  [
    'should send no logs to a request that asked for none',
    async ({ client, upstream }) => {
      const delivered: unknown[] = [];
      client.setNotificationHandler('notifications/message', (n) => void delivered.push(n.params));
      const from = upstream?.length ?? 0;
      await toggleLogging(client, undefined, () => false);
      if (upstream) assert.ok(tappedParams(upstream.slice(from), 'down', 'notifications/message').length > 0, 'server-everything logged');
      assert.equal(delivered, [], 'no logLevel, no logs');
      client.removeNotificationHandler('notifications/message');
    },
  ],
  [
    'should deliver resource updates on a subscriptions/listen stream',
    async ({ client, upstream }) => {
      const updates: Array<{ uri: string; subscriptionId: unknown }> = [];
      client.setNotificationHandler(
        'notifications/resources/updated',
        (n) => void updates.push({ uri: n.params.uri, subscriptionId: n.params._meta?.['io.modelcontextprotocol/subscriptionId'] }),
      );
      const subscription = await client.listen({ resourceSubscriptions: [DOC], toolsListChanged: true });
      try {
        assert.equal(subscription.honoredFilter, { toolsListChanged: true, resourceSubscriptions: [DOC] });
        if (upstream) assert.equal(tappedParams(upstream, 'up', 'resources/subscribe'), [{ uri: DOC }]);
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
      if (upstream)
        assert.ok(
          await waitFor(() => tappedParams(upstream, 'up', 'resources/unsubscribe').length > 0, 2000),
          'unsubscribed upstream when the listen ended',
        );
    },
  ],
];

// ── what a legacy client must get through the wrap, on either transport ─────

const LEGACY: Checks<LegacyWrapped> = [
  [
    'should initialize a legacy session relayed to server-everything',
    async ({ client, upstream, session }) => {
      session?.();
      assert.equal(client.getServerVersion(), { name: 'mcp-servers/everything', title: 'Everything Reference Server', version: '2.0.0' });
      assert.equal(client.getServerCapabilities()?.resources, { subscribe: true, listChanged: true });
      if (upstream)
        assert.equal(
          tappedParams(upstream, 'up', 'initialize').map((p) => p['clientInfo']),
          [{ name: 'legacy-spec', version: '1.0.0' }],
        );
    },
  ],
  [
    'should list and call tools, including the ones its capabilities unlock',
    async ({ client }) => {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ['echo', 'get-sum', ...CONDITIONAL]) assert.ok(names.includes(name), name);
      assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: 'legacy hello' } })), 'Echo: legacy hello');
      assert.is(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })), 'The sum of 2 and 3 is 5.');
    },
  ],
  [
    'should list and get prompts',
    async ({ client }) => {
      assert.ok((await client.listPrompts()).prompts.some((p) => p.name === 'args-prompt'));
      const args = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon' } });
      assert.equal(args.messages[0]?.content, { type: 'text', text: "What's weather in Lyon?" });
      const simple = await client.getPrompt({ name: 'simple-prompt' });
      assert.equal(simple.messages[0]?.content, { type: 'text', text: 'This is a simple prompt without arguments.' });
    },
  ],
  [
    'should list and read resources and templates',
    async ({ client }) => {
      assert.ok((await client.listResources()).resources.some((r) => r.uri === DOC));
      assert.ok(
        (await client.listResourceTemplates()).resourceTemplates.some((t) => t.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'),
      );
      const doc = await client.readResource({ uri: DOC });
      assert.is(doc.contents[0]?.mimeType, 'text/markdown');
      const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
      assert.match((dynamic.contents[0] as { text: string }).text, /^Resource 3: This is a plaintext resource created at /);
    },
  ],
  ['should relay progress to its progress handler', ({ client }) => assertLegacyProgress(client)],
  [
    'should honour logging/setLevel: only logs at or above the level arrive',
    async ({ client, logs }) => {
      const collect = async (level: Level, until: (logs: Array<{ level: string }>) => boolean) => {
        await client.setLoggingLevel(level);
        logs.length = 0;
        for (let round = 0; round < 30 && !until(logs); round++) {
          await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
          await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
          await sleep(10);
        }
        await sleep(50);
        return [...logs];
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
    },
  ],
  ['should deliver resources/updated for a resources/subscribe', ({ client, updates }) => assertLegacyResourceUpdate(client, updates, DOC)],
  [
    'should relay server-everything roots, elicitation and sampling requests to its own handlers',
    async ({ client, asked, upstream }) => {
      const roots = textOf(await client.callTool({ name: 'get-roots-list', arguments: {} }));
      assert.match(roots, '1. legacy-root\n   URI: file:///legacy/root');
      const elicited = textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
      assert.match(elicited, '- Name: Grace Hopper');
      const sampled = textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } }));
      assert.match(sampled, '"text": "a legacy sample"');
      assert.ok(asked.includes('roots'), JSON.stringify(asked));
      assert.ok(asked.includes(ELICITED), JSON.stringify(asked));
      assert.ok(asked.includes('sampling'), JSON.stringify(asked));
      if (!upstream) return;
      // Relayed, not translated: server-everything got the client's own answers.
      const answers = upstream.flatMap((t) => (t.direction === 'up' && 'result' in t.message ? [JSON.stringify(t.message.result)] : []));
      assert.ok(answers.some((a) => a.includes('"name":"Grace Hopper"')));
      assert.ok(answers.some((a) => a.includes('"text":"a legacy sample"')));
      assert.ok(answers.some((a) => a.includes('"uri":"file:///legacy/root"')));
    },
  ],
];

// ── over Streamable HTTP: wrapLegacyServer in this process ──────────────────

interface Endpoint {
  /** In the environment of every server-everything process this endpoint starts. */
  marker: string;
  wrap: LegacyServerWrap;
  http: RunningHttpServer;
  url: URL;
  /** Every message on the upstream pipes (to server-everything and back), in order. */
  tapped: Tapped[];
  /** Closes the wrap and the listener (once); returns the server-everything processes still running after 5 s (and kills them). */
  stop(): Promise<Processes>;
}

async function startWrap(): Promise<Endpoint> {
  const tapped: Tapped[] = [];
  const marker = randomUUID();
  const wrap = wrapLegacyServer({ upstream: everythingBackend(marker, (seen) => tapped.push(seen)) });
  const http = await serveNodeHttp(wrap, { port: 0 });
  let stopped: Promise<Processes> | undefined;
  const stop = async () => {
    await wrap.close();
    await http.close();
    return leftBehind(marker);
  };
  return { marker, wrap, http, url: new URL(`${http.origin}/mcp`), tapped, stop: () => (stopped ??= stop()) };
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

/**
 * The rounds over HTTP. The roots came through rounds: the get-roots-list call's own (it came
 * first; the server's own fetch 350 ms into its session may land while it runs and be asked too)
 * and, the client being anonymous (not to be told from another anonymous client on the same
 * session), one before each later call, so that the server holds this client's roots when it runs it.
 */
function roundsOverHttp(asked: string[], recorder: ReturnType<typeof recordingFetch>, tapped: Tapped[]): void {
  assert.equal(
    asked.filter((a) => a !== 'roots'),
    [ELICITED, SAMPLED],
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
  assert.is(tappedParams(tapped, 'down', 'elicitation/create').length, 1);
  const rounds = recorder.answers.flatMap((a) => (a.json?.['result']?.['resultType'] === 'input_required' ? [a.json['result']] : []));
  const asks = rounds.map((r) => Object.values(r['inputRequests'] as Record<string, { method: string }>).map((i) => i.method));
  // The call's own round, with the server's own fetch of roots in it when that landed meanwhile.
  assert.ok(asks[0]!.length >= 1 && asks[0]!.every((m) => m === 'roots/list'), JSON.stringify(asks[0]));
  assert.equal(
    asks.filter((methods) => !methods.every((m) => m === 'roots/list')),
    [['elicitation/create'], ['sampling/createMessage']],
  );
  assert.ok(rounds.every((r) => typeof r['requestState'] === 'string'));
}

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

const HTTP: WrapOn = {
  name: 'Streamable HTTP',
  wrap: 'wrapLegacyServer over Streamable HTTP',
  refusal: 'its server/discover gets 400 "Server not initialized"',
  unwrapped: async () => {
    const server = await startEverythingHttp();
    const recorder = recordingFetch();
    return {
      transport: new ModernHttpTransport(server.url, { fetch: recorder.fetch }),
      refused: () => {
        assert.is(recorder.posted[0]?.['method'], 'server/discover');
        assert.is(recorder.answers[0]?.status, 400);
        assert.equal(recorder.answers[0]?.json?.['error'], { code: -32000, message: 'Bad Request: Server not initialized' });
      },
      close: () => server.close(),
    };
  },
  modern: async () => {
    const endpoint = await startWrap();
    const { client } = modernClient(false);
    await client.connect(new ModernHttpTransport(endpoint.url), { timeout: 20_000 }).catch(async (e: unknown) => {
      await endpoint.stop();
      throw e;
    });
    return {
      marker: endpoint.marker,
      upstream: endpoint.tapped,
      url: endpoint.url,
      client,
      declaresInputs: false,
      lastProgressMayBeMissed: false,
      inputs: async () => {
        const { client: inputs, asked } = modernClient(true);
        const recorder = recordingFetch();
        await inputs.connect(new ModernHttpTransport(endpoint.url, { fetch: recorder.fetch }), { timeout: 20_000 });
        return { client: inputs, asked, rounds: () => roundsOverHttp(asked, recorder, endpoint.tapped), close: () => inputs.close() };
      },
      end: async () => {
        await client.close();
        assert.ok(markedProcesses(endpoint.marker).length >= 2, 'one upstream per capability set is running');
        return endpoint.stop();
      },
      close: async () => {
        await client.close();
        await endpoint.stop();
      },
    };
  },
  legacy: async (client) => {
    const endpoint = await startWrap();
    const transport = new LegacyHttpTransport(endpoint.url);
    await client.connect(transport, { timeout: 20_000 }).catch(async (e: unknown) => {
      await endpoint.stop();
      throw e;
    });
    return {
      marker: endpoint.marker,
      upstream: endpoint.tapped,
      url: endpoint.url,
      session: () => {
        assert.is(transport.protocolVersion, '2025-11-25');
        assert.type(transport.sessionId, 'string');
      },
      end: async () => {
        await client.close();
        assert.ok(markedProcesses(endpoint.marker).length >= 1, "the session's server-everything is running");
        return endpoint.stop();
      },
      close: async () => {
        await transport.terminateSession().catch(() => {});
        await client.close();
        await endpoint.stop();
      },
    };
  },
  done: 'the wrap has closed',
  modernOwn: [],
  legacyOwn: [
    [
      "should send what server-everything sends during a call on that call's own stream, for a client without a GET stream",
      async ({ url }) => {
        const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        const post = (body: unknown, headers: Record<string, string> = {}) =>
          fetch(url!, { method: 'POST', headers: { ...base, ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
        const init = await post({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: { elicitation: {} },
            clientInfo: { name: 'raw-legacy', version: '1.0.0' },
          },
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
                params: {
                  name: 'trigger-long-running-operation',
                  arguments: { duration: 0.3, steps: 3 },
                  _meta: { progressToken: 'raw-1' },
                },
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
            await post(
              { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'trigger-elicitation-request', arguments: {} } },
              session,
            ),
          );
          const push = await elicitCall.next();
          assert.is(push?.['method'], 'elicitation/create');
          assert.is(
            (await post({ jsonrpc: '2.0', id: push!['id'], result: { action: 'accept', content: { name: 'Raw Client' } } }, session))
              .status,
            202,
          );
          const answer = await elicitCall.next();
          assert.is(answer?.['id'], 3);
          assert.match(textOf(answer?.['result']), '- Name: Raw Client');
        } finally {
          await fetch(url!, { method: 'DELETE', headers: session }).catch(() => {});
        }
      },
    ],
  ],
};

// ── over stdio: mcp-dual-era serve --stdio in a child process ────────────────

/**
 * The rounds over stdio. The roots came through a round (the call came first), or from the
 * server's own fetch 350 ms into its session, answered by the wrap from its configured roots; on
 * stdio a fetch that lands while the call runs cannot be told from the call's own (no related
 * request id), so the client may be asked twice.
 */
function roundsOverStdio(asked: string[], sent: Array<Record<string, any>>): void {
  const rootsRounds = asked.filter((a) => a === 'roots').length;
  assert.ok(rootsRounds <= 2);
  assert.equal(asked.slice(rootsRounds), [ELICITED, SAMPLED]);
  const retries = sent.filter((m) => m['method'] === 'tools/call' && m['params']?.['requestState'] !== undefined);
  assert.equal(
    retries.map((m) => m['params']['name']),
    [...Array.from({ length: rootsRounds }, () => 'get-roots-list'), 'trigger-elicitation-request', 'trigger-sampling-request'],
  );
  for (const retry of retries.slice(0, rootsRounds))
    assert.equal(Object.values(retry['params']['inputResponses'] as Record<string, { roots: unknown }>)[0]?.roots, ROOTS);
}

const STDIO: WrapOn = {
  name: 'stdio',
  wrap: 'mcp-dual-era serve --stdio',
  refusal: 'server/discover is not a method it knows',
  unwrapped: async () => {
    const marker = randomUUID();
    const transport = new ModernStdioTransport({
      command: process.execPath,
      args: [EVERYTHING, 'stdio'],
      env: { ...modernDefaultEnvironment(), [MARKER]: marker },
      stderr: 'ignore',
    });
    return {
      transport,
      refused: (failure) => assert.match((failure as Error).message, 'did not offer pinned protocol version 2026-07-28'),
      close: async () => {
        await transport.close();
        await markedProcessesGone(marker, 3000);
        reapMarked(marker);
      },
    };
  },
  modern: async () => {
    const marker = randomUUID();
    const { client, asked } = modernClient(true);
    const transport = new ModernStdioTransport({ ...serveStdioCommand(marker, modernDefaultEnvironment()), stderr: 'ignore' });
    const sent: Array<Record<string, any>> = [];
    const send = transport.send.bind(transport);
    transport.send = (message) => {
      sent.push(message as Record<string, any>);
      return send(message);
    };
    const close = async () => {
      await client.close();
      await transport.close();
    };
    await client.connect(transport, { timeout: 30_000 }).catch(async (e: unknown) => {
      await close();
      reapMarked(marker);
      throw e;
    });
    return {
      marker,
      client,
      declaresInputs: true,
      lastProgressMayBeMissed: true,
      inputs: async () => ({ client, asked, rounds: () => roundsOverStdio(asked, sent), close: async () => {} }),
      end: async () => {
        assert.ok(markedProcesses(marker).length >= 2, 'the wrap and server-everything are running');
        await close();
        return leftBehind(marker);
      },
      close: async () => {
        await close();
        reapMarked(marker);
      },
    };
  },
  legacy: async (client) => {
    const marker = randomUUID();
    const transport = new LegacyStdioTransport({ ...serveStdioCommand(marker, legacyDefaultEnvironment()), stderr: 'ignore' });
    await client.connect(transport, { timeout: 30_000 }).catch(async (e: unknown) => {
      await client.close();
      reapMarked(marker);
      throw e;
    });
    return {
      marker,
      end: async () => {
        assert.ok(markedProcesses(marker).length >= 2, 'the wrap and server-everything are running');
        await client.close();
        return leftBehind(marker);
      },
      close: async () => {
        await client.close();
        reapMarked(marker);
      },
    };
  },
  done: 'the client has closed',
  modernOwn: [
    [
      'should write every progress notification before the answer on the wire',
      async ({ marker }) => {
        const cmd = serveStdioCommand(marker, process.env as Record<string, string>);
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
      },
    ],
  ],
  legacyOwn: [],
};

// ── one run per transport ───────────────────────────────────────────────────

for (const on of [HTTP, STDIO]) {
  const unwrapped = suite(`server-everything over ${on.name} without a wrap`);

  unwrapped(`should refuse a modern-only client: ${on.refusal}`, async () => {
    const { client } = modernClient(false);
    const server = await on.unwrapped();
    try {
      let failure: unknown;
      await client.connect(server.transport, { timeout: 10_000 }).catch((e: unknown) => (failure = e));
      assert.instance(failure, SdkError);
      assert.is((failure as SdkError).code, 'ERA_NEGOTIATION_FAILED');
      server.refused(failure);
    } finally {
      await client.close();
      await server.close();
    }
  });

  unwrapped.run();

  eraSuite(`${on.wrap}: server-everything to a modern-only client`, on.modern, [...MODERN, ...on.modernOwn], on.done);
  eraSuite(
    `${on.wrap}: server-everything to a legacy client`,
    async () => {
      const peer = legacyPeer();
      return { ...peer, ...(await on.legacy(peer.client)) };
    },
    [...LEGACY, ...on.legacyOwn],
    on.done,
  );
}

/** One client's suite: the wrap opened for it, its checks in order, and no process left once it is `done`. */
function eraSuite<W extends Wrapped>(name: string, open: () => Promise<W>, checks: Checks<W>, done: string): void {
  const s = suite(name);
  let wrapped: W | undefined;
  s.before(async () => {
    wrapped = await open();
  });
  s.after(async () => {
    await wrapped?.close();
  });
  for (const [what, check] of checks) s(what, () => check(wrapped!));
  s(`should leave no process behind once ${done}`, async () => {
    assert.equal(await wrapped!.end(), []);
  });
  s.run();
}
