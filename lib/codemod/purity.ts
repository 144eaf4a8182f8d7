/**
 * Whether code can safely run twice: the statements a handler runs before a push run again when
 * the call comes back with its input, so native mode rewrites a push only when everything before it
 * computes values and nothing else (declarations, early returns, well-known pure functions).
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';

const PURE_FUNCTIONS = new Set([
  'String',
  'Number',
  'Boolean',
  'BigInt',
  'parseInt',
  'parseFloat',
  'encodeURIComponent',
  'decodeURIComponent',
  'encodeURI',
  'decodeURI',
  'isNaN',
  'isFinite',
]);
const PURE_STATICS =
  /^(JSON\.(stringify|parse)|Math\.\w+|Object\.(keys|values|entries|fromEntries|freeze|is)|Array\.(isArray|from|of)|Number\.\w+|String\.(raw|fromCharCode)|Date\.(now|parse))$/;
const PURE_METHODS = new Set([
  'toString',
  'toFixed',
  'toPrecision',
  'toUpperCase',
  'toLowerCase',
  'trim',
  'trimStart',
  'trimEnd',
  'slice',
  'substring',
  'split',
  'join',
  'map',
  'filter',
  'reduce',
  'find',
  'findIndex',
  'findLast',
  'some',
  'every',
  'includes',
  'indexOf',
  'lastIndexOf',
  'startsWith',
  'endsWith',
  'padStart',
  'padEnd',
  'replace',
  'replaceAll',
  'at',
  'concat',
  'flat',
  'flatMap',
  'keys',
  'values',
  'entries',
  'get',
  'has',
  'toISOString',
  'getTime',
  'localeCompare',
  'repeat',
  'charAt',
  'charCodeAt',
  'match',
  'test',
  'normalize',
  'toJSON',
  'valueOf',
]);
const PURE_CONSTRUCTORS = new Set(['Date', 'URL', 'URLSearchParams', 'Map', 'Set', 'Array', 'RegExp', 'Error', 'TypeError', 'RangeError']);

/** Whether evaluating an expression has no effect beyond its value. */
export function isPureExpression(node: TS.Node): boolean {
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    // A callback (for map, filter…) runs when called: its body must be pure too.
    return ts.isBlock(node.body)
      ? node.body.statements.every((s) => ts.isReturnStatement(s) && (!s.expression || isPureExpression(s.expression)))
      : isPureExpression(node.body);
  }
  if (ts.isAwaitExpression(node) || ts.isYieldExpression(node) || ts.isDeleteExpression(node) || ts.isTaggedTemplateExpression(node))
    return false;
  if (
    ts.isBinaryExpression(node) &&
    node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
    node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
  )
    return false;
  if (
    (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
    (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
  )
    return false;
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const known =
      (ts.isIdentifier(callee) && PURE_FUNCTIONS.has(callee.text)) ||
      (ts.isPropertyAccessExpression(callee) &&
        ts.isIdentifier(callee.expression) &&
        PURE_STATICS.test(`${callee.expression.text}.${callee.name.text}`)) ||
      (ts.isPropertyAccessExpression(callee) && PURE_METHODS.has(callee.name.text) && isPureExpression(callee.expression));
    return known && node.arguments.every(isPureExpression);
  }
  if (ts.isNewExpression(node))
    return (
      ts.isIdentifier(node.expression) && PURE_CONSTRUCTORS.has(node.expression.text) && (node.arguments ?? []).every(isPureExpression)
    );
  let pure = true;
  ts.forEachChild(node, (child) => {
    if (pure && !isPureExpression(child)) pure = false;
  });
  return pure;
}

/** A statement that leaves the handler (`return x;`, `throw e;`) with a pure expression. */
function isPureExit(node: TS.Statement): boolean {
  if (ts.isReturnStatement(node) || ts.isThrowStatement(node)) return !node.expression || isPureExpression(node.expression);
  if (ts.isBlock(node)) return node.statements.every((s) => isPureStatement(s) || isPureExit(s));
  return false;
}

/** Whether running a statement twice changes nothing but the values it computes. */
export function isPureStatement(node: TS.Statement): boolean {
  if (ts.isEmptyStatement(node)) return true;
  if (ts.isVariableStatement(node))
    return node.declarationList.declarations.every((d) => !d.initializer || isPureExpression(d.initializer));
  if (ts.isIfStatement(node)) {
    const branch = (s: TS.Statement | undefined) => !s || isPureStatement(s) || isPureExit(s);
    return isPureExpression(node.expression) && branch(node.thenStatement) && branch(node.elseStatement);
  }
  if (ts.isBlock(node)) return node.statements.every(isPureStatement);
  return false;
}
