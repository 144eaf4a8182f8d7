/**
 * The modern-only fixture (fixtures/servers/modernServer.ts, v2 SDK, `legacy: 'reject'`) started
 * for specs: over HTTP in this process, over stdio as a child process; and legacy v1 SDK clients
 * (1.32.2 and 1.17.5) wired with their own handlers for elicitation, sampling and roots.
 */
import { resolve } from 'node:path';
import { Client as Client132 } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as Client117 } from 'sdk-1-17/client/index.js';
import {
  CreateMessageRequestSchema as CreateMessage117,
  ElicitRequestSchema as Elicit117,
  ListRootsRequestSchema as ListRoots117,
  LoggingMessageNotificationSchema as Logging117,
  ResourceUpdatedNotificationSchema as Updated117,
} from 'sdk-1-17/types.js';
import { createModernHandler } from '../../fixtures/servers/modernHttp.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { ROOT } from './everything.ts';

export const MODERN_STDIO = {
  command: process.execPath,
  args: ['--import', 'tsx', resolve(ROOT, 'fixtures/servers/modernStdioMain.ts')],
  cwd: ROOT,
  stderr: 'ignore' as const,
};
/** `mcp-dual-era serve --modern --stdio -- <the modern fixture>`: wrapModernServer on a process's stdio, through the CLI. */
export const WRAPPED_STDIO = {
  command: process.execPath,
  args: [
    '--import',
    'tsx',
    resolve(ROOT, 'lib/cli/main.ts'),
    'serve',
    '--modern',
    '--stdio',
    '--quiet',
    '--',
    process.execPath,
    '--import',
    'tsx',
    resolve(ROOT, 'fixtures/servers/modernStdioMain.ts'),
  ],
  cwd: ROOT,
};

/** `mcp-dual-era connect …` as a host spawns it: the real command, its stdio the host's pipe. */
export function connectCommand(args: readonly string[]): { command: string; args: string[]; cwd: string } {
  return {
    command: process.execPath,
    args: ['--import', 'tsx', resolve(ROOT, 'lib/cli/main.ts'), 'connect', '--quiet', ...args],
    cwd: ROOT,
  };
}

/** `mcp-dual-era connect -- <the modern fixture>`. */
export const CONNECT_STDIO = connectCommand([
  '--',
  process.execPath,
  '--import',
  'tsx',
  resolve(ROOT, 'fixtures/servers/modernStdioMain.ts'),
]);

/** The modern fixture (or another handler) on a loopback port. */
export async function startModernHttp(
  handler: { fetch(request: Request): Promise<Response>; close(): Promise<void> } = createModernHandler(),
): Promise<{ url: string; close(): Promise<void> }> {
  const server = await serveNodeHttp(handler, { port: 0 });
  return {
    url: `${server.origin}/mcp`,
    async close() {
      await handler.close();
      await server.close();
    },
  };
}

/** What a spec sees of a v1 client, whichever SDK version. */
export interface LegacyClient {
  readonly sdk: '1.32.2' | '1.17.5';
  readonly logs: Array<{ level: string; data: unknown }>;
  readonly updates: string[];
  readonly elicitations: unknown[];
  onerror?: ((error: Error) => void) | undefined;
  connect(transport: unknown): Promise<void>;
  close(): Promise<void>;
  getServerVersion(): { name: string; version: string } | undefined;
  getServerCapabilities(): Record<string, unknown> | undefined;
  getInstructions(): string | undefined;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    schema?: undefined,
    options?: { signal?: AbortSignal; onprogress?: (p: { progress: number }) => void },
  ): Promise<Record<string, unknown>>;
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<{ messages: Array<{ content: unknown }> }>;
  readResource(params: { uri: string }): Promise<{ contents: Array<Record<string, unknown>> }>;
  listResources(): Promise<{ resources: Array<{ uri: string }> }>;
  setLoggingLevel(level: string): Promise<unknown>;
  subscribeResource(params: { uri: string }): Promise<unknown>;
  unsubscribeResource(params: { uri: string }): Promise<unknown>;
  ping(): Promise<unknown>;
}

export const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];

/** A v1 client declaring elicitation, sampling and roots, answering them with its own handlers. */
export function legacyClient(sdk: '1.32.2' | '1.17.5' = '1.32.2', options: { capabilities?: Record<string, unknown> } = {}): LegacyClient {
  const capabilities = options.capabilities ?? { elicitation: {}, sampling: {}, roots: { listChanged: true } };
  const logs: Array<{ level: string; data: unknown }> = [];
  const updates: string[] = [];
  const elicitations: unknown[] = [];
  const info = { name: `v1-client-${sdk}`, version: sdk };
  const elicit = async (request: { params: unknown }) => {
    elicitations.push(request.params);
    return { action: 'accept' as const, content: { name: 'Ada' } };
  };
  const sample = async () => ({ role: 'assistant' as const, content: { type: 'text' as const, text: 'Paris' }, model: 'spec-model' });
  const roots = async () => ({ roots: ROOTS });
  if (sdk === '1.32.2') {
    const client = new Client132(info, { capabilities });
    if ('elicitation' in capabilities) client.setRequestHandler(ElicitRequestSchema, elicit as never);
    if ('sampling' in capabilities) client.setRequestHandler(CreateMessageRequestSchema, sample);
    if ('roots' in capabilities) client.setRequestHandler(ListRootsRequestSchema, roots);
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      async (n) => void logs.push({ level: n.params.level, data: n.params.data }),
    );
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void updates.push(n.params.uri));
    return Object.assign(client, { sdk, logs, updates, elicitations }) as unknown as LegacyClient;
  }
  const client = new Client117(info, { capabilities });
  if ('elicitation' in capabilities) client.setRequestHandler(Elicit117, elicit as never);
  if ('sampling' in capabilities) client.setRequestHandler(CreateMessage117, sample);
  if ('roots' in capabilities) client.setRequestHandler(ListRoots117, roots);
  client.setNotificationHandler(Logging117, async (n) => void logs.push({ level: n.params.level, data: n.params.data }));
  client.setNotificationHandler(Updated117, async (n) => void updates.push(n.params.uri));
  return Object.assign(client, { sdk, logs, updates, elicitations }) as unknown as LegacyClient;
}
