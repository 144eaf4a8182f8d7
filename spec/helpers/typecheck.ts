/**
 * Type-checks small programs held in memory, as a user of this package would write them, with
 * tsc: strict, NodeNext, `exactOptionalPropertyTypes` on or off, this package resolved from its
 * sources (`mcp-dual-era` → lib/index.ts, `mcp-dual-era/x` → lib/x.ts or lib/x/index.ts) and the
 * SDKs from node_modules. Parsed files are kept between programs of one run. Not a build.
 */
import { join } from 'node:path';
import type * as TS from 'typescript';
import { ts } from '../../lib/codemod/typescript.ts';
import { ROOT } from './everything.ts';

/** Where the in-memory files are placed (nothing is written there). */
export const VIRTUAL_DIR = join(ROOT, 'spec/__typecheck__');

const parsed = new Map<string, TS.SourceFile>();

function options(exactOptionalPropertyTypes: boolean): TS.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    exactOptionalPropertyTypes,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    // This package's own files use .ts specifiers.
    allowImportingTsExtensions: true,
    baseUrl: ROOT,
    paths: {
      'mcp-dual-era': ['lib/index.ts'],
      'mcp-dual-era/server/advanced': ['lib/serverAdvanced.ts'],
      'mcp-dual-era/*': ['lib/*.ts', 'lib/*/index.ts'],
    },
  };
}

/**
 * The diagnostics of `files` (name under VIRTUAL_DIR → text; a `.d.ts` may declare globals for
 * the others), each as `<name>:<line> <message>`; diagnostics of other files are not reported.
 */
export function typecheck(files: Readonly<Record<string, string>>, exactOptionalPropertyTypes: boolean): string[] {
  const opts = options(exactOptionalPropertyTypes);
  const virtual = new Map(Object.entries(files).map(([name, text]) => [join(VIRTUAL_DIR, name), text] as const));
  const host = ts.createCompilerHost(opts);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, onError, create) => {
    const text = virtual.get(name);
    if (text !== undefined) return ts.createSourceFile(name, text, version);
    const key = `${typeof version === 'object' ? JSON.stringify(version) : version}:${name}`;
    let sf = parsed.get(key);
    if (!sf) {
      sf = getSourceFile(name, version, onError, create);
      if (sf) parsed.set(key, sf);
    }
    return sf;
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => virtual.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => virtual.get(name) ?? readFile(name);
  const program = ts.createProgram({ rootNames: [...virtual.keys()], options: opts, host });
  return [...virtual.keys()].flatMap((file) => {
    const sf = program.getSourceFile(file)!;
    return [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)].map((d) => {
      const { line } = sf.getLineAndCharacterOfPosition(d.start ?? 0);
      return `${file.slice(VIRTUAL_DIR.length + 1)}:${line + 1} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  });
}
