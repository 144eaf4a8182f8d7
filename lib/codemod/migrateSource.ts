/**
 * One file through the codemod, in memory: parse, apply the mode's rules as edits, drop imports the
 * rewrite left unused, add the ones it needs, and check that the result still parses. A file that
 * does not parse, or whose rewrite would not, comes back unchanged with the reason.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { applyEdits, type Edit } from './edits.ts';
import { FileRewrite, type NeededImport, type Rewrite } from './fileRewrite.ts';
import { addImports, removeUnusedImports } from './imports.ts';
import { MARKER_TAG } from './markers.ts';
import { nativeRewrite } from './nativeRewrite.ts';
import { parseSource, syntaxErrors } from './source.ts';
import { isClientTransportModule, wrapClients } from './wrapClients.ts';
import { wrapServers } from './wrapServers.ts';
import { isServerTransportModule } from './wiring.ts';

/** `wrap`: rewire onto mcp-dual-era, handlers untouched. `native`: push-style handlers in the v2 idiom. */
export type MigrateMode = 'wrap' | 'native';

/** A marker comment in the rewritten text. */
export interface MarkerLine {
  /** 1-based line in the rewritten text. */
  readonly line: number;
  readonly code: string;
  readonly message: string;
}

/** One file's text after {@link migrateSource}: the new text, what was rewritten and the markers left. */
export interface SourceOutcome {
  /** The rewritten text (the original when nothing changed or the file failed). */
  readonly text: string;
  readonly rewrites: readonly Rewrite[];
  /** Every marker comment in the result, old and new. */
  readonly markers: readonly MarkerLine[];
  /** How many of them this run added. */
  readonly markersAdded: number;
  /** Modules the new code imports (for the package's dependencies). */
  readonly imports: readonly string[];
  /** Why the file was left as it is. */
  readonly error?: string;
}

/** Options of {@link migrateSource}: the file's name (its extension decides TypeScript or JavaScript), the mode and the nearest package.json's `type`. */
export interface MigrateSourceOptions {
  readonly fileName: string;
  readonly mode: MigrateMode;
  /** `type` of the nearest package.json (decides the module system of a plain `.js` file). */
  readonly packageType?: 'module' | 'commonjs' | undefined;
}

/** The marker comments in a text. */
export function markerLines(text: string): MarkerLine[] {
  const out: MarkerLine[] = [];
  const pattern = new RegExp(`//\\s*${MARKER_TAG} ([a-z0-9-]+): (.*)$`);
  text.split('\n').forEach((line, i) => {
    const m = pattern.exec(line.replace(/\r$/, ''));
    if (m) out.push({ line: i + 1, code: m[1]!, message: m[2]! });
  });
  return out;
}

function unchanged(text: string, error?: string): SourceOutcome {
  const markers = markerLines(text);
  return { text, rewrites: [], markers, markersAdded: 0, imports: [], ...(error ? { error } : {}) };
}

/** Names imported from the v1 transport modules that the original text uses. */
function usedTransportImports(f: FileRewrite): Set<string> {
  const out = new Set<string>();
  for (const [local, from] of f.imported) {
    if (!isServerTransportModule(from.module) && !isClientTransportModule(from.module)) continue;
    const visit = (node: TS.Node): boolean => {
      if (
        ts.isIdentifier(node) &&
        node.text === local &&
        !ts.isImportSpecifier(node.parent) &&
        !ts.isBindingElement(node.parent) &&
        !ts.isImportClause(node.parent)
      )
        return true;
      return ts.forEachChild(node, visit) ?? false;
    };
    if (visit(f.sf)) out.add(local);
  }
  return out;
}

/**
 * The last check before a rewrite is kept: the rewritten text must parse. An error (with the first
 * syntax error) when it does not, so the file is left as it was.
 */
export function checkedRewrite(fileName: string, original: string, rewritten: string): { error?: string } {
  if (rewritten === original) return {};
  const errors = syntaxErrors(fileName, rewritten);
  return errors.length > 0 ? { error: `left unchanged: the rewrite would not parse (${errors[0]})` } : {};
}

/** Runs the codemod on one file's text. */
export function migrateSource(text: string, options: MigrateSourceOptions): SourceOutcome {
  const { fileName, mode } = options;
  // Every rule starts from an import of an MCP SDK: a file without one is not parsed at all.
  if (!text.includes('@modelcontextprotocol/')) return unchanged(text);
  const parsed = parseSource(fileName, text, options.packageType);
  if (!parsed.model) return unchanged(text, `does not parse (${parsed.errors[0]})`);
  const f = new FileRewrite(parsed.model);
  try {
    if (mode === 'wrap') {
      wrapServers(f);
      wrapClients(f);
    } else nativeRewrite(f);
  } catch (e) {
    return unchanged(text, `could not be rewritten (${e instanceof Error ? e.message : String(e)})`);
  }
  if (f.edits.length === 0) return unchanged(text);
  let result: string;
  try {
    result = finish(f, mode);
  } catch (e) {
    return unchanged(text, `could not be rewritten (${e instanceof Error ? e.message : String(e)})`);
  }
  const checked = checkedRewrite(fileName, text, result);
  if (checked.error) return unchanged(text, checked.error);
  const markers = markerLines(result);
  return {
    text: result,
    rewrites: f.rewrites,
    markers,
    markersAdded: markers.length - markerLines(text).length,
    imports: [...f.imports.keys()],
  };
}

/** Applies the collected edits, then the import bookkeeping on the result. */
function finish(f: FileRewrite, mode: MigrateMode): string {
  const { fileName } = f.model;
  let text = applyEdits(f.text, f.edits);
  const reparse = (t: string) => {
    const p = parseSource(fileName, t, f.model.moduleSystem === 'cjs' ? 'commonjs' : 'module');
    if (!p.model) throw new Error(`the rewrite would not parse (${p.errors[0]})`);
    return p.model;
  };
  if (mode === 'wrap' && f.rewrites.length > 0) {
    const model = reparse(text);
    const removals = removeUnusedImports(
      model.sf,
      model.checker,
      (m) => isServerTransportModule(m) || isClientTransportModule(m),
      usedTransportImports(f),
    );
    if (removals.length > 0) text = applyEdits(text, removals);
  }
  if (f.imports.size > 0) {
    const model = reparse(text);
    const useRequire = model.moduleSystem === 'cjs' && !model.sf.statements.some(ts.isImportDeclaration);
    const additions: Edit[] = addImports(
      model.sf,
      f.imports as ReadonlyMap<string, ReadonlyMap<string, NeededImport>>,
      model.typescript,
      useRequire,
    );
    if (additions.length > 0) text = applyEdits(text, additions);
  }
  return text;
}
