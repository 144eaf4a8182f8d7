/**
 * What the entry points export: the legacy-client wrap from the runtime-neutral main entry (its
 * neutrality is checked in spec/core/purity.spec.ts), the modern-server wrap from the Node subpath,
 * `inspectServer` from the client subpath, and every name the README documents from each entry.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { InspectOptions, Reach, ServerKind, ServerReport } from '../lib/client.ts';
import { documentedNames } from './helpers/readme.ts';

/** The module behind each entry point of package.json's `exports`, from the sources. */
const ENTRIES: Record<string, () => Promise<Record<string, unknown>>> = {
  'mcp-dual-era': () => import('../lib/index.ts'),
  'mcp-dual-era/server': () => import('../lib/server.ts'),
  'mcp-dual-era/client': () => import('../lib/client.ts'),
  'mcp-dual-era/codemod': () => import('../lib/codemod/index.ts'),
  'mcp-dual-era/core': () => import('../lib/core/index.ts'),
};

const neutral = suite('lib/index.ts');

neutral('should export wrapLegacyClient and the modern upstreams', async () => {
  const index = await import('../lib/index.ts');
  for (const name of ['wrapLegacyClient', 'LegacyClientBridge', 'ModernHttpUpstream', 'ModernPipeUpstream', 'DiscoverCache']) assert.type((index as Record<string, unknown>)[name], 'function', name);
  const server = await import('../lib/server.ts');
  assert.type(server.wrapModernServer, 'function');
});

neutral.run();

const client = suite('lib/client.ts');

client('should export inspectServer, the library call behind `probe`, with its option and report types', async () => {
  const entry = await import('../lib/client.ts');
  assert.type((entry as Record<string, unknown>)['inspectServer'], 'function');
  // The types are part of the export: this file does not type-check without them.
  const options: InspectOptions = { timeoutMs: 1 };
  const kind: ServerKind = 'dual-era';
  const reach: Reach = { direct: false, through: 'mcp-dual-era serve' };
  const report: Pick<ServerReport, 'kind' | 'clients'> = { kind, clients: { 'modern-only': reach, 'dual-era': reach, legacy: reach } };
  assert.is(options.timeoutMs, 1);
  assert.is(report.kind, 'dual-era');
});

client.run();

const readme = suite('the README');

readme('should name, for each entry point it documents, only what that entry point exports', async () => {
  const { values } = documentedNames();
  assert.ok(values.size >= 3, 'the README documents names from several entry points');
  for (const [specifier, names] of values) {
    const load = ENTRIES[specifier];
    assert.ok(load, `${specifier} is an entry point`);
    const entry = await load!();
    const missing = [...names].filter((name) => entry[name] === undefined);
    assert.equal(missing, [], `${specifier} lacks ${missing.join(', ')}`);
  }
});

readme.run();
