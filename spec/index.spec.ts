/**
 * What the entry points export, by what a user reaches for: the legacy-client wrap from the
 * runtime-neutral main entry (its neutrality is checked in spec/core/purity.spec.ts), the wraps,
 * backends and serve helpers from `/server`, `probe` and `inspectServer` from `/client`, the
 * translator from `/core`, and every name the README documents from each entry. The whole surface,
 * name by name, is pinned in spec/surface.spec.ts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { InspectOptions, Reach, ServerKind, ServerReport } from '../lib/client.ts';
import type { HttpFrontOptions, LegacyServerWrap, ModernServerWrap, WrapStats } from '../lib/server.ts';
import { documentedNames } from './helpers/readme.ts';

/** The module behind each entry point of package.json's `exports`, from the sources. */
const ENTRIES: Record<string, () => Promise<Record<string, unknown>>> = {
  'mcp-dual-era': () => import('../lib/index.ts'),
  'mcp-dual-era/server': () => import('../lib/server.ts'),
  'mcp-dual-era/server/advanced': () => import('../lib/serverAdvanced.ts'),
  'mcp-dual-era/client': () => import('../lib/client.ts'),
  'mcp-dual-era/codemod': () => import('../lib/codemod/index.ts'),
  'mcp-dual-era/core': () => import('../lib/core/index.ts'),
  'mcp-dual-era/fleet': () => import('../lib/fleet/index.ts'),
};

const neutral = suite('lib/index.ts');

neutral('should export wrapLegacyClient and the modern upstreams', async () => {
  const index = await import('../lib/index.ts');
  for (const name of [
    'wrapLegacyClient',
    'LegacyClientBridge',
    'ModernHttpUpstream',
    'ModernPipeUpstream',
    'DiscoverCache',
    'AdapterError',
  ])
    assert.type((index as Record<string, unknown>)[name], 'function', name);
  assert.type(index.ErrorCode, 'object');
  assert.is(index.LATEST_MODERN_VERSION, '2026-07-28');
});

neutral('should leave the translator to mcp-dual-era/core', async () => {
  const index = (await import('../lib/index.ts')) as Record<string, unknown>;
  const core = (await import('../lib/core/index.ts')) as Record<string, unknown>;
  for (const name of ['requestToLegacy', 'resultToModern', 'classify']) {
    assert.is(index[name], undefined, name);
    assert.type(core[name], 'function', name);
  }
});

neutral.run();

const server = suite('lib/server.ts');

server('should export the wraps, the backends, the serve helpers and the keyring, with their option and result types', async () => {
  const entry = (await import('../lib/server.ts')) as Record<string, unknown>;
  for (const name of [
    'wrapLegacyServer',
    'wrapModernServer',
    'stdioBackend',
    'httpBackend',
    'inProcessBackend',
    'serveStdio',
    'serveNodeHttp',
    'toNodeListener',
    'Keyring',
  ])
    assert.type(entry[name], 'function', name);
  // The types are part of the export: this file does not type-check without them.
  const stats: Pick<WrapStats, 'requests' | 'parked'> = { requests: 0, parked: 0 };
  const http: HttpFrontOptions = { path: '/mcp', maxBodyBytes: 1024 };
  const wrap: Pick<LegacyServerWrap, 'stats'> | Pick<ModernServerWrap, 'close'> | undefined = undefined;
  assert.is(stats.parked, 0);
  assert.is(http.path, '/mcp');
  assert.is(wrap, undefined);
});

server.run();

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
