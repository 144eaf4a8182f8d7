/**
 * The codemod on a v1 client program of ours (fixtures/codemod/wrap-client-stdio and
 * wrap-client-http): unmigrated, a modern-only server (the v2 SDK fixture, `legacy: 'reject'`)
 * refuses it; migrated, the same program lists and calls that server's tools (an elicitation
 * answered by its own handler included), over stdio and over HTTP, and still reaches a legacy
 * server (server-everything) as before.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { migrate } from '../../lib/codemod/migrate.ts';
import { EVERYTHING, ROOT } from '../helpers/everything.ts';
import { createProject, runTsx, type Project } from '../helpers/migratedProject.ts';
import { startModernHttp } from '../helpers/modernFixture.ts';

const MODERN_STDIO = [process.execPath, '--import', 'tsx', resolve(ROOT, 'fixtures/servers/modernStdioMain.ts')];
const fixture = (name: string) => readFileSync(resolve(ROOT, 'fixtures/codemod', name), 'utf8');

/** The JSON lines a client printed, by step. */
function steps(stdout: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const line of stdout.trim().split('\n').filter(Boolean)) {
    const { step, value } = JSON.parse(line) as { step: string; value: unknown };
    out.set(step, value);
  }
  return out;
}

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text ?? '';

const client = suite('migrate a v1 client program');
let project: Project;

client.before(() => {
  project = createProject();
  project.write('client.ts', fixture('wrap-client-stdio.input.ts'));
  project.write('httpClient.ts', fixture('wrap-client-http.input.ts'));
});
client.after(() => project.close());

client('should be refused by a modern-only server before the migration', async () => {
  const { code, stdout } = await runTsx(['client.ts', '--call', 'echo', '{"text":"hi"}', '--', ...MODERN_STDIO], project.dir);
  assert.is(code, 1);
  assert.match(String(steps(stdout).get('error')), /-32022.*Unsupported protocol version/);
});

client('should wrap both transports with wrapLegacyClient and add the dependency', () => {
  const report = migrate({ paths: [project.dir], write: true });
  const byName = (name: string) => report.files.find((f) => f.path === resolve(project.dir, name))!;
  assert.equal(
    byName('client.ts').rewrites.map((r) => r.what),
    ['client over stdio: client.connect(transport) → client.connect(wrapLegacyClient(transport))'],
  );
  assert.equal(
    byName('httpClient.ts').rewrites.map((r) => r.what),
    ['client over Streamable HTTP: new StreamableHTTPClientTransport(url) → wrapLegacyClient(url)'],
  );
  assert.match(readFileSync(resolve(project.dir, 'package.json'), 'utf8'), /"mcp-dual-era": "\^\d+\.\d+\.\d+"/);
});

client('should list and call the tools of the modern-only server over stdio, answering its elicitation', async () => {
  const { code, stdout, stderr } = await runTsx(
    ['client.ts', '--call', 'echo', '{"text":"hi"}', '--call', 'ask_name', '{}', '--', ...MODERN_STDIO],
    project.dir,
  );
  assert.is(code, 0, stderr + stdout);
  const seen = steps(stdout);
  assert.is(seen.get('server'), 'modern-fixture');
  assert.ok((seen.get('tools') as string[]).includes('ask_name'));
  assert.is(text(seen.get('echo')), 'hi');
  assert.is(seen.get('elicitation'), 'What is your name?');
  assert.match(text(seen.get('ask_name')), 'Hello, Ada!');
});

client('should list and call the tools of the modern-only server over HTTP', async () => {
  const modern = await startModernHttp();
  try {
    const { code, stdout, stderr } = await runTsx(['httpClient.ts', modern.url], project.dir);
    assert.is(code, 0, stderr);
    const [tools, echo] = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    assert.ok((tools as { tools: string[] }).tools.includes('echo'));
    assert.is(text(echo), 'over HTTP');
  } finally {
    await modern.close();
  }
});

client('should still reach a legacy server over stdio', async () => {
  const { code, stdout, stderr } = await runTsx(
    ['client.ts', '--call', 'echo', '{"message":"still legacy"}', '--', process.execPath, EVERYTHING, 'stdio'],
    project.dir,
  );
  assert.is(code, 0, stderr + stdout);
  const seen = steps(stdout);
  assert.is(seen.get('server'), 'mcp-servers/everything');
  assert.is(text(seen.get('echo')), 'Echo: still legacy');
});

client.run();
