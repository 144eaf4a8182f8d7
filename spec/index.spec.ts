/**
 * The main entry point is runtime-neutral: nothing reachable from lib/index.ts through static
 * imports is a Node built-in, so it loads on Workers, Deno, Bun and in browsers. Node-only pieces
 * are subpath exports (lib/server.ts).
 */
import { builtinModules } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const BUILTINS = new Set(builtinModules);
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g;

function reachable(entry: string): { files: Set<string>; bare: Map<string, string> } {
  const files = new Set<string>();
  const bare = new Map<string, string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1]!;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else bare.set(spec, file);
    }
  };
  visit(entry);
  return { files, bare };
}

const neutral = suite('lib/index.ts');

neutral('should reach no Node built-in', () => {
  const { files, bare } = reachable(resolve(import.meta.dirname, '../lib/index.ts'));
  assert.ok(files.size > 10);
  const node = [...bare].filter(([spec]) => spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0]!)).map(([spec, file]) => `${spec} from ${file}`);
  assert.equal(node, []);
});

neutral('should export wrapLegacyClient and the modern upstreams', async () => {
  const index = await import('../lib/index.ts');
  for (const name of ['wrapLegacyClient', 'LegacyClientBridge', 'ModernHttpClient', 'ModernPipeUpstream', 'DiscoverCache']) assert.type((index as Record<string, unknown>)[name], 'function', name);
  const server = await import('../lib/server.ts');
  assert.type(server.wrapModernServer, 'function');
});

neutral.run();
