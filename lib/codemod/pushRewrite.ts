/**
 * A push (a server-to-client `elicitation/create`, `sampling/createMessage`, `roots/list` or
 * `ping`) as native mode finds it, and its rewrite when it is the handler's only one: an
 * `inputRequired(…)` return guarded by `inputResponse(…)` before the statement that awaited it,
 * and the answer read from `ctx.mcpReq.inputResponses` where the push was.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { indentAt, indentUnit, lineStart, newlineOf, quoteOf } from './edits.ts';
import { propertyValue, rootIdentifier, stringValue, walk, within, type FileRewrite } from './fileRewrite.ts';
import type { Handler } from './handlers.ts';
import { isPureStatement } from './purity.ts';

export const V2_SERVER = '@modelcontextprotocol/server';

export type PushKind = 'elicit' | 'sampling' | 'roots' | 'ping';

export interface Push {
  readonly call: TS.CallExpression;
  readonly kind: PushKind;
  /** The request's params expression, when the push has one. */
  readonly params?: TS.Expression;
}

const INPUT_METHODS: Record<string, PushKind> = {
  'elicitation/create': 'elicit',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
  ping: 'ping',
};

/** An object literal given directly, or through a `const` declared with one. */
function literalOf(f: FileRewrite, arg: TS.Expression | undefined): TS.ObjectLiteralExpression | undefined {
  if (arg && ts.isObjectLiteralExpression(arg)) return arg;
  if (!arg || !ts.isIdentifier(arg)) return undefined;
  const decl = f.declarationOf(arg);
  return decl && ts.isVariableDeclaration(decl) && decl.initializer && ts.isObjectLiteralExpression(decl.initializer)
    ? decl.initializer
    : undefined;
}

/** The push a call makes, if it is one. */
export function pushOf(f: FileRewrite, call: TS.CallExpression): Push | undefined {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee)) return undefined;
  const root = rootIdentifier(callee.expression);
  if (root?.text === 'inputRequired') return undefined;
  const name = callee.name.text;
  const [first] = call.arguments;
  switch (name) {
    case 'elicitInput':
      return { call, kind: 'elicit', ...(first ? { params: first } : {}) };
    case 'createMessage':
    case 'requestSampling':
      return { call, kind: 'sampling', ...(first ? { params: first } : {}) };
    case 'listRoots':
      return { call, kind: 'roots' };
    case 'ping':
      return call.arguments.length === 0 ? { call, kind: 'ping' } : undefined;
    case 'send':
    case 'sendRequest': {
      const request = literalOf(f, first);
      if (!request) return undefined;
      const method = stringValue(propertyValue(request, 'method'));
      const kind = method ? INPUT_METHODS[method] : undefined;
      if (!kind) return undefined;
      // Params inside a request built beforehand cannot be moved with the call.
      const params = request === first ? propertyValue(request, 'params') : undefined;
      return { call, kind, ...(params ? { params } : {}) };
    }
    default:
      return undefined;
  }
}

/** The statement of the handler's body that holds a node, and whether the way there is unconditional. */
function topStatement(node: TS.Node, body: TS.Block): { statement: TS.Statement; block: TS.Block; unconditional: boolean } | undefined {
  let unconditional = true;
  let n: TS.Node = node;
  while (n.parent && n.parent !== body) {
    const p = n.parent;
    if (ts.isBlock(p) && ts.isTryStatement(p.parent) && p.parent.tryBlock === p && p.parent.parent === body)
      return { statement: n as TS.Statement, block: p, unconditional };
    const fine =
      ts.isVariableDeclaration(p) ||
      ts.isVariableDeclarationList(p) ||
      ts.isVariableStatement(p) ||
      ts.isExpressionStatement(p) ||
      ts.isReturnStatement(p) ||
      ts.isParenthesizedExpression(p) ||
      ts.isPropertyAccessExpression(p) ||
      (ts.isElementAccessExpression(p) && p.expression === n) ||
      ts.isAsExpression(p) ||
      ts.isNonNullExpression(p) ||
      ts.isSatisfiesExpression(p) ||
      ts.isTemplateSpan(p) ||
      ts.isTemplateExpression(p) ||
      ts.isPropertyAssignment(p) ||
      ts.isObjectLiteralExpression(p) ||
      ts.isArrayLiteralExpression(p) ||
      ts.isSpreadElement(p) ||
      ts.isCallExpression(p) ||
      ts.isAwaitExpression(p) ||
      (ts.isBinaryExpression(p) &&
        ![
          ts.SyntaxKind.AmpersandAmpersandToken,
          ts.SyntaxKind.BarBarToken,
          ts.SyntaxKind.QuestionQuestionToken,
          ts.SyntaxKind.CommaToken,
        ].includes(p.operatorToken.kind));
    if (!fine) unconditional = false;
    n = p;
  }
  return n.parent === body ? { statement: n as TS.Statement, block: body, unconditional } : undefined;
}

/** Re-indents the lines after the first of a moved text. */
function reindent(text: string, from: string, to: string): string {
  return text
    .split('\n')
    .map((line, i) => (i > 0 && line.startsWith(from) ? to + line.slice(from.length) : line))
    .join('\n');
}

const RESULT_TYPE: Record<Exclude<PushKind, 'ping'>, string> = {
  elicit: 'ElicitResult',
  sampling: 'CreateMessageResult',
  roots: 'ListRootsResult',
};
const DEFAULT_KEY: Record<Exclude<PushKind, 'ping'>, string> = { elicit: 'elicitation', sampling: 'sampling', roots: 'roots' };

export function rewritePush(f: FileRewrite, h: Handler, push: Push, ctxOf: (h: Handler) => string | null): void {
  const kind = push.kind as Exclude<PushKind, 'ping'>;
  const body = h.fn.body;
  const awaited = push.call.parent;
  if (!body || !ts.isBlock(body) || !ts.isAwaitExpression(awaited) || awaited.expression !== push.call) {
    f.mark(push.call, 'push-conditional');
    return;
  }
  const top = topStatement(awaited, body);
  if (!top || !top.unconditional) {
    f.mark(push.call, 'push-conditional');
    return;
  }
  const outer = top.block === body ? top.statement : (top.block.parent as TS.TryStatement);
  const before = [
    ...body.statements.slice(0, body.statements.indexOf(outer as TS.Statement)),
    ...(top.block === body ? [] : top.block.statements.slice(0, top.block.statements.indexOf(top.statement))),
  ];
  const effect = before.find((s) => !isPureStatement(s));
  if (effect) {
    const text = effect.getText(f.sf).split('\n')[0]!.trim().replace(/;$/, '');
    f.mark(push.call, 'side-effects-before-push', `first: ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`);
    return;
  }
  // The request to return: its params must be a literal that does not depend on the push's own statement.
  let builder: string;
  const params = push.params;
  if (kind === 'roots') builder = 'inputRequired.listRoots()';
  else {
    const local = params
      ? [params, ...descendants(params)].some(
          (n) => isReference(n) && ((d) => d !== undefined && within(d, top.statement))(f.declarationOf(n)),
        )
      : false;
    if (!params || local || (kind === 'elicit' && !ts.isObjectLiteralExpression(params))) {
      f.mark(push.call, 'push-params');
      return;
    }
    const from = indentAt(f.text, params.getStart(f.sf));
    const to = indentAt(f.text, top.statement.getStart(f.sf)) + indentUnit(f.text).repeat(3);
    if (kind === 'sampling') builder = `inputRequired.createMessage(${reindent(params.getText(f.sf), from, to)})`;
    else {
      const literal = params as TS.ObjectLiteralExpression;
      const mode = propertyValue(literal, 'mode');
      const modeText = mode ? stringValue(mode) : 'form';
      if (modeText === 'form') builder = `inputRequired.elicit(${reindent(params.getText(f.sf), from, to)})`;
      else if (modeText === 'url') {
        const kept = literal.properties.filter(
          (p) => !(p.name && ts.isIdentifier(p.name) && ['mode', 'elicitationId'].includes(p.name.text)),
        );
        builder = `inputRequired.elicitUrl({ ${kept.map((p) => p.getText(f.sf)).join(', ')} })`;
      } else {
        f.mark(push.call, 'push-params');
        return;
      }
    }
  }
  const ctx = ctxOf(h);
  if (ctx === null) {
    f.mark(push.call, 'handler-shape');
    return;
  }
  const declared =
    ts.isVariableStatement(top.statement) && top.statement.declarationList.declarations.length === 1
      ? top.statement.declarationList.declarations[0]!
      : undefined;
  const key =
    declared && ts.isIdentifier(declared.name) && unparen(declared.initializer) === awaited ? declared.name.text : DEFAULT_KEY[kind];
  const nl = newlineOf(f.text);
  const indent = indentAt(f.text, top.statement.getStart(f.sf));
  const unit = indentUnit(f.text);
  const semi = top.statement.getText(f.sf).trimEnd().endsWith(';') ? ';' : '';
  const quote = quoteOf(f.text);
  const keyLiteral = `${quote}${key}${quote}`;
  const ret = builder.includes('\n')
    ? [`return inputRequired({`, `${unit}inputRequests: {`, `${unit}${unit}${key}: ${builder},`, `${unit}},`, `})${semi}`]
    : [`return inputRequired({ inputRequests: { ${key}: ${builder} } })${semi}`];
  const guard = [
    `if (inputResponse(${ctx}.mcpReq.inputResponses, ${keyLiteral}).kind !== ${quote}${kind === 'elicit' ? 'elicit' : kind}${quote}) {`,
    ...ret.map((l) => `${unit}${l}`),
    '}',
  ].join(`${nl}${indent}`);
  const at = lineStart(f.text, top.statement.getStart(f.sf));
  f.edit(at, at, `${indent}${guard}${nl}`);
  const response = `${ctx}.mcpReq.inputResponses?.[${keyLiteral}]`;
  // The answer keeps the type the push had: `as` in TypeScript, a JSDoc cast in JavaScript.
  const read = f.model.typescript
    ? `${response} as ${RESULT_TYPE[kind]}`
    : `/** @type {import(${quote}${V2_SERVER}${quote}).${RESULT_TYPE[kind]}} */ (${response})`;
  if (ts.isExpressionStatement(top.statement) && unparen(top.statement.expression) === awaited) {
    f.remove([top.statement]);
  } else {
    const parent = awaited.parent;
    const bare =
      !f.model.typescript || ts.isVariableDeclaration(parent) || ts.isParenthesizedExpression(parent) || ts.isReturnStatement(parent);
    f.replace(awaited, bare ? read : `(${read})`);
  }
  f.need(V2_SERVER, 'inputRequired');
  f.need(V2_SERVER, 'inputResponse');
  if (f.model.typescript) f.need(V2_SERVER, RESULT_TYPE[kind], true);
  const what = { elicit: 'elicitation', sampling: 'sampling', roots: 'roots' }[kind];
  f.rewrote(
    push.call,
    `${what} push → inputRequired({ inputRequests: { ${key} } }) on the first pass, ctx.mcpReq.inputResponses.${key} on re-entry`,
  );
}

function unparen(e: TS.Expression | undefined): TS.Expression | undefined {
  while (e && ts.isParenthesizedExpression(e)) e = e.expression;
  return e;
}

/** An identifier that names a value (not a property name in `a.name` or `{ name: … }`). */
function isReference(node: TS.Node): node is TS.Identifier {
  if (!ts.isIdentifier(node)) return false;
  const p = node.parent;
  if (ts.isPropertyAccessExpression(p) && p.name === node) return false;
  if ((ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p) || ts.isPropertySignature(p)) && p.name === node) return false;
  return true;
}

function descendants(node: TS.Node): TS.Node[] {
  const out: TS.Node[] = [];
  walk(node, (n) => out.push(n));
  return out;
}
