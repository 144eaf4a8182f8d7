/**
 * The work in progress on one file: the edits collected by the rules, what each rewrite and marker
 * was (for the report), and the names to import. Also the questions rules ask of the file: which
 * declaration an identifier has, where a name is used, which statement holds a node.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { commentsAbove, indentAt, lineStart, newlineOf, removeStatements, type Edit } from './edits.ts';
import { carriesMarker, markerComment, type MarkerCode } from './markers.ts';
import { importsOf, lineOf, type ImportedName, type SourceModel } from './source.ts';

/** One rewrite, for the report. */
export interface Rewrite {
  /** 1-based line in the original file. */
  readonly line: number;
  readonly what: string;
}

/** A name to import: `type` for a type-only import (TypeScript files only). */
export interface NeededImport {
  readonly name: string;
  readonly type?: boolean;
}

export class FileRewrite {
  readonly model: SourceModel;
  readonly sf: TS.SourceFile;
  readonly text: string;
  readonly edits: Edit[] = [];
  readonly rewrites: Rewrite[] = [];
  /** Module → names to import from it. */
  readonly imports = new Map<string, Map<string, NeededImport>>();
  readonly imported: Map<string, ImportedName>;
  /** Positions of statements already marked with a code in this run. */
  readonly #marked = new Set<string>();

  constructor(model: SourceModel) {
    this.model = model;
    this.sf = model.sf;
    this.text = model.text;
    this.imported = importsOf(model.sf);
  }

  /** Replaces `[start, end)` of the original text (an insertion when they are equal). */
  edit(start: number, end: number, text: string): void {
    this.edits.push({ start, end, text });
  }

  /** Replaces a node's text (its leading comments stay). */
  replace(node: TS.Node, text: string): void {
    this.edit(node.getStart(this.sf), node.getEnd(), text);
  }

  /** Removes statements with their whole lines (see `removeStatements`). */
  remove(statements: readonly TS.Node[]): void {
    this.edits.push(...removeStatements(this.sf, statements));
  }

  /** Records a rewrite for the report, at the node's line. */
  rewrote(node: TS.Node, what: string): void {
    this.rewrites.push({ line: lineOf(this.sf, node.getStart(this.sf)), what });
  }

  /** Records a name the new code imports from a module (`type` for a type-only import). */
  need(module: string, name: string, type = false): void {
    let names = this.imports.get(module);
    if (!names) this.imports.set(module, (names = new Map()));
    const existing = names.get(name);
    names.set(name, { name, type: type && (existing?.type ?? true) });
  }

  /**
   * Marks the statement holding `node` with a comment line above it (once per code and
   * statement; not again when the comment is already there).
   */
  mark(node: TS.Node, code: MarkerCode, detail?: string): void {
    const statement = statementOf(node);
    const start = statement.getStart(this.sf);
    const key = `${start}:${code}`;
    if (this.#marked.has(key)) return;
    this.#marked.add(key);
    if (carriesMarker(commentsAbove(this.sf, statement), code)) return;
    const at = lineStart(this.text, start);
    const indent = indentAt(this.text, start);
    const nl = newlineOf(this.text);
    if (/^[ \t]*$/.test(this.text.slice(at, start))) this.edit(at, at, `${indent}${markerComment(code, detail)}${nl}`);
    else this.edit(start, start, `${markerComment(code, detail)}${nl}${indent}`);
  }

  /** The declaration an identifier refers to (the import specifier for imported names). */
  declarationOf(id: TS.Identifier): TS.Declaration | undefined {
    const symbol = this.model.checker.getSymbolAtLocation(id);
    return symbol?.declarations?.[0];
  }

  /** Every identifier in the file that refers to the same symbol as `id` (declaration included). */
  referencesOf(id: TS.Identifier): TS.Identifier[] {
    const symbol = this.model.checker.getSymbolAtLocation(id);
    if (!symbol) return [id];
    const out: TS.Identifier[] = [];
    const visit = (node: TS.Node): void => {
      if (ts.isIdentifier(node) && node.text === id.text) {
        const s =
          this.model.checker.getSymbolAtLocation(node) ??
          (ts.isShorthandPropertyAssignment(node.parent) ? this.model.checker.getShorthandAssignmentValueSymbol(node.parent) : undefined);
        if (s === symbol) out.push(node);
      }
      ts.forEachChild(node, visit);
    };
    visit(this.sf);
    return out;
  }

  /** Where an identifier's value comes from, when it is imported. */
  importOf(id: TS.Identifier): ImportedName | undefined {
    const decl = this.declarationOf(id);
    if (!decl) return undefined;
    if (ts.isImportSpecifier(decl) || ts.isImportClause(decl) || ts.isNamespaceImport(decl)) return this.imported.get(id.text);
    if (ts.isBindingElement(decl) || ts.isVariableDeclaration(decl)) {
      const found = this.imported.get(id.text);
      const d = ts.isBindingElement(decl) ? decl.parent.parent : decl;
      if (found && ts.isVariableDeclaration(d) && d.initializer && ts.isCallExpression(d.initializer)) return found;
    }
    return undefined;
  }

  /** A name not declared anywhere in the file: `base`, else `base2`, `base3`… */
  freshName(base: string): string {
    const used = new Set<string>();
    const visit = (node: TS.Node): void => {
      if (ts.isIdentifier(node)) used.add(node.text);
      ts.forEachChild(node, visit);
    };
    visit(this.sf);
    if (!used.has(base)) return base;
    for (let i = 2; ; i++) if (!used.has(`${base}${i}`)) return `${base}${i}`;
  }
}

/** The statement that holds a node and sits in a statement list (where a line may be inserted above it). */
export function statementOf(node: TS.Node): TS.Statement {
  let n: TS.Node = node;
  while (
    n.parent &&
    !(
      ts.isSourceFile(n.parent) ||
      ts.isBlock(n.parent) ||
      ts.isModuleBlock(n.parent) ||
      ts.isCaseClause(n.parent) ||
      ts.isDefaultClause(n.parent)
    )
  )
    n = n.parent;
  return n as TS.Statement;
}

/** The identifier at the root of a call chain or member access (`res` in `res.status(400).json(…)`), if any. */
export function rootIdentifier(expr: TS.Expression): TS.Identifier | undefined {
  let e: TS.Expression = expr;
  for (;;) {
    if (ts.isIdentifier(e)) return e;
    if (
      ts.isPropertyAccessExpression(e) ||
      ts.isElementAccessExpression(e) ||
      ts.isCallExpression(e) ||
      ts.isNonNullExpression(e) ||
      ts.isParenthesizedExpression(e) ||
      ts.isAsExpression(e) ||
      ts.isAwaitExpression(e)
    )
      e = e.expression;
    else return undefined;
  }
}

/** Whether `inner` lies within `outer`. */
export function within(inner: TS.Node, outer: TS.Node): boolean {
  return inner.pos >= outer.pos && inner.end <= outer.end;
}

/** The nearest enclosing function-like node. */
export function enclosingFunction(node: TS.Node): TS.FunctionLikeDeclaration | undefined {
  for (let n = node.parent; n; n = n.parent) if (ts.isFunctionLike(n) && 'body' in n) return n as TS.FunctionLikeDeclaration;
  return undefined;
}

/** Calls `visit` for every node below `node`. */
export function walk(node: TS.Node, visit: (n: TS.Node) => void): void {
  const go = (n: TS.Node): void => {
    visit(n);
    ts.forEachChild(n, go);
  };
  ts.forEachChild(node, go);
}

/** The text of a string literal or no-substitution template, else undefined. */
export function stringValue(node: TS.Node | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
}

/** A property of an object literal by name (`name: …`, `name`, or `name() {}`). */
export function propertyOf(object: TS.ObjectLiteralExpression, name: string): TS.ObjectLiteralElementLike | undefined {
  return object.properties.find(
    (p) => p.name !== undefined && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === name,
  );
}

/** The value of a property of an object literal (`name: value` or shorthand `name`). */
export function propertyValue(object: TS.ObjectLiteralExpression, name: string): TS.Expression | undefined {
  const p = propertyOf(object, name);
  if (!p) return undefined;
  if (ts.isPropertyAssignment(p)) return p.initializer;
  if (ts.isShorthandPropertyAssignment(p)) return p.name;
  return undefined;
}
