/**
 * What the entry points export: the legacy-client wrap from the runtime-neutral main entry (its
 * neutrality is checked in spec/core/purity.spec.ts), the modern-server wrap from the Node subpath.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const neutral = suite('lib/index.ts');

neutral('should export wrapLegacyClient and the modern upstreams', async () => {
  const index = await import('../lib/index.ts');
  for (const name of ['wrapLegacyClient', 'LegacyClientBridge', 'ModernHttpUpstream', 'ModernPipeUpstream', 'DiscoverCache']) assert.type((index as Record<string, unknown>)[name], 'function', name);
  const server = await import('../lib/server.ts');
  assert.type(server.wrapModernServer, 'function');
});

neutral.run();
