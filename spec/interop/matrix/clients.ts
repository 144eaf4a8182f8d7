/**
 * The three client eras of the matrix as real SDK clients behind one small `Driver` surface, so the
 * script of operations is the same whichever client runs it: modern-only (v2 `Client` pinned to
 * 2026-07-28), dual-era (v2 `Client` negotiating with `mode: 'auto'`) and legacy (v1 `Client`
 * 1.32.2). Each declares elicitation, sampling and roots and answers them with its own handlers;
 * each asks for logs and subscribes the way its era does.
 */
import {
  Client as V2Client,
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport as V2Http,
  type McpSubscription,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio, getDefaultEnvironment as v2Environment } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio, getDefaultEnvironment as v1Environment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '../../../lib/transport/transport.ts';

export type ClientEra = 'modern' | 'dual' | 'legacy';
export type Level = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

export const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];
export const NAME = 'Ada';
export const MODEL_ANSWER = 'Paris';
const CONNECT_TIMEOUT_MS = 30_000;

/** How a client reaches its server: a command it spawns, a URL, or a transport made for it. */
export type Link =
  | {
      readonly kind: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly cwd: string;
      readonly env: Record<string, string>;
    }
  | { readonly kind: 'http'; readonly url: string }
  | { readonly kind: 'transport'; readonly make: () => Transport };

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Every progress value that reached the client, also those it read after the answer (which the SDKs report through `onerror`). */
  readonly onprogress?: (progress: number) => void;
}

/** What the script needs of a connected client. */
export interface Driver {
  /** The protocol version the connection settled on. */
  readonly version: string | undefined;
  readonly serverInfo: { name: string; version: string } | undefined;
  readonly serverCapabilities: Record<string, unknown> | undefined;
  /** The input requests the client's handlers answered, in order: `elicitation: <message>`, `sampling`, `roots`. */
  readonly asked: string[];
  readonly logs: Array<{ level: string; data: unknown }>;
  readonly updates: string[];
  listTools(): Promise<string[]>;
  /** Calls a tool; its text, or an error naming the tool's own error text. */
  call(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<string>;
  listPrompts(): Promise<string[]>;
  getPrompt(name: string, args: Record<string, string>): Promise<string>;
  listResources(): Promise<string[]>;
  readResource(uri: string): Promise<string>;
  /** Logs at or above `level` from now on: `logging/setLevel` on a legacy connection, the `logLevel` in every request's `_meta` on a modern one. */
  setLogLevel(level: Level): Promise<void>;
  /** Subscribes to a resource (`subscriptions/listen` on a modern connection, `resources/subscribe` on a legacy one); returns the way out. */
  subscribe(uri: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

function textOf(answer: object): string {
  const result = answer as { content?: unknown; isError?: unknown };
  const blocks = Array.isArray(result.content) ? (result.content as Array<{ type?: string; text?: string }>) : [];
  const text = blocks
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('\n');
  if (result.isError === true) throw new Error(`the tool answered isError: ${text}`);
  return text;
}

function promptText(prompt: { messages: ReadonlyArray<{ content: unknown }> }): string {
  const content = prompt.messages[0]?.content as { type?: string; text?: string } | undefined;
  return content?.type === 'text' ? String(content.text) : JSON.stringify(content);
}

function resourceText(read: { contents: readonly object[] }): string {
  const first = read.contents[0];
  return first && 'text' in first ? String(first.text) : JSON.stringify(first);
}

/** Progress the SDK read after the call was answered is reported through `onerror` as an unknown token. */
function lateProgress(error: Error): number | undefined {
  const match = /unknown token: (\{.*\})$/s.exec(error.message);
  return match ? (JSON.parse(match[1]!) as { params: { progress: number } }).params.progress : undefined;
}

/**
 * What a client records and the handlers it answers with, the same for both SDKs: its input
 * requests, logs, resource updates, and progress for the call that asked for it (the script runs
 * one such call at a time), also progress the SDK read only after the answer.
 */
function recorder() {
  const asked: string[] = [];
  const logs: Array<{ level: string; data: unknown }> = [];
  const updates: string[] = [];
  let progressTo: ((progress: number) => void) | undefined;
  return {
    asked,
    logs,
    updates,
    elicit: async (request: { params: { message: string } }) => {
      asked.push(`elicitation: ${request.params.message}`);
      return { action: 'accept' as const, content: { name: NAME } };
    },
    sample: async () => {
      asked.push('sampling');
      return { model: 'matrix-model', role: 'assistant' as const, content: { type: 'text' as const, text: MODEL_ANSWER } };
    },
    roots: async () => {
      asked.push('roots');
      return { roots: ROOTS };
    },
    log: (n: { params: { level: string; data?: unknown } }) => void logs.push({ level: n.params.level, data: n.params.data }),
    updated: (n: { params: { uri: string } }) => void updates.push(n.params.uri),
    onerror: (error: Error) => {
      const late = lateProgress(error);
      if (late !== undefined) progressTo?.(late);
    },
    /** The SDK request options of a call, its progress routed here. */
    callOptions(options: CallOptions) {
      progressTo = options.onprogress;
      return {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onprogress ? { onprogress: (p: { progress: number }) => progressTo?.(p.progress) } : {}),
        timeout: 60_000,
      };
    },
  };
}

/** The transport for `link`: the client SDK's own stdio or HTTP transport, or the one made for it. */
function open(
  link: Link,
  environment: Record<string, string>,
  stdio: (params: { command: string; args: string[]; cwd: string; env: Record<string, string>; stderr: 'ignore' }) => object,
  http: (url: URL) => object,
): object {
  if (link.kind === 'stdio')
    return stdio({ command: link.command, args: [...link.args], cwd: link.cwd, env: { ...environment, ...link.env }, stderr: 'ignore' });
  return link.kind === 'http' ? http(new URL(link.url)) : link.make();
}

/** What every driver says about its connection, read once it is open. */
function connection(
  version: string | undefined,
  client: { getServerVersion(): { name: string; version: string } | undefined; getServerCapabilities(): object | undefined },
  r: ReturnType<typeof recorder>,
) {
  const info = client.getServerVersion();
  return {
    version,
    serverInfo: info && { name: info.name, version: info.version },
    serverCapabilities: client.getServerCapabilities() as Record<string, unknown> | undefined,
    asked: r.asked,
    logs: r.logs,
    updates: r.updates,
  };
}

/** The v2 SDK client: modern-only (pinned) or dual-era (`auto`). */
async function v2Driver(era: 'modern' | 'dual', link: Link): Promise<Driver> {
  const client = new V2Client(
    { name: `v2-${era}-client`, version: '2.4.0' },
    {
      versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'auto' },
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
    },
  );
  const r = recorder();
  client.setRequestHandler('elicitation/create', r.elicit);
  client.setRequestHandler('sampling/createMessage', r.sample);
  client.setRequestHandler('roots/list', r.roots);
  client.setNotificationHandler('notifications/message', r.log);
  client.setNotificationHandler('notifications/resources/updated', r.updated);
  client.onerror = r.onerror;
  const transport = open(
    link,
    v2Environment(),
    (p) => new V2Stdio(p),
    (url) => new V2Http(url),
  );
  // (The cast bridges this repository's exactOptionalPropertyTypes and the SDK's message typings.)
  await client.connect(transport as never, { timeout: CONNECT_TIMEOUT_MS });
  const modern = client.getProtocolEra() === 'modern';
  let level: Level | undefined;
  const meta = () => (modern && level ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {});
  return {
    ...connection(client.getNegotiatedProtocolVersion(), client, r),
    listTools: async () => (await client.listTools(meta())).tools.map((t) => t.name),
    call: async (name, args = {}, options = {}) =>
      textOf(await client.callTool({ name, arguments: args, ...meta() }, r.callOptions(options))),
    listPrompts: async () => (await client.listPrompts(meta())).prompts.map((p) => p.name),
    getPrompt: async (name, args) => promptText(await client.getPrompt({ name, arguments: args, ...meta() })),
    listResources: async () => (await client.listResources(meta())).resources.map((x) => x.uri),
    readResource: async (uri) => resourceText(await client.readResource({ uri, ...meta() })),
    async setLogLevel(next) {
      if (modern) level = next;
      else await client.setLoggingLevel(next);
    },
    async subscribe(uri) {
      if (!modern) {
        await client.subscribeResource({ uri });
        return async () => void (await client.unsubscribeResource({ uri }));
      }
      const subscription: McpSubscription = await client.listen({ resourceSubscriptions: [uri] });
      if (!subscription.honoredFilter.resourceSubscriptions?.includes(uri))
        throw new Error(`the server did not honour the subscription: ${JSON.stringify(subscription.honoredFilter)}`);
      return () => subscription.close();
    },
    close: () => client.close(),
  };
}

/** The v1 SDK client 1.32.2: legacy only. */
async function v1Driver(link: Link): Promise<Driver> {
  const client = new V1Client(
    { name: 'v1-legacy-client', version: '1.32.2' },
    { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } },
  );
  const r = recorder();
  client.setRequestHandler(ElicitRequestSchema, r.elicit);
  client.setRequestHandler(CreateMessageRequestSchema, r.sample);
  client.setRequestHandler(ListRootsRequestSchema, r.roots);
  client.setNotificationHandler(LoggingMessageNotificationSchema, r.log);
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, r.updated);
  client.onerror = r.onerror;
  const transport = open(
    link,
    v1Environment(),
    (p) => new V1Stdio(p),
    (url) => new V1Http(url),
  );
  // The v1 client keeps the negotiated version to itself: read it off the initialize answer.
  let negotiated: string | undefined;
  const tapped = transport as { start(): Promise<void>; onmessage?: ((message: unknown, extra?: unknown) => void) | undefined };
  const start = tapped.start.bind(tapped);
  tapped.start = () => {
    const deliver = tapped.onmessage;
    tapped.onmessage = (message, extra) => {
      const version = (message as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
      if (negotiated === undefined && typeof version === 'string') negotiated = version;
      deliver?.(message, extra);
    };
    return start();
  };
  await client.connect(transport as never, { timeout: CONNECT_TIMEOUT_MS });
  return {
    ...connection(negotiated, client, r),
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args = {}, options = {}) =>
      textOf(await client.callTool({ name, arguments: args }, undefined, r.callOptions(options))),
    listPrompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
    getPrompt: async (name, args) => promptText(await client.getPrompt({ name, arguments: args })),
    listResources: async () => (await client.listResources()).resources.map((x) => x.uri),
    readResource: async (uri) => resourceText(await client.readResource({ uri })),
    setLogLevel: async (level) => void (await client.setLoggingLevel(level)),
    async subscribe(uri) {
      await client.subscribeResource({ uri });
      return async () => void (await client.unsubscribeResource({ uri }));
    },
    close: () => client.close(),
  };
}

/** Connects a client of `era` over `link`. */
export function connectClient(era: ClientEra, link: Link): Promise<Driver> {
  return era === 'legacy' ? v1Driver(link) : v2Driver(era, link);
}
