/**
 * The three client eras of the matrix as real SDK clients behind one small `Driver` surface, so the
 * script of operations is the same whichever client runs it: modern-only (v2 `Client` pinned to
 * 2026-07-28), dual-era (v2 `Client` negotiating with `mode: 'auto'`) and legacy (v1 `Client`
 * 1.32.2). Each declares elicitation, sampling and roots and answers them with its own handlers;
 * each asks for logs and subscribes the way its era does.
 */
import { Client as V2Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport as V2Http, type McpSubscription } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Stdio, getDefaultEnvironment as v2Environment } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio, getDefaultEnvironment as v1Environment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1Http } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '../../../lib/transport/transport.ts';

export type ClientEra = 'modern' | 'dual' | 'legacy';
export type Level = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

export const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];
export const NAME = 'Ada';
export const MODEL_ANSWER = 'Paris';
const CONNECT_TIMEOUT_MS = 30_000;

/** How a client reaches its server: a command it spawns, a URL, or a transport made for it. */
export type Link =
  | { readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[]; readonly cwd: string; readonly env: Record<string, string> }
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
  const text = blocks.filter((c) => c.type === 'text').map((c) => c.text ?? '').join('\n');
  if (result.isError === true) throw new Error(`the tool answered isError: ${text}`);
  return text;
}

/** Progress the SDK read after the call was answered is reported through `onerror` as an unknown token. */
function lateProgress(error: Error): number | undefined {
  const match = /unknown token: (\{.*\})$/s.exec(error.message);
  return match ? (JSON.parse(match[1]!) as { params: { progress: number } }).params.progress : undefined;
}

/**
 * Where progress goes: the call that asked for it (the script runs one such call at a time), also
 * for notifications the SDK read only after the answer.
 */
function progressSink(): { set(sink: ((progress: number) => void) | undefined): void; handler: (p: { progress: number }) => void; onerror: (error: Error) => void } {
  let current: ((progress: number) => void) | undefined;
  return {
    set: (sink) => void (current = sink),
    handler: (p) => current?.(p.progress),
    onerror: (error) => {
      const late = lateProgress(error);
      if (late !== undefined) current?.(late);
    },
  };
}

/** The v2 SDK client: modern-only (pinned) or dual-era (`auto`). */
async function v2Driver(era: 'modern' | 'dual', link: Link): Promise<Driver> {
  const client = new V2Client(
    { name: `v2-${era}-client`, version: '2.4.0' },
    { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'auto' }, capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
  );
  const asked: string[] = [];
  const logs: Array<{ level: string; data: unknown }> = [];
  const updates: string[] = [];
  const progress = progressSink();
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(`elicitation: ${request.params.message}`);
    return { action: 'accept', content: { name: NAME } };
  });
  client.setRequestHandler('sampling/createMessage', async () => {
    asked.push('sampling');
    return { model: 'matrix-model', role: 'assistant', content: { type: 'text', text: MODEL_ANSWER } };
  });
  client.setRequestHandler('roots/list', async () => {
    asked.push('roots');
    return { roots: ROOTS };
  });
  client.setNotificationHandler('notifications/message', (n) => void logs.push({ level: n.params.level, data: n.params.data }));
  client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
  client.onerror = progress.onerror;
  const transport =
    link.kind === 'stdio'
      ? new V2Stdio({ command: link.command, args: [...link.args], cwd: link.cwd, env: { ...v2Environment(), ...link.env }, stderr: 'ignore' })
      : link.kind === 'http'
        ? new V2Http(new URL(link.url))
        : link.make();
  // (The cast bridges this repository's exactOptionalPropertyTypes and the SDK's message typings.)
  await client.connect(transport as never, { timeout: CONNECT_TIMEOUT_MS });
  const modern = () => client.getProtocolEra() === 'modern';
  let level: Level | undefined;
  const meta = () => (modern() && level ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {});
  return {
    get version() {
      return client.getNegotiatedProtocolVersion();
    },
    get serverInfo() {
      const info = client.getServerVersion();
      return info ? { name: info.name, version: info.version } : undefined;
    },
    get serverCapabilities() {
      return client.getServerCapabilities();
    },
    asked,
    logs,
    updates,
    listTools: async () => (await client.listTools(meta())).tools.map((t) => t.name),
    async call(name, args = {}, options = {}) {
      progress.set(options.onprogress);
      const result = await client.callTool(
        { name, arguments: args, ...meta() },
        {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onprogress ? { onprogress: progress.handler } : {}),
          timeout: 60_000,
        },
      );
      return textOf(result);
    },
    listPrompts: async () => (await client.listPrompts(meta())).prompts.map((p) => p.name),
    async getPrompt(name, args) {
      const prompt = await client.getPrompt({ name, arguments: args, ...meta() });
      const content = prompt.messages[0]?.content;
      return content && content.type === 'text' ? content.text : JSON.stringify(content);
    },
    listResources: async () => (await client.listResources(meta())).resources.map((r) => r.uri),
    async readResource(uri) {
      const read = await client.readResource({ uri, ...meta() });
      const first = read.contents[0];
      return first && 'text' in first ? String(first.text) : JSON.stringify(first);
    },
    async setLogLevel(next) {
      if (modern()) level = next;
      else await client.setLoggingLevel(next);
    },
    async subscribe(uri) {
      if (!modern()) {
        await client.subscribeResource({ uri });
        return async () => void (await client.unsubscribeResource({ uri }));
      }
      const subscription: McpSubscription = await client.listen({ resourceSubscriptions: [uri] });
      if (!subscription.honoredFilter.resourceSubscriptions?.includes(uri)) throw new Error(`the server did not honour the subscription: ${JSON.stringify(subscription.honoredFilter)}`);
      return () => subscription.close();
    },
    close: () => client.close(),
  };
}

/** The v1 SDK client 1.32.2: legacy only. */
async function v1Driver(link: Link): Promise<Driver> {
  const client = new V1Client({ name: 'v1-legacy-client', version: '1.32.2' }, { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } } });
  const asked: string[] = [];
  const logs: Array<{ level: string; data: unknown }> = [];
  const updates: string[] = [];
  const progress = progressSink();
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(`elicitation: ${request.params.message}`);
    return { action: 'accept', content: { name: NAME } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    asked.push('sampling');
    return { role: 'assistant', content: { type: 'text', text: MODEL_ANSWER }, model: 'matrix-model' };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    asked.push('roots');
    return { roots: ROOTS };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => void logs.push({ level: n.params.level, data: n.params.data }));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void updates.push(n.params.uri));
  client.onerror = progress.onerror;
  const transport =
    link.kind === 'stdio'
      ? new V1Stdio({ command: link.command, args: [...link.args], cwd: link.cwd, env: { ...v1Environment(), ...link.env }, stderr: 'ignore' })
      : link.kind === 'http'
        ? new V1Http(new URL(link.url))
        : link.make();
  // The v1 client keeps the negotiated version to itself: read it off the initialize answer.
  let negotiated: string | undefined;
  const start = transport.start.bind(transport);
  transport.start = () => {
    const deliver = transport.onmessage;
    transport.onmessage = (message: any, extra?: any) => {
      if (negotiated === undefined && typeof message?.result?.protocolVersion === 'string') negotiated = message.result.protocolVersion;
      deliver?.(message, extra);
    };
    return start();
  };
  await client.connect(transport as never, { timeout: CONNECT_TIMEOUT_MS });
  return {
    get version() {
      return negotiated;
    },
    get serverInfo() {
      const info = client.getServerVersion();
      return info ? { name: info.name, version: info.version } : undefined;
    },
    get serverCapabilities() {
      return client.getServerCapabilities();
    },
    asked,
    logs,
    updates,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    async call(name, args = {}, options = {}) {
      progress.set(options.onprogress);
      const result = await client.callTool({ name, arguments: args }, undefined, {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onprogress ? { onprogress: progress.handler } : {}),
        timeout: 60_000,
      });
      return textOf(result);
    },
    listPrompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
    async getPrompt(name, args) {
      const prompt = await client.getPrompt({ name, arguments: args });
      const content = prompt.messages[0]?.content;
      return content && content.type === 'text' ? content.text : JSON.stringify(content);
    },
    listResources: async () => (await client.listResources()).resources.map((r) => r.uri),
    async readResource(uri) {
      const first = (await client.readResource({ uri })).contents[0];
      return first && 'text' in first ? String(first.text) : JSON.stringify(first);
    },
    async setLogLevel(level) {
      await client.setLoggingLevel(level);
    },
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
