/**
 * The public surface, pinned: every entry point of package.json's `exports` (read from its source
 * under lib/), every name it exports at run time and every type-only name it exports (listed with
 * the TypeScript compiler), compared with the checked-in list spec/surface.txt (`entry name kind`,
 * one a line, sorted); an export that appears or disappears fails with the lines that differ. Every
 * listed export must carry a JSDoc comment at its declaration. After a deliberate change, rewrite
 * the list with `npm run surface:update` (`npx tsx spec/surface.spec.ts --update`) and review its diff.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type * as TS from 'typescript';
import { ts } from '../lib/codemod/typescript.ts';
import { ROOT } from './helpers/everything.ts';

const LIST = join(ROOT, 'spec/surface.txt');

/** One export of one entry point. */
interface Exported {
  readonly entry: string;
  readonly name: string;
  /** `class`, `function`, `const` (present at run time) or `interface`, `type` (types only). */
  readonly kind: string;
  /** Where it is declared, for messages. */
  readonly where: string;
  readonly documented: boolean;
}

/** Each entry point of package.json's `exports` (`mcp-dual-era`, `mcp-dual-era/server`, …) and its source file. */
export function entryPoints(): Array<{ entry: string; file: string }> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default: string }>;
  };
  return Object.entries(pkg.exports)
    .filter(([key]) => key !== './package.json')
    .map(([key, target]) => {
      const built = typeof target === 'string' ? target : target.default;
      const file = join(ROOT, built.replace(/^\.\/dist\//, 'lib/').replace(/\.js$/, '.ts'));
      return { entry: key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, file };
    })
    .sort((a, b) => a.entry.localeCompare(b.entry));
}

function hasJsDoc(declaration: TS.Declaration): boolean {
  return ts.getJSDocCommentsAndTags(declaration).some((doc) => ts.isJSDoc(doc));
}

function kindOf(symbol: TS.Symbol, atRunTime: boolean): string {
  const F = ts.SymbolFlags;
  if (atRunTime)
    return symbol.flags & F.Class ? 'class' : symbol.flags & F.Function ? 'function' : symbol.flags & F.Enum ? 'enum' : 'const';
  return symbol.flags & F.Interface ? 'interface' : 'type';
}

/** Every export of every entry point: run-time names from importing it, the rest from the compiler. */
export async function surface(): Promise<Exported[]> {
  const entries = entryPoints();
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile).config as { compilerOptions: object };
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT);
  const program = ts.createProgram({ rootNames: entries.map((e) => e.file), options: { ...options, noEmit: true } });
  const checker = program.getTypeChecker();
  const out: Exported[] = [];
  for (const { entry, file } of entries) {
    const runtime = new Set(Object.keys((await import(pathToFileURL(file).href)) as object));
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
    const listed = new Set<string>();
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const name = exported.getName();
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declarations = symbol.declarations ?? [];
      const first = declarations[0];
      const where = first
        ? `${first.getSourceFile().fileName.slice(ROOT.length + 1)}:${first.getSourceFile().getLineAndCharacterOfPosition(first.getStart()).line + 1}`
        : '?';
      listed.add(name);
      out.push({ entry, name, kind: kindOf(symbol, runtime.has(name)), where, documented: declarations.some(hasJsDoc) });
    }
    // A name present at run time that the compiler does not list (or the reverse) would make the list lie.
    for (const name of runtime) if (!listed.has(name)) out.push({ entry, name, kind: 'untyped', where: '?', documented: false });
  }
  return out.sort((a, b) => a.entry.localeCompare(b.entry) || a.name.localeCompare(b.name));
}

/** The lines of spec/surface.txt for a surface. */
export function lines(exports: readonly Exported[]): string[] {
  return exports.map((e) => `${e.entry} ${e.name} ${e.kind}`);
}

function checkedIn(): string[] {
  return readFileSync(LIST, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

if (process.argv.includes('--update')) {
  const now = lines(await surface());
  writeFileSync(LIST, `${now.join('\n')}\n`);
  process.stdout.write(`spec/surface.txt: ${now.length} exports\n`);
} else {
  const s = suite('the public surface');
  let computed: Promise<Exported[]> | undefined;
  const current = () => (computed ??= surface());

  s('should export from each entry point exactly what spec/surface.txt lists', async () => {
    const now = lines(await current());
    const pinned = checkedIn();
    const nowSet = new Set(now);
    const pinnedSet = new Set(pinned);
    const added = now.filter((line) => !pinnedSet.has(line)).map((line) => `+ ${line}`);
    const removed = pinned.filter((line) => !nowSet.has(line)).map((line) => `- ${line}`);
    const diff = [...added, ...removed];
    assert.ok(
      diff.length === 0,
      `the public surface differs from spec/surface.txt (+ exported now, not listed; - listed, no longer exported):\n${diff.join('\n')}\nIf the change is meant, run \`npm run surface:update\` and review the list's diff.`,
    );
    assert.equal(
      pinned,
      [...pinned].sort((a, b) => a.localeCompare(b)),
      'spec/surface.txt is sorted',
    );
  });

  s('should list, for every entry point, values and types, with no name the compiler cannot see', async () => {
    const all = await current();
    for (const { entry } of entryPoints()) {
      const mine = all.filter((e) => e.entry === entry);
      assert.ok(mine.length > 0, `${entry} exports something`);
    }
    assert.equal(
      all.filter((e) => e.kind === 'untyped').map((e) => `${e.entry} ${e.name}`),
      [],
    );
  });

  s('should document every export with a JSDoc comment at its declaration', async () => {
    const undocumented = (await current()).filter((e) => !e.documented).map((e) => `${e.entry} ${e.name} (${e.where})`);
    assert.equal(undocumented, [], `exports without JSDoc at their declaration:\n${undocumented.join('\n')}`);
  });

  s.run();
}
