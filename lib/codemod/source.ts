/**
 * One source file as the codemod sees it: parsed by the TypeScript compiler (TypeScript or
 * JavaScript, ESM or CommonJS), with a binder-only checker for "which declaration is this
 * identifier", the file's imports by local name, and its syntax errors. No type information from
 * other files is needed or loaded.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';

/** How the file loads modules. */
export type ModuleSystem = 'esm' | 'cjs';

/** Where a local name comes from: an `import` or a destructured `require()`. */
export interface ImportedName {
  readonly module: string;
  /** The exported name (`default` for a default import, `*` for a namespace). */
  readonly name: string;
}

export interface SourceModel {
  readonly fileName: string;
  readonly text: string;
  readonly sf: TS.SourceFile;
  readonly checker: TS.TypeChecker;
  /** TypeScript (type annotations allowed) or JavaScript. */
  readonly typescript: boolean;
  readonly moduleSystem: ModuleSystem;
}

const TS_EXT = /\.(ts|tsx|mts|cts)$/;

/** The script kind of a file name. */
export function scriptKindOf(fileName: string): TS.ScriptKind {
  if (/\.tsx$/.test(fileName)) return ts.ScriptKind.TSX;
  if (TS_EXT.test(fileName)) return ts.ScriptKind.TS;
  if (/\.jsx$/.test(fileName)) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

/** Whether the file is TypeScript. */
export function isTypeScript(fileName: string): boolean {
  return TS_EXT.test(fileName);
}

function program(fileName: string, text: string): { sf: TS.SourceFile; checker: TS.TypeChecker; errors: readonly TS.Diagnostic[] } {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKindOf(fileName));
  const options: TS.CompilerOptions = { noLib: true, noResolve: true, allowJs: true, types: [], target: ts.ScriptTarget.Latest };
  const host: TS.CompilerHost = {
    getSourceFile: (name) => (name === fileName ? sf : undefined),
    getDefaultLibFileName: () => 'lib.d.ts',
    writeFile: () => {},
    getCurrentDirectory: () => '/',
    getCanonicalFileName: (name) => name,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
    fileExists: (name) => name === fileName,
    readFile: () => undefined,
  };
  const p = ts.createProgram({ rootNames: [fileName], options, host });
  return { sf, checker: p.getTypeChecker(), errors: p.getSyntacticDiagnostics(sf) };
}

/** The syntax errors of a text, as `line:column message` strings (empty when it parses). */
export function syntaxErrors(fileName: string, text: string): string[] {
  const { sf, errors } = program(fileName, text);
  return describeErrors(sf, errors);
}

function describeErrors(sf: TS.SourceFile, errors: readonly TS.Diagnostic[]): string[] {
  return errors.map((d) => {
    const { line, character } = sf.getLineAndCharacterOfPosition(d.start ?? 0);
    return `${line + 1}:${character + 1} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

/**
 * Parses a file. `packageType` is the `type` of the nearest package.json, which decides the module
 * system of a `.js` file that neither imports nor requires anything.
 */
export function parseSource(
  fileName: string,
  text: string,
  packageType?: 'module' | 'commonjs',
): { model?: SourceModel; errors: string[] } {
  const parsed = program(fileName, text);
  const errors = describeErrors(parsed.sf, parsed.errors);
  if (errors.length > 0) return { errors };
  const { sf, checker } = parsed;
  return {
    model: { fileName, text, sf, checker, typescript: isTypeScript(fileName), moduleSystem: moduleSystemOf(sf, fileName, packageType) },
    errors,
  };
}

function moduleSystemOf(sf: TS.SourceFile, fileName: string, packageType: 'module' | 'commonjs' | undefined): ModuleSystem {
  if (/\.(cjs|cts)$/.test(fileName)) return 'cjs';
  if (/\.(mjs|mts)$/.test(fileName)) return 'esm';
  if (sf.statements.some((s) => ts.isImportDeclaration(s) || ts.isExportDeclaration(s) || ts.isExportAssignment(s) || hasExportModifier(s)))
    return 'esm';
  let requires = false;
  const visit = (node: TS.Node): void => {
    if (requires) return;
    if (isRequireCall(node)) requires = true;
    else ts.forEachChild(node, visit);
  };
  visit(sf);
  if (requires) return 'cjs';
  return packageType === 'commonjs' ? 'cjs' : 'esm';
}

function hasExportModifier(node: TS.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/** `require('x')` with a string literal. */
export function isRequireCall(node: TS.Node): node is TS.CallExpression {
  return (
    ts.isCallExpression(node) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'require' &&
    node.arguments.length === 1 &&
    ts.isStringLiteralLike(node.arguments[0]!)
  );
}

/** Every local name the file imports (ESM imports and destructured or whole `require()`s). */
export function importsOf(sf: TS.SourceFile): Map<string, ImportedName> {
  const out = new Map<string, ImportedName>();
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier) && s.importClause) {
      const module = s.moduleSpecifier.text;
      const clause = s.importClause;
      if (clause.name) out.set(clause.name.text, { module, name: 'default' });
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) out.set(bindings.name.text, { module, name: '*' });
      if (bindings && ts.isNamedImports(bindings)) {
        for (const e of bindings.elements) out.set(e.name.text, { module, name: (e.propertyName ?? e.name).text });
      }
    }
    if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) {
        if (!d.initializer || !isRequireCall(d.initializer)) continue;
        const module = (d.initializer.arguments[0] as TS.StringLiteral).text;
        if (ts.isIdentifier(d.name)) out.set(d.name.text, { module, name: '*' });
        else if (ts.isObjectBindingPattern(d.name)) {
          for (const e of d.name.elements) {
            if (!ts.isIdentifier(e.name)) continue;
            const prop = e.propertyName && ts.isIdentifier(e.propertyName) ? e.propertyName.text : e.name.text;
            out.set(e.name.text, { module, name: prop });
          }
        }
      }
    }
  }
  return out;
}

/** 1-based line of a position. */
export function lineOf(sf: TS.SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}
