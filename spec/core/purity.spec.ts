/**
 * lib/core must stay pure: no Node built-ins, no timers, no clock, no randomness, no event
 * emitter and no retry library. This reads the sources, so it fails the moment one creeps in.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const CORE = resolve(import.meta.dirname, '../../lib/core');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

const FORBIDDEN: Array<[RegExp, string]> = [
  [/from\s+['"]node:/, 'a node: import'],
  [
    /from\s+['"](fs|path|os|crypto|http|https|net|child_process|stream|events|timers|url|util|buffer|process)(\/[^'"]*)?['"]/,
    'a Node built-in import',
  ],
  [/from\s+['"]mitt['"]/, 'mitt'],
  [/from\s+['"]p-retry['"]/, 'p-retry'],
  [/\brequire\s*\(/, 'require()'],
  [/\bimport\s*\(/, 'a dynamic import'],
  [/\b(setTimeout|setInterval|setImmediate|queueMicrotask)\s*\(/, 'a timer'],
  [/\bDate\.now\s*\(|\bnew Date\s*\(|\bperformance\.now\s*\(/, 'the clock'],
  [/\bMath\.random\s*\(|\bcrypto\.(randomUUID|getRandomValues)\s*\(/, 'randomness'],
  [/\bprocess\./, 'process'],
  [/\bfetch\s*\(/, 'I/O'],
];

const purity = suite('lib/core purity');
purity('should find the core sources', () => {
  assert.ok(sources(CORE).length > 10);
});
purity('should import nothing of ours from outside lib/core', () => {
  for (const file of sources(CORE)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/from\s+['"](\.[^'"]+)['"]/g)) {
      const target = resolve(join(file, '..'), m[1]!);
      assert.ok(target.startsWith(CORE), `${relative(CORE, file)} imports ${m[1]} from outside lib/core`);
    }
  }
});
purity('should use no I/O, timers, clock, randomness, mitt or p-retry', () => {
  for (const file of sources(CORE)) {
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const [pattern, what] of FORBIDDEN) assert.not.ok(pattern.test(text), `${relative(CORE, file)} uses ${what}`);
  }
});
purity('should keep the package entry point runtime-neutral (no Node built-in reachable from it)', () => {
  const seen = new Set<string>();
  const node: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(resolve(join(file, '..'), spec));
      else if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!))
        node.push(`${relative(resolve(CORE, '..'), file)} imports ${spec}`);
    }
  };
  visit(resolve(CORE, '../index.ts'));
  assert.ok(seen.size > 1);
  assert.equal(node, []);
});
purity.run();
