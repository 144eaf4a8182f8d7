/**
 * The Express servers of the fixtures, migrated and run: the endpoint the codemod generates
 * (`app.all('/mcp', (req, res) => wrap.node(req, res))`, behind `express.json()`) serves a pinned
 * modern client, its pushed elicitation as an input round, and legacy clients with their sessions,
 * for the server with sessions and for the stateless one.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { migrate } from '../../lib/codemod/migrate.ts';
import { ROOT, textOf } from '../helpers/everything.ts';
import { createProject, startListening, type Project } from '../helpers/migratedProject.ts';
import { PINNED } from '../helpers/modernClient.ts';

const express = suite('migrated Express servers');
let project: Project;

express.before(() => {
  project = createProject();
  for (const name of ['wrap-express-sessions', 'wrap-express-stateless'])
    project.write(`${name}.ts`, readFileSync(resolve(ROOT, `fixtures/codemod/${name}.input.ts`), 'utf8'));
  const report = migrate({ paths: [project.dir], write: true });
  assert.equal(
    report.files.filter((f) => f.error),
    [],
  );
});
express.after(() => project.close());

express('should serve modern and legacy clients on the endpoint of the server with sessions', async () => {
  const url = new URL(`http://127.0.0.1:${await startListening(project, ['wrap-express-sessions.ts'])}/mcp`);
  const modern = new ModernClient({ name: 'modern-only', version: '1.0.0' }, { ...PINNED, capabilities: { elicitation: { form: {} } } });
  modern.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
  const legacy = new LegacyClient({ name: 'legacy', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  legacy.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
  try {
    await modern.connect(new ModernHttp(url));
    assert.equal(
      (await modern.listTools()).tools.map((t) => t.name),
      ['book'],
    );
    assert.is(textOf(await modern.callTool({ name: 'book', arguments: { restaurant: 'Chez Ada' } })), 'Booked');
    await legacy.connect(new LegacyHttp(url));
    assert.is(textOf(await legacy.callTool({ name: 'book', arguments: { restaurant: 'Chez Ada' } })), 'Not booked');
  } finally {
    await modern.close();
    await legacy.close();
  }
});

express('should serve modern and legacy clients on the endpoint of the stateless server', async () => {
  const url = new URL(`http://127.0.0.1:${await startListening(project, ['wrap-express-stateless.ts'])}/mcp`);
  const modern = new ModernClient({ name: 'modern-only', version: '1.0.0' }, PINNED);
  const legacy = new LegacyClient({ name: 'legacy', version: '1.0.0' });
  try {
    await modern.connect(new ModernHttp(url));
    assert.is(textOf(await modern.callTool({ name: 'add', arguments: { a: 2, b: 3 } })), '5');
    await legacy.connect(new LegacyHttp(url));
    assert.is(textOf(await legacy.callTool({ name: 'add', arguments: { a: 4, b: 5 } })), '9');
  } finally {
    await modern.close();
    await legacy.close();
  }
});

express.run();
