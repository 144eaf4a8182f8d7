/**
 * Wrap mode, servers, Streamable HTTP: routes and Node listeners that serve a
 * `StreamableHTTPServerTransport` (stateless or with sessions) or a
 * `WebStandardStreamableHTTPServerTransport` become one endpoint served by `wrapLegacyServer`,
 * provided their handlers are wiring only. A Node listener is handed to the wrap's `node`; the routes
 * on one path become one `all` route to its `node` or `fetch`.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { indentAt, newlineOf } from './edits.ts';
import { enclosingFunction, rootIdentifier, statementOf, stringValue, walk, within, type FileRewrite } from './fileRewrite.ts';
import { markerComment } from './markers.ts';
import { beyondWiring, findRegistration, handlerOf, registrationOf, routesAt, type Registration } from './wiring.ts';
import { endpointMarkers, SERVER_ENTRY, serverOf, upstreamOf, type FoundTransport } from './wrapUpstream.ts';

/** Serves a Streamable HTTP transport's endpoint by the wrap; `served` holds the registrations already served. */
export function wrapStreamable(f: FileRewrite, x: FoundTransport, served: Set<TS.CallExpression>): void {
  const handler = enclosingFunction(x.construction);
  const found = handler ? findRegistration(f, handler) : undefined;
  if (!handler || !found || !within(x.connect, handler)) {
    f.mark(x.construction, 'http-not-recognized');
    return;
  }
  const { registration, declaration } = found;
  if (served.has(registration.call)) return;
  const upstream = upstreamOf(f, serverOf(x), handler);
  if ('problem' in upstream) {
    f.mark(x.construction, upstream.problem);
    return;
  }
  const map = sessionMap(f, x.transport);
  const problem = beyondWiring(f, handler, new Set([...upstream.reaches, ...(map ? [map] : [])]));
  if (problem) {
    f.mark(registration.call, 'handler-not-wiring', problem);
    return;
  }
  const web = x.kind === 'http-web' ? webRequestOf(f, handler) : undefined;
  if (x.kind === 'http-web' && !web) {
    f.mark(x.construction, 'http-not-recognized');
    return;
  }
  const wrapName = f.freshName('mcpDualEra');
  const nl = newlineOf(f.text);
  const params = handler.parameters.map((p) => p.getText(f.sf)).join(', ');
  const names = handler.parameters.map((p) => p.name.getText(f.sf));
  const listener = web
    ? `(${params}) => ${wrapName}.fetch(${web})`
    : `(${params || 'req, res'}) => ${wrapName}.node(${names[0] ?? 'req'}, ${names[1] ?? 'res'})`;
  const markers = endpointMarkers(f, x, upstream, handler);
  const wrapDecl = (path: string | null, semi: string, indent: string) =>
    [
      ...markers.map(([code, detail]) => markerComment(code, detail)),
      `const ${wrapName} = wrapLegacyServer({ upstream: ${upstream.text}, http: { path: ${path === null ? 'null' : `'${path}'`} } })${semi}`,
    ].join(`${nl}${indent}`);
  f.need(SERVER_ENTRY, 'wrapLegacyServer');

  if (registration.kind === 'node') {
    served.add(registration.call);
    const statement = statementOf(registration.call);
    const semi = statement.getText(f.sf).trimEnd().endsWith(';') ? ';' : '';
    const path = checkedPath(f, handler) ?? null;
    const at = statement.getStart(f.sf);
    f.edit(at, at, `${wrapDecl(path, semi, indentAt(f.text, at))}${nl}${indentAt(f.text, at)}`);
    if (declaration) {
      f.remove([declaration]);
      f.replace(registration.call.arguments[registration.call.arguments.length - 1]!, listener);
    } else f.replace(handler, listener);
    f.rewrote(
      x.construction,
      `Streamable HTTP ${map ? 'with sessions' : 'stateless'}: the Node request listener → ${wrapName}.node(req, res)`,
    );
    return;
  }

  // A route: every route on the same path whose handler is wiring too goes to the wrap.
  const group = routeGroup(f, registration, map);
  for (const r of group.routes) served.add(r);
  if (group.routes.some((r) => !ts.isExpressionStatement(r.parent))) {
    f.mark(registration.call, 'http-not-recognized');
    return;
  }
  const first = group.routes[0]!;
  const statement = first.parent as TS.ExpressionStatement;
  const indent = indentAt(f.text, statement.getStart(f.sf));
  const semi = statement.getText(f.sf).trimEnd().endsWith(';') ? ';' : '';
  f.replace(
    statement,
    `${wrapDecl(null, semi, indent)}${nl}${indent}${registration.receiver}.all(${first.arguments[0]!.getText(f.sf)}, ${listener})${semi}`,
  );
  f.remove([...group.routes.slice(1).map((r) => r.parent), ...(declaration ? [declaration] : []), ...group.handlers]);
  for (const [call, reason] of group.left) f.mark(call, 'handler-not-wiring', reason);
  const methods = group.routes.map((r) => (registrationOf(f, r) as { method: string }).method.toUpperCase()).join(', ');
  f.rewrote(
    first,
    `Streamable HTTP ${map ? 'with sessions' : 'stateless'}: ${methods} ${registration.path} → ${registration.receiver}.all('${registration.path}', … ${wrapName}.${web ? 'fetch' : 'node'}(…))`,
  );
}

/**
 * The routes that make up one MCP endpoint, those on its path left as they are (with why), and the
 * declarations of named handlers that only these routes used.
 */
function routeGroup(
  f: FileRewrite,
  registration: Extract<Registration, { kind: 'route' }>,
  map: TS.Declaration | undefined,
): { routes: TS.CallExpression[]; left: Array<[TS.CallExpression, string]>; handlers: TS.Statement[] } {
  const routes: TS.CallExpression[] = [];
  const left: Array<[TS.CallExpression, string]> = [];
  const named = new Set<TS.Statement>();
  for (const call of routesAt(f, registration.receiver, registration.path)) {
    if (call === registration.call) {
      routes.push(call);
      continue;
    }
    const handler = handlerOf(f, call);
    const problem = handler ? beyondWiring(f, handler.fn, new Set(map ? [map] : [])) : 'its handler is not a function of this file';
    if (problem) left.push([call, problem]);
    else {
      routes.push(call);
      if (handler!.declaration) named.add(handler!.declaration);
    }
  }
  routes.sort((a, b) => a.pos - b.pos);
  // A named handler goes with the routes only when nothing else uses it.
  const handlers = [...named].filter((d) => {
    const name = ts.isFunctionDeclaration(d)
      ? d.name!
      : ((d as TS.VariableStatement).declarationList.declarations[0]!.name as TS.Identifier);
    return f.referencesOf(name).every((r) => r === name || routes.some((c) => within(r, c)));
  });
  return { routes, left, handlers };
}

/** The declaration of the map the transport is kept in (`transports[id] = t`, `transports.set(id, t)`). */
function sessionMap(f: FileRewrite, transport: TS.Identifier | undefined): TS.Declaration | undefined {
  if (!transport) return undefined;
  const decl = f.declarationOf(transport);
  const name = decl && ts.isVariableDeclaration(decl) && ts.isIdentifier(decl.name) ? decl.name : transport;
  for (const ref of f.referencesOf(name)) {
    const p = ref.parent;
    let target: TS.Expression | undefined;
    if (
      ts.isBinaryExpression(p) &&
      p.right === ref &&
      p.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isElementAccessExpression(p.left)
    )
      target = p.left.expression;
    if (ts.isCallExpression(p) && p.arguments[1] === ref && ts.isPropertyAccessExpression(p.expression) && p.expression.name.text === 'set')
      target = p.expression.expression;
    const root = target ? rootIdentifier(target) : undefined;
    const d = root ? f.declarationOf(root) : undefined;
    if (d) return d;
  }
  return undefined;
}

/** The path a Node listener checks `req.url` against, if it checks one. */
function checkedPath(f: FileRewrite, handler: TS.FunctionLikeDeclaration): string | undefined {
  let path: string | undefined;
  const equality = [
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ];
  walk(handler, (n) => {
    if (path) return;
    if (ts.isBinaryExpression(n) && equality.includes(n.operatorToken.kind)) {
      const sides = [n.left, n.right];
      const literal = sides.map(stringValue).find((v) => v?.startsWith('/'));
      if (literal && sides.some((s) => /\.(url|pathname)$/.test(s.getText(f.sf)))) path = literal.split('?')[0];
    }
    if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      n.expression.name.text === 'startsWith' &&
      /\.(url|pathname)\??$/.test(n.expression.expression.getText(f.sf))
    ) {
      const v = stringValue(n.arguments[0]);
      if (v?.startsWith('/')) path = v;
    }
  });
  return path;
}

/** `transport.handleRequest(<request>)` in a Web handler: the request expression (from the handler's parameters). */
function webRequestOf(f: FileRewrite, handler: TS.FunctionLikeDeclaration): string | undefined {
  let found: string | undefined;
  walk(handler, (n) => {
    if (found || !ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression) || n.expression.name.text !== 'handleRequest')
      return;
    const arg = n.arguments[0];
    const root = arg ? rootIdentifier(arg) : undefined;
    if (arg && root && handler.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === root.text)) found = arg.getText(f.sf);
  });
  return found;
}
