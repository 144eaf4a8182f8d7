/**
 * Wrap mode, servers: the wiring of an SDK v1 server onto `wrapLegacyServer`, handlers untouched.
 * `server.connect(new StdioServerTransport())` becomes `serveStdio(wrapLegacyServer(…))`; routes
 * and Node listeners that serve a `StreamableHTTPServerTransport` (stateless or with sessions) or
 * a `WebStandardStreamableHTTPServerTransport` become one endpoint served by the wrap; an
 * HTTP+SSE setup keeps its routes and gains a Streamable HTTP endpoint beside them.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { indentAt, lineEnd, newlineOf } from './edits.ts';
import { enclosingFunction, propertyOf, rootIdentifier, statementOf, stringValue, walk, within, type FileRewrite } from './fileRewrite.ts';
import { markerComment, type MarkerCode } from './markers.ts';
import {
  beyondWiring,
  boundIdentifier,
  connectCallOf,
  findRegistration,
  handlerOf,
  registrationOf,
  routesAt,
  serverTransportKind,
  type Registration,
  type ServerTransportKind,
} from './wiring.ts';

export const SERVER_ENTRY = 'mcp-dual-era/server';

interface Found {
  readonly kind: ServerTransportKind;
  readonly construction: TS.NewExpression;
  /** The variable holding the transport (absent when built inline in `connect(…)`). */
  readonly transport?: TS.Identifier;
  readonly connect: TS.CallExpression;
}

/** What the wrap is given as its upstream, and what came with it. */
interface Upstream {
  /** `() => createServer()`, or the instance's own text. */
  readonly text: string;
  /** One instance for every session (no factory could be made). */
  readonly single: boolean;
  /** Names destructured beside the server (`cleanup` in `const { server, cleanup } = createServer()`). */
  readonly companions: readonly TS.Identifier[];
  /** Declarations the factory reaches (they are wiring, not the user's own logic). */
  readonly reaches: ReadonlySet<TS.Node>;
}

/** Applies the server wiring rules to a file. */
export function wrapServers(f: FileRewrite): void {
  const found: Found[] = [];
  walk(f.sf, (node) => {
    if (!ts.isNewExpression(node)) return;
    const kind = serverTransportKind(f, node);
    if (!kind) return;
    const x = locate(f, node, kind);
    if (x) found.push(x);
    else f.mark(node, kind === 'sse' ? 'sse-endpoint' : 'http-not-recognized');
  });
  // A file that serves Streamable HTTP, or already serves a wrap, gets no second endpoint for its SSE routes.
  const wrapped = [...f.imported.values()].some((i) => i.module === SERVER_ENTRY && i.name === 'wrapLegacyServer');
  const hasStreamable = wrapped || found.some((x) => x.kind === 'http-node' || x.kind === 'http-web');
  const served = new Set<TS.CallExpression>();
  for (const x of found) {
    if (x.kind === 'stdio') stdio(f, x);
    else if (x.kind !== 'sse') streamable(f, x, served);
    else if (!hasStreamable) sse(f, x, served);
  }
}

/** The transport's variable and its `connect` call. */
function locate(f: FileRewrite, node: TS.NewExpression, kind: ServerTransportKind): Found | undefined {
  const inline = connectCallOf(node);
  if (inline) return { kind, construction: node, connect: inline };
  const transport = boundIdentifier(node);
  if (!transport) return undefined;
  const declared = f.declarationOf(transport);
  const name = declared && ts.isVariableDeclaration(declared) && ts.isIdentifier(declared.name) ? declared.name : transport;
  const connect = f
    .referencesOf(name)
    .map(connectCallOf)
    .find((c) => c !== undefined);
  return connect ? { kind, construction: node, transport, connect } : undefined;
}

function serverOf(x: Found): TS.Expression {
  return (x.connect.expression as TS.PropertyAccessExpression).expression;
}

function stdio(f: FileRewrite, x: Found): void {
  const [input, output] = x.construction.arguments ?? [];
  const streams = [input ? `input: ${input.getText(f.sf)}` : '', output ? `output: ${output.getText(f.sf)}` : ''].filter(Boolean);
  let call = `serveStdio(wrapLegacyServer({ upstream: ${serverOf(x).getText(f.sf)} })${streams.length > 0 ? `, { ${streams.join(', ')} }` : ''})`;
  const target = ts.isAwaitExpression(x.connect.parent) ? x.connect.parent : x.connect;
  if (!(ts.isExpressionStatement(target.parent) || ts.isVoidExpression(target.parent))) call = `Promise.resolve(${call})`;
  f.replace(target, call);
  f.rewrote(x.connect, 'stdio: server.connect(new StdioServerTransport()) → serveStdio(wrapLegacyServer({ upstream }))');
  f.need(SERVER_ENTRY, 'serveStdio');
  f.need(SERVER_ENTRY, 'wrapLegacyServer');
  if (x.transport) dropTransportVariable(f, x.transport, x.connect);
}

/**
 * Removes `const transport = new …;` when nothing but the rewritten `connect` used it; otherwise
 * keeps it and marks its other use (it no longer carries the server).
 */
function dropTransportVariable(f: FileRewrite, transport: TS.Identifier, connect: TS.Node): void {
  const decl = f.declarationOf(transport);
  if (!decl || !ts.isVariableDeclaration(decl) || !ts.isIdentifier(decl.name)) return;
  const others = f.referencesOf(decl.name).filter((r) => r !== decl.name && !within(r, connect));
  const statement = decl.parent.parent;
  if (others.length > 0) f.mark(others[0]!, 'transport-kept');
  else if (ts.isVariableStatement(statement) && statement.declarationList.declarations.length === 1) f.remove([statement]);
}

/** Declarations of the identifiers in an expression. */
function declarationsIn(f: FileRewrite, expr: TS.Node): Set<TS.Node> {
  const out = new Set<TS.Node>();
  const add = (n: TS.Node) => {
    if (!ts.isIdentifier(n)) return;
    const d = f.declarationOf(n);
    if (d) out.add(d);
  };
  add(expr);
  walk(expr, add);
  return out;
}

/**
 * The wrap's upstream from the server that was connected: a factory when the handler builds it
 * from something callable that does not depend on the request; the instance itself otherwise.
 */
function upstreamOf(f: FileRewrite, server: TS.Expression, handler: TS.FunctionLikeDeclaration): Upstream | { problem: MarkerCode } {
  const local = (decls: Set<TS.Node>) => [...decls].some((d) => within(d, handler));
  if (ts.isCallExpression(server) || ts.isNewExpression(server)) {
    const reaches = declarationsIn(f, server);
    return local(reaches)
      ? { problem: 'server-from-request' }
      : { text: `() => ${server.getText(f.sf)}`, single: false, companions: [], reaches };
  }
  if (!ts.isIdentifier(server)) return { text: server.getText(f.sf), single: true, companions: [], reaches: new Set() };
  const decl = f.declarationOf(server);
  if (!decl) return { problem: 'http-not-recognized' };
  if (!within(decl, handler)) return { text: server.text, single: true, companions: [], reaches: new Set([decl]) };
  const holder = ts.isBindingElement(decl) ? decl.parent.parent : decl;
  if (!ts.isVariableDeclaration(holder) || !holder.initializer) return { problem: 'http-not-recognized' };
  const awaited = ts.isAwaitExpression(holder.initializer);
  const init = awaited ? (holder.initializer as TS.AwaitExpression).expression : holder.initializer;
  if (!(ts.isCallExpression(init) || ts.isNewExpression(init))) return { problem: 'http-not-recognized' };
  const reaches = declarationsIn(f, init);
  if (local(reaches)) return { problem: 'server-from-request' };
  reaches.add(decl);
  // A server configured here (tools registered in the handler) cannot be rebuilt by calling `init`.
  const name = ts.isBindingElement(decl) ? (decl.name as TS.Identifier) : (decl as TS.VariableDeclaration).name;
  if (ts.isIdentifier(name) && f.referencesOf(name).some((r) => r !== name && within(r, handler) && !isLifecycleUse(r)))
    return { problem: 'server-built-here' };
  let text = `() => ${init.getText(f.sf)}`;
  let companions: TS.Identifier[] = [];
  if (ts.isBindingElement(decl)) {
    if (!ts.isObjectBindingPattern(decl.parent)) return { problem: 'http-not-recognized' };
    const property = decl.propertyName && ts.isIdentifier(decl.propertyName) ? decl.propertyName.text : server.text;
    companions = decl.parent.elements.filter((e) => e !== decl && ts.isIdentifier(e.name)).map((e) => e.name as TS.Identifier);
    text = awaited ? `async () => (await ${init.getText(f.sf)}).${property}` : `() => ${init.getText(f.sf)}.${property}`;
  } else if (awaited) text = `async () => await ${init.getText(f.sf)}`;
  return { text, single: false, companions, reaches };
}

/** `server.connect(t)`, `server.close()`, `server.server.onclose = …`: uses that are wiring, not configuration. */
function isLifecycleUse(ref: TS.Identifier): boolean {
  let access: TS.Node = ref.parent;
  if (!ts.isPropertyAccessExpression(access)) return false;
  if (access.name.text === 'server' && ts.isPropertyAccessExpression(access.parent)) access = access.parent;
  const name = (access as TS.PropertyAccessExpression).name.text;
  if (['connect', 'close'].includes(name) && ts.isCallExpression(access.parent)) return true;
  return ['onclose', 'onerror'].includes(name) && ts.isBinaryExpression(access.parent) && access.parent.left === access;
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

/** The options object literal of the transport construction, if written inline. */
function optionsOf(x: Found): TS.ObjectLiteralExpression | undefined {
  const arg = x.kind === 'sse' ? x.construction.arguments?.[2] : x.construction.arguments?.[0];
  return arg && ts.isObjectLiteralExpression(arg) ? arg : undefined;
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

/** The marker comment lines of what the replaced wiring did that the wrap does not. */
function endpointMarkers(f: FileRewrite, x: Found, upstream: Upstream, handler: TS.FunctionLikeDeclaration): Array<[MarkerCode, string?]> {
  const out: Array<[MarkerCode, string?]> = [];
  const options = optionsOf(x);
  if (upstream.single) out.push(['single-instance']);
  const used = upstream.companions.filter((c) => f.referencesOf(c).some((r) => r !== c && within(r, handler)));
  if (used.length > 0) out.push(['session-cleanup', used.map((c) => c.text).join(', ')]);
  if (options && propertyOf(options, 'eventStore')) out.push(['event-store']);
  if (options && (propertyOf(options, 'allowedHosts') || propertyOf(options, 'allowedOrigins'))) out.push(['origin-policy']);
  return out;
}

function streamable(f: FileRewrite, x: Found, served: Set<TS.CallExpression>): void {
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

/** HTTP+SSE: the SSE routes stay; a Streamable HTTP endpoint served by the wrap is added after them. */
function sse(f: FileRewrite, x: Found, served: Set<TS.CallExpression>): void {
  const handler = enclosingFunction(x.construction);
  const found = handler ? findRegistration(f, handler) : undefined;
  if (!handler || !found || found.registration.kind !== 'route' || !within(x.connect, handler)) {
    f.mark(x.construction, 'sse-endpoint');
    return;
  }
  const { registration } = found;
  if (served.has(registration.call)) return;
  served.add(registration.call);
  const upstream = upstreamOf(f, serverOf(x), handler);
  if ('problem' in upstream) {
    f.mark(x.construction, upstream.problem);
    return;
  }
  // The routes of the SSE endpoint: this one and those that post messages to its transports.
  const related: TS.Statement[] = [statementOf(registration.call)];
  const taken = new Set<string>();
  walk(f.sf, (n) => {
    if (!ts.isCallExpression(n)) return;
    const r = registrationOf(f, n);
    if (r?.kind !== 'route' || r.receiver !== registration.receiver) return;
    taken.add(r.path);
    let posts = false;
    walk(n, (m) => {
      if (ts.isPropertyAccessExpression(m) && m.name.text === 'handlePostMessage') posts = true;
    });
    if (posts) related.push(statementOf(n));
  });
  const last = related.sort((a, b) => b.pos - a.pos)[0]!;
  const path = taken.has('/mcp') ? '/mcp-dual-era' : '/mcp';
  const wrapName = f.freshName('mcpDualEra');
  const indent = indentAt(f.text, last.getStart(f.sf));
  const nl = newlineOf(f.text);
  const semi = last.getText(f.sf).trimEnd().endsWith(';') ? ';' : '';
  const pathArg = registration.call.arguments[0]!.getText(f.sf);
  const quote = pathArg[0] === '`' ? "'" : pathArg[0]!;
  const lines = [
    ...endpointMarkers(f, x, upstream, handler).map(([code, detail]) => markerComment(code, detail)),
    `const ${wrapName} = wrapLegacyServer({ upstream: ${upstream.text}, http: { path: null } })${semi}`,
    `${registration.receiver}.all(${quote}${path}${quote}, (req, res) => ${wrapName}.node(req, res))${semi}`,
  ];
  const at = lineEnd(f.text, last.getEnd());
  const lead = at === f.text.length && !f.text.endsWith('\n') ? nl : '';
  f.edit(at, at, `${lead}${nl}${lines.map((l) => `${indent}${l}`).join(nl)}${nl}`);
  f.rewrote(x.construction, `HTTP+SSE kept; a Streamable HTTP endpoint ${path} served by ${wrapName}.node(req, res) added after it`);
  f.need(SERVER_ENTRY, 'wrapLegacyServer');
}
