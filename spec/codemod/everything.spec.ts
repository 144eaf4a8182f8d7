/**
 * The codemod on real code: a copy of server-everything's installed dist/ (JavaScript, ESM, SDK
 * v1) goes through `mcp-dual-era migrate --write`; the result is started as it is, and a
 * modern-only client (the v2 SDK pinned to 2026-07-28) lists and calls its tools directly, over
 * stdio, Streamable HTTP and the endpoint added beside HTTP+SSE; legacy clients still get in on the
 * same endpoints. Unmigrated, the pinned client is refused. A second run changes nothing.
 */
import { dirname, join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { migrate } from '../../lib/codemod/migrate.ts';
import { EVERYTHING, ROOT, textOf } from '../helpers/everything.ts';
import { createProject, migrateCli, startListening, type Project } from '../helpers/migratedProject.ts';
import { PINNED } from '../helpers/modernClient.ts';

const e2e = suite('migrate --write on server-everything 2026.8.31');
let project: Project;
let entry: string;

e2e.before(() => {
  project = createProject({ name: 'everything-copy', version: '2026.8.31', type: 'module' });
  project.copy(dirname(EVERYTHING), 'dist');
  entry = join(project.dir, 'dist/index.js');
});
e2e.after(() => project.close());

/** A pinned modern client that answers elicitation. */
function pinnedClient(): ModernClient {
  const client = new ModernClient({ name: 'modern-only', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada Lovelace', check: true } }));
  return client;
}

async function assertToolsWork(client: ModernClient): Promise<void> {
  assert.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['echo', 'get-sum', 'trigger-elicitation-request']) assert.ok(names.includes(name), name);
  assert.is(textOf(await client.callTool({ name: 'echo', arguments: { message: 'migrated' } })), 'Echo: migrated');
  assert.is(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } })), 'The sum of 40 and 2 is 42.');
}

e2e('should refuse the pinned client before the migration', async () => {
  const client = pinnedClient();
  const failure = await client
    .connect(new ModernStdio({ command: process.execPath, args: [entry, 'stdio'], cwd: project.dir, stderr: 'ignore' }))
    .then(
      () => undefined,
      (e: unknown) => e as Error,
    );
  await client.close();
  assert.ok(failure, 'connect failed');
  assert.match(failure!.message, /2026-07-28/);
});

e2e('should rewire the stdio, Streamable HTTP and HTTP+SSE entry points and add the dependency', async () => {
  const { code, stdout, stderr } = await migrateCli(['--write', '--json', 'dist'], project.dir);
  assert.is(code, 0, stderr);
  const report = JSON.parse(stdout) as {
    files: Array<{ file: string; changed: boolean; rewrites: Array<{ what: string }>; markers: Array<{ code: string }> }>;
  };
  const changed = report.files.filter((f) => f.changed).map((f) => f.file);
  assert.equal(changed, ['dist/transports/sse.js', 'dist/transports/stdio.js', 'dist/transports/streamableHttp.js', 'package.json']);
  const rewrite = (file: string) =>
    report.files
      .find((f) => f.file === file)!
      .rewrites.map((r) => r.what)
      .join('\n');
  assert.match(rewrite('dist/transports/stdio.js'), 'serveStdio(wrapLegacyServer');
  assert.match(rewrite('dist/transports/streamableHttp.js'), 'Streamable HTTP with sessions: POST, GET, DELETE /mcp');
  assert.match(rewrite('dist/transports/sse.js'), 'HTTP+SSE kept; a Streamable HTTP endpoint /mcp');
  // Run from this checkout: the checkout itself, installable before the package is on the registry.
  assert.match(rewrite('package.json'), `dependency mcp-dual-era file:${ROOT}`);
  const markers = report.files.find((f) => f.file === 'dist/transports/streamableHttp.js')!.markers.map((m) => m.code);
  assert.equal(markers, ['session-cleanup', 'event-store']);
});

e2e('should change nothing on a second run', () => {
  const report = migrate({ paths: [project.dir], write: true });
  assert.ok(report.files.length > 40);
  assert.equal(
    report.files.filter((f) => f.changed || f.error),
    [],
  );
});

e2e('should serve the pinned client over stdio, elicitation included', async () => {
  const client = pinnedClient();
  try {
    await client.connect(
      new ModernStdio({ command: process.execPath, args: ['--import', 'tsx', entry, 'stdio'], cwd: project.dir, stderr: 'ignore' }),
    );
    await assertToolsWork(client);
    const elicited = textOf(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
    assert.match(elicited, '- Name: Ada Lovelace');
  } finally {
    await client.close();
  }
});

e2e('should serve the pinned client and a legacy client on the Streamable HTTP endpoint', async () => {
  const port = await startListening(project, [entry, 'streamableHttp']);
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const modern = pinnedClient();
  const legacy = new LegacyClient({ name: 'legacy', version: '1.0.0' });
  try {
    await modern.connect(new ModernHttp(url));
    await assertToolsWork(modern);
    assert.match(textOf(await modern.callTool({ name: 'trigger-elicitation-request', arguments: {} })), '- Name: Ada Lovelace');
    await legacy.connect(new LegacyHttp(url));
    assert.is(legacy.getServerVersion()?.name, 'mcp-servers/everything');
    assert.is(textOf(await legacy.callTool({ name: 'echo', arguments: { message: 'old client' } })), 'Echo: old client');
  } finally {
    await modern.close();
    await legacy.close();
  }
});

e2e('should serve the pinned client on the endpoint added beside HTTP+SSE, which keeps working', async () => {
  const port = await startListening(project, [entry, 'sse']);
  const modern = pinnedClient();
  const legacy = new LegacyClient({ name: 'legacy-sse', version: '1.0.0' });
  try {
    await modern.connect(new ModernHttp(new URL(`http://127.0.0.1:${port}/mcp`)));
    await assertToolsWork(modern);
    await legacy.connect(new SSEClientTransport(new URL(`http://127.0.0.1:${port}/sse`)));
    assert.is(textOf(await legacy.callTool({ name: 'echo', arguments: { message: 'over SSE' } })), 'Echo: over SSE');
  } finally {
    await modern.close();
    await legacy.close();
  }
});

e2e.run();
