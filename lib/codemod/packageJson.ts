/**
 * The nearest package.json of a file, and the one edit the codemod makes to it: `mcp-dual-era` in
 * `dependencies`, inserted in alphabetical place with the file's own indentation, everything else
 * left as written.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { indentAt, lineStart, newlineOf, type Edit } from './edits.ts';

/** The package.json closest above a path, if any. */
export function nearestPackageJson(path: string): string | undefined {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The `type` of a package.json text (`module` or `commonjs`), if it parses. */
export function packageType(text: string): 'module' | 'commonjs' | undefined {
  try {
    const type = (JSON.parse(text) as { type?: unknown }).type;
    return type === 'module' ? 'module' : type === 'commonjs' ? 'commonjs' : undefined;
  } catch {
    return undefined;
  }
}

function propertyName(p: TS.ObjectLiteralElementLike): string | undefined {
  return p.name && ts.isStringLiteral(p.name) ? p.name.text : undefined;
}

/**
 * The edit that adds `name: version` to `dependencies`, or undefined when the package already
 * depends on it (in any dependency list), is that package, or the text is not a JSON object.
 */
export function addDependency(text: string, name: string, version: string): Edit | undefined {
  const json = ts.parseJsonText('package.json', text);
  const statement = json.statements[0];
  const root = statement && ts.isObjectLiteralExpression(statement.expression) ? statement.expression : undefined;
  if (!root || (json as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics?.length) return undefined;
  // The package itself (its own examples and fixtures) does not depend on itself.
  if (
    root.properties.some(
      (p) => ts.isPropertyAssignment(p) && propertyName(p) === 'name' && ts.isStringLiteral(p.initializer) && p.initializer.text === name,
    )
  )
    return undefined;
  const lists = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'];
  for (const p of root.properties) {
    if (!ts.isPropertyAssignment(p) || !lists.includes(propertyName(p) ?? '') || !ts.isObjectLiteralExpression(p.initializer)) continue;
    if (p.initializer.properties.some((d) => propertyName(d) === name)) return undefined;
  }
  const nl = newlineOf(text);
  const entry = `"${name}": "${version}"`;
  const deps = root.properties.find((p): p is TS.PropertyAssignment => ts.isPropertyAssignment(p) && propertyName(p) === 'dependencies');
  if (deps && ts.isObjectLiteralExpression(deps.initializer)) {
    const list = deps.initializer;
    const items = list.properties;
    if (items.length === 0) {
      const outer = indentAt(text, deps.getStart(json));
      const inner = outer + (indentAt(text, root.properties[0]!.getStart(json)) || '  ');
      return { start: list.getStart(json) + 1, end: list.getEnd() - 1, text: `${nl}${inner}${entry}${nl}${outer}` };
    }
    const after = items.filter((d) => (propertyName(d) ?? '') < name).pop();
    const indent = indentAt(text, items[0]!.getStart(json));
    const multiline = text.slice(list.getStart(json), items[0]!.getStart(json)).includes('\n');
    const sep = multiline ? `,${nl}${indent}` : ', ';
    if (after) return { start: after.getEnd(), end: after.getEnd(), text: `${sep}${entry}` };
    const first = items[0]!.getStart(json);
    return { start: first, end: first, text: `${entry}${sep}` };
  }
  // No dependencies yet: a new member at the end of the object, laid out like the others.
  const last = root.properties[root.properties.length - 1];
  if (!last)
    return { start: root.getStart(json) + 1, end: root.getEnd() - 1, text: `${nl}  "dependencies": {${nl}    ${entry}${nl}  }${nl}` };
  if (!text.slice(root.getStart(json), root.getEnd()).includes('\n'))
    return { start: last.getEnd(), end: last.getEnd(), text: `, "dependencies": { ${entry} }` };
  const indent = indentAt(text, lineStart(text, last.getStart(json)));
  return {
    start: last.getEnd(),
    end: last.getEnd(),
    text: `,${nl}${indent}"dependencies": {${nl}${indent}${indent || '  '}${entry}${nl}${indent}}`,
  };
}
