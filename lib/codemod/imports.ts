/**
 * Import bookkeeping after a rewrite: names the new code uses are added to an existing import
 * (or `require`) of their module, or in a new one beside the others, in the file's own quote and
 * semicolon style; imports the rewrite left unused are removed. Edits only, on a parsed text.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { lineEnd, lineStart, newlineOf, quoteOf, removeStatements, type Edit } from './edits.ts';
import type { NeededImport } from './fileRewrite.ts';
import { isRequireCall } from './source.ts';

interface Style {
  readonly quote: string;
  readonly semicolon: string;
}

function styleOf(sf: TS.SourceFile): Style {
  const text = sf.text;
  const sample = sf.statements.find(
    (s) =>
      ts.isImportDeclaration(s) ||
      (ts.isVariableStatement(s) && s.declarationList.declarations.some((d) => d.initializer && isRequireCall(d.initializer))),
  );
  if (sample) {
    const t = text.slice(sample.getStart(sf), sample.getEnd());
    return { quote: t.includes('"') && !t.includes("'") ? '"' : "'", semicolon: t.trimEnd().endsWith(';') ? ';' : '' };
  }
  const semis = (text.match(/;\s*$/gm) ?? []).length;
  return { quote: quoteOf(text), semicolon: semis > 0 || text.trim() === '' ? ';' : '' };
}

function requireDeclaration(s: TS.Statement): { decl: TS.VariableDeclaration; module: string } | undefined {
  if (!ts.isVariableStatement(s) || s.declarationList.declarations.length !== 1) return undefined;
  const decl = s.declarationList.declarations[0]!;
  if (!decl.initializer || !isRequireCall(decl.initializer)) return undefined;
  return { decl, module: (decl.initializer.arguments[0] as TS.StringLiteral).text };
}

/** Where a new import line goes: after the last top-level import or require, else at the top. */
function insertionPoint(sf: TS.SourceFile): { at: number; after: boolean } {
  let last: TS.Statement | undefined;
  for (const s of sf.statements) if (ts.isImportDeclaration(s) || requireDeclaration(s) || ts.isImportEqualsDeclaration(s)) last = s;
  if (last) return { at: lineEnd(sf.text, last.getEnd()), after: true };
  const first = sf.statements.find((s) => !(ts.isExpressionStatement(s) && ts.isStringLiteral(s.expression)));
  if (!first) return { at: sf.text.length, after: true };
  const directive = sf.statements[0] !== first ? sf.statements[0] : undefined;
  if (directive) return { at: lineEnd(sf.text, directive.getEnd()), after: true };
  return { at: lineStart(sf.text, first.getStart(sf)), after: false };
}

/** Adds elements to a named-imports or object-binding list, keeping its layout. */
function addToList(sf: TS.SourceFile, open: number, elements: readonly TS.Node[], additions: readonly string[], edits: Edit[]): void {
  const text = sf.text;
  const last = elements[elements.length - 1];
  if (!last) {
    edits.push({ start: open + 1, end: open + 1, text: ` ${additions.join(', ')} ` });
    return;
  }
  const multiline = text.slice(open, elements[0]!.getStart(sf)).includes('\n');
  const afterLast = text.slice(last.getEnd()).match(/^\s*,/);
  if (multiline) {
    const indent = /^[ \t]*/.exec(text.slice(lineStart(text, last.getStart(sf))))![0];
    const nl = newlineOf(text);
    if (afterLast) {
      const at = last.getEnd() + afterLast[0].length;
      edits.push({ start: at, end: at, text: additions.map((a) => `${nl}${indent}${a},`).join('') });
    } else edits.push({ start: last.getEnd(), end: last.getEnd(), text: additions.map((a) => `,${nl}${indent}${a}`).join('') });
    return;
  }
  edits.push({ start: last.getEnd(), end: last.getEnd(), text: additions.map((a) => `, ${a}`).join('') });
}

/**
 * Edits that import `needs` (module → names). `style` is `import` or `require` (CommonJS without
 * import declarations); type-only names are skipped in JavaScript.
 */
export function addImports(
  sf: TS.SourceFile,
  needs: ReadonlyMap<string, ReadonlyMap<string, NeededImport>>,
  typescript: boolean,
  useRequire: boolean,
): Edit[] {
  const edits: Edit[] = [];
  const style = styleOf(sf);
  const nl = newlineOf(sf.text);
  const lines: string[] = [];
  for (const [module, names] of needs) {
    const wanted = [...names.values()].filter((n) => typescript || !n.type);
    if (wanted.length === 0) continue;
    if (useRequire) {
      const existing = sf.statements.map(requireDeclaration).find((r) => r?.module === module && ts.isObjectBindingPattern(r.decl.name));
      const have = new Set(
        existing ? (existing.decl.name as TS.ObjectBindingPattern).elements.map((e) => (e.name as TS.Identifier).text) : [],
      );
      const add = wanted.filter((n) => !n.type && !have.has(n.name)).map((n) => n.name);
      const types = wanted.filter((n) => n.type).map((n) => n.name);
      if (existing && add.length > 0) {
        const pattern = existing.decl.name as TS.ObjectBindingPattern;
        addToList(sf, pattern.getStart(sf), pattern.elements, add, edits);
      } else if (add.length > 0)
        lines.push(`const { ${add.join(', ')} } = require(${style.quote}${module}${style.quote})${style.semicolon}`);
      if (types.length > 0) lines.push(`import type { ${types.join(', ')} } from ${style.quote}${module}${style.quote}${style.semicolon}`);
      continue;
    }
    const existing = sf.statements.find(
      (s): s is TS.ImportDeclaration =>
        ts.isImportDeclaration(s) &&
        ts.isStringLiteral(s.moduleSpecifier) &&
        s.moduleSpecifier.text === module &&
        !s.importClause?.isTypeOnly &&
        s.importClause?.namedBindings !== undefined &&
        ts.isNamedImports(s.importClause.namedBindings),
    );
    const have = new Set<string>();
    for (const s of sf.statements) {
      if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier) || s.moduleSpecifier.text !== module) continue;
      const b = s.importClause?.namedBindings;
      if (b && ts.isNamedImports(b)) for (const e of b.elements) have.add(e.name.text);
    }
    const fresh = wanted.filter((n) => !have.has(n.name));
    const add = [...fresh.filter((n) => !n.type).map((n) => n.name), ...fresh.filter((n) => n.type).map((n) => `type ${n.name}`)];
    if (add.length === 0) continue;
    if (existing) {
      const named = existing.importClause!.namedBindings as TS.NamedImports;
      addToList(sf, named.getStart(sf), named.elements, add, edits);
    } else lines.push(`import { ${add.join(', ')} } from ${style.quote}${module}${style.quote}${style.semicolon}`);
  }
  if (lines.length > 0) {
    const { at, after } = insertionPoint(sf);
    const block = lines.join(nl);
    const endsWithNewline = at === 0 || sf.text[at - 1] === '\n';
    edits.push({ start: at, end: at, text: after ? `${endsWithNewline ? '' : nl}${block}${nl}` : `${block}${nl}${nl}` });
  }
  return edits;
}

/**
 * Edits that remove names imported from `fromModule` modules that nothing in the file uses any more;
 * only `candidates` (names the file used before it was rewritten) are considered.
 */
export function removeUnusedImports(
  sf: TS.SourceFile,
  checker: TS.TypeChecker,
  fromModule: (module: string) => boolean,
  candidates: ReadonlySet<string>,
): Edit[] {
  const used = (name: TS.Identifier): boolean => {
    const symbol = checker.getSymbolAtLocation(name);
    let found = false;
    const visit = (node: TS.Node): void => {
      if (found) return;
      if (ts.isIdentifier(node) && node !== name && node.text === name.text) {
        const s =
          checker.getSymbolAtLocation(node) ??
          (ts.isShorthandPropertyAssignment(node.parent) ? checker.getShorthandAssignmentValueSymbol(node.parent) : undefined);
        if (s === symbol || s === undefined) found = true;
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    return found;
  };
  const edits: Edit[] = [];
  const whole: TS.Statement[] = [];
  const dropList = (statement: TS.Statement, elements: readonly TS.Node[], names: readonly TS.Identifier[]) => {
    const unused = elements.filter((_, i) => candidates.has(names[i]!.text) && !used(names[i]!));
    if (unused.length === 0) return;
    if (unused.length === elements.length) {
      whole.push(statement);
      return;
    }
    for (const e of unused) {
      const i = elements.indexOf(e);
      const next = elements[i + 1];
      const prev = elements[i - 1];
      if (next) edits.push({ start: e.getStart(sf), end: next.getStart(sf), text: '' });
      else edits.push({ start: prev!.getEnd(), end: e.getEnd(), text: '' });
    }
  };
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier) && fromModule(s.moduleSpecifier.text)) {
      const clause = s.importClause;
      const b = clause?.namedBindings;
      if (clause && !clause.name && b && ts.isNamedImports(b))
        dropList(
          s,
          b.elements,
          b.elements.map((e) => e.name),
        );
      continue;
    }
    const r = requireDeclaration(s);
    if (r && fromModule(r.module) && ts.isObjectBindingPattern(r.decl.name) && r.decl.name.elements.every((e) => ts.isIdentifier(e.name))) {
      const elements = r.decl.name.elements;
      dropList(
        s,
        elements,
        elements.map((e) => e.name as TS.Identifier),
      );
    }
  }
  return [...edits, ...removeStatements(sf, whole)];
}
