/**
 * What the wrap rules need to know about server wiring: which SDK v1 transports a `new` builds,
 * where a handler is registered (an Express- or Hono-style route, or Node's `createServer`), and
 * whether a handler does nothing but MCP wiring (so replacing it loses nothing of the user's).
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { rootIdentifier, within, type FileRewrite } from './fileRewrite.ts';

export type ServerTransportKind = 'stdio' | 'http-node' | 'http-web' | 'sse';

const SERVER_MODULE =
  /^@modelcontextprotocol\/sdk\/(?:dist\/(?:esm|cjs)\/)?server\/(stdio|streamableHttp|webStandardStreamableHttp|sse)(?:\.js)?$/;
const SERVER_CLASSES: Record<string, ServerTransportKind> = {
  StdioServerTransport: 'stdio',
  StreamableHTTPServerTransport: 'http-node',
  WebStandardStreamableHTTPServerTransport: 'http-web',
  SSEServerTransport: 'sse',
};

/** Whether a module is one of the v1 SDK's server transport modules. */
export function isServerTransportModule(module: string): boolean {
  return SERVER_MODULE.test(module);
}

/** The name of the imported class a `new` builds, when it comes from `matches(module)`. */
export function importedClass(f: FileRewrite, expr: TS.Expression, matches: (module: string) => boolean): string | undefined {
  if (ts.isIdentifier(expr)) {
    const imported = f.importOf(expr);
    return imported && matches(imported.module) ? imported.name : undefined;
  }
  if (ts.isPropertyAccessExpression(expr) && ts.isIdentifier(expr.expression)) {
    const imported = f.importOf(expr.expression);
    return imported && imported.name === '*' && matches(imported.module) ? expr.name.text : undefined;
  }
  return undefined;
}

/** The kind of v1 server transport a `new` builds, if it builds one. */
export function serverTransportKind(f: FileRewrite, node: TS.NewExpression): ServerTransportKind | undefined {
  const name = importedClass(f, node.expression, isServerTransportModule);
  return name ? SERVER_CLASSES[name] : undefined;
}

/** The identifier a `new` is stored in: `const t = new …` or `t = new …`. */
export function boundIdentifier(node: TS.Expression): TS.Identifier | undefined {
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && parent.initializer === node && ts.isIdentifier(parent.name)) return parent.name;
  if (
    ts.isBinaryExpression(parent) &&
    parent.right === node &&
    parent.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
    ts.isIdentifier(parent.left)
  )
    return parent.left;
  return undefined;
}

/** `x.connect(arg)` with `arg` the given node. */
export function connectCallOf(arg: TS.Node): TS.CallExpression | undefined {
  const call = arg.parent;
  if (
    ts.isCallExpression(call) &&
    call.arguments.length === 1 &&
    call.arguments[0] === arg &&
    ts.isPropertyAccessExpression(call.expression) &&
    call.expression.name.text === 'connect'
  )
    return call;
  return undefined;
}

const ROUTE_METHODS = new Set(['get', 'post', 'put', 'delete', 'patch', 'all']);

/** Where a handler function is registered. */
export type Registration =
  /** `app.post('/mcp', handler)`: an Express- or Hono-style route. */
  | { readonly kind: 'route'; readonly call: TS.CallExpression; readonly receiver: string; readonly path: string; readonly method: string }
  /** `createServer(handler)` from node:http or node:https. */
  | { readonly kind: 'node'; readonly call: TS.CallExpression };

/** How a call registers `fn` (its last argument), if it does. */
export function registrationOf(f: FileRewrite, call: TS.CallExpression): Registration | undefined {
  const callee = call.expression;
  if (ts.isPropertyAccessExpression(callee) && ROUTE_METHODS.has(callee.name.text) && call.arguments.length >= 2) {
    const path = call.arguments[0]!;
    if (!ts.isStringLiteral(path) && !ts.isNoSubstitutionTemplateLiteral(path)) return undefined;
    return { kind: 'route', call, receiver: callee.expression.getText(f.sf), path: path.text, method: callee.name.text };
  }
  const name = ts.isIdentifier(callee) ? callee : ts.isPropertyAccessExpression(callee) ? callee.name : undefined;
  if (name?.text === 'createServer') {
    const root = ts.isIdentifier(callee) ? callee : rootIdentifier(callee);
    const imported = root ? f.importOf(root) : undefined;
    if (imported && /^(node:)?https?$/.test(imported.module)) return { kind: 'node', call };
  }
  return undefined;
}

/** The registration of a handler function: inline as the last argument, or a function named there. */
export function findRegistration(
  f: FileRewrite,
  fn: TS.FunctionLikeDeclaration,
): { registration: Registration; declaration?: TS.Statement } | undefined {
  const direct = fn.parent;
  if (ts.isCallExpression(direct) && direct.arguments[direct.arguments.length - 1] === fn) {
    const registration = registrationOf(f, direct);
    return registration ? { registration } : undefined;
  }
  // A named handler: `function handle(req, res) {…}` or `const handle = async (req, res) => {…}`.
  let name: TS.Identifier | undefined;
  let declaration: TS.Statement | undefined;
  if (ts.isFunctionDeclaration(fn) && fn.name) {
    name = fn.name;
    declaration = fn;
  } else if (
    ts.isVariableDeclaration(direct) &&
    ts.isIdentifier(direct.name) &&
    ts.isVariableDeclarationList(direct.parent) &&
    direct.parent.declarations.length === 1
  ) {
    name = direct.name;
    declaration = direct.parent.parent as TS.Statement;
  }
  if (!name || !declaration || !ts.isSourceFile(declaration.parent)) return undefined;
  const uses = f.referencesOf(name).filter((r) => r !== name);
  if (uses.length !== 1) return undefined;
  const use = uses[0]!;
  const call = use.parent;
  if (!ts.isCallExpression(call) || call.arguments[call.arguments.length - 1] !== use) return undefined;
  const registration = registrationOf(f, call);
  return registration ? { registration, declaration } : undefined;
}

/** Names the wiring may call without being anything but wiring. */
const WIRING_GLOBALS = new Set([
  'console',
  'JSON',
  'Object',
  'Array',
  'String',
  'Number',
  'Boolean',
  'Math',
  'Date',
  'Promise',
  'Error',
  'TypeError',
  'Map',
  'Set',
  'URL',
  'crypto',
  'Buffer',
]);

/**
 * The handler function of a registration call (its last argument): written inline, or a function
 * of this file named there (then also the statement that declares it).
 */
export function handlerOf(
  f: FileRewrite,
  call: TS.CallExpression,
): { fn: TS.FunctionLikeDeclaration; declaration?: TS.Statement } | undefined {
  const last = call.arguments[call.arguments.length - 1];
  if (!last) return undefined;
  if (ts.isArrowFunction(last) || ts.isFunctionExpression(last)) return { fn: last };
  if (!ts.isIdentifier(last)) return undefined;
  const decl = f.declarationOf(last);
  if (decl && ts.isFunctionDeclaration(decl) && ts.isSourceFile(decl.parent)) return { fn: decl, declaration: decl };
  if (
    decl &&
    ts.isVariableDeclaration(decl) &&
    decl.initializer &&
    (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer))
  ) {
    const statement = decl.parent.parent;
    if (ts.isVariableStatement(statement) && ts.isSourceFile(statement.parent) && statement.declarationList.declarations.length === 1)
      return { fn: decl.initializer, declaration: statement };
  }
  return undefined;
}

/**
 * What in a handler is not MCP wiring, if anything: a call, `new` or assignment that reaches
 * beyond the handler's own locals, the request and response, the SDK, the transports map, the
 * server (and what came with it) and harmless globals. Undefined when the handler is pure wiring.
 */
export function beyondWiring(f: FileRewrite, fn: TS.FunctionLikeDeclaration, allowed: ReadonlySet<TS.Node>): string | undefined {
  const inside = (id: TS.Identifier): boolean => {
    const decl = f.declarationOf(id);
    if (!decl) return WIRING_GLOBALS.has(id.text);
    if (within(decl, fn) || allowed.has(decl)) return true;
    const imported = f.importOf(id);
    if (imported && (imported.module.startsWith('@modelcontextprotocol/') || /^(node:)?crypto$/.test(imported.module))) return true;
    // An event store class of this file, by shape.
    return (
      ts.isClassDeclaration(decl) &&
      decl.members.some((m) => m.name !== undefined && ts.isIdentifier(m.name) && m.name.text === 'storeEvent')
    );
  };
  let problem: string | undefined;
  const describe = (node: TS.Node) => {
    const text = node.getText(f.sf).replace(/\s+/g, ' ');
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  };
  const visit = (node: TS.Node): void => {
    if (problem) return;
    if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isTaggedTemplateExpression(node)) {
      const callee = ts.isTaggedTemplateExpression(node) ? node.tag : node.expression;
      const root = rootIdentifier(callee);
      if (!root || !inside(root)) problem = `calls ${describe(ts.isTaggedTemplateExpression(node) ? node : callee)}(…)`;
    } else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
    ) {
      const root = rootIdentifier(node.left);
      if (!root || !inside(root)) problem = `assigns ${describe(node.left)}`;
    } else if (
      (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
      (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
    ) {
      const root = rootIdentifier(node.operand);
      if (!root || !inside(root)) problem = `updates ${describe(node.operand)}`;
    } else if (ts.isDeleteExpression(node)) {
      const root = rootIdentifier(node.expression);
      if (!root || !inside(root)) problem = `deletes ${describe(node.expression)}`;
    } else if (node.kind === ts.SyntaxKind.ThisKeyword) problem = 'uses this';
    ts.forEachChild(node, visit);
  };
  if (fn.body) visit(fn.body);
  return problem;
}

/** Every call in the file that registers a route with this receiver and path. */
export function routesAt(f: FileRewrite, receiver: string, path: string): TS.CallExpression[] {
  const out: TS.CallExpression[] = [];
  const visit = (node: TS.Node): void => {
    if (ts.isCallExpression(node)) {
      const r = registrationOf(f, node);
      if (r?.kind === 'route' && r.receiver === receiver && r.path === path) out.push(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(f.sf);
  return out;
}
