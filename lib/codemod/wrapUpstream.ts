/**
 * Wrap mode, servers: what the wrap takes over from a transport that was connected to an SDK v1
 * server. The transport found and its `connect` call, the server it carried made into the wrap's
 * upstream (a factory when one can be made without the request, the instance otherwise), and the
 * markers of what the replaced wiring did that the wrap does not. Where the wrap is then placed is
 * wrapServers.ts (stdio), wrapStreamable.ts and wrapSse.ts.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { propertyOf, walk, within, type FileRewrite } from './fileRewrite.ts';
import type { MarkerCode } from './markers.ts';
import type { ServerTransportKind } from './wiring.ts';

/** The module the wrap is imported from. */
export const SERVER_ENTRY = 'mcp-dual-era/server';

/** A server transport's construction and the `connect` call that gave it its server. */
export interface FoundTransport {
  readonly kind: ServerTransportKind;
  readonly construction: TS.NewExpression;
  /** The variable holding the transport (absent when built inline in `connect(…)`). */
  readonly transport?: TS.Identifier;
  readonly connect: TS.CallExpression;
}

/** What the wrap is given as its upstream, and what came with it. */
export interface Upstream {
  /** `() => createServer()`, or the instance's own text. */
  readonly text: string;
  /** One instance for every session (no factory could be made). */
  readonly single: boolean;
  /** Names destructured beside the server (`cleanup` in `const { server, cleanup } = createServer()`). */
  readonly companions: readonly TS.Identifier[];
  /** Declarations the factory reaches (they are wiring, not the user's own logic). */
  readonly reaches: ReadonlySet<TS.Node>;
}

/** The server a transport was connected to. */
export function serverOf(x: FoundTransport): TS.Expression {
  return (x.connect.expression as TS.PropertyAccessExpression).expression;
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
export function upstreamOf(f: FileRewrite, server: TS.Expression, handler: TS.FunctionLikeDeclaration): Upstream | { problem: MarkerCode } {
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

/** The options object literal of the transport construction, if written inline. */
function optionsOf(x: FoundTransport): TS.ObjectLiteralExpression | undefined {
  const arg = x.kind === 'sse' ? x.construction.arguments?.[2] : x.construction.arguments?.[0];
  return arg && ts.isObjectLiteralExpression(arg) ? arg : undefined;
}

/** The marker comment lines of what the replaced wiring did that the wrap does not. */
export function endpointMarkers(
  f: FileRewrite,
  x: FoundTransport,
  upstream: Upstream,
  handler: TS.FunctionLikeDeclaration,
): Array<[MarkerCode, string?]> {
  const out: Array<[MarkerCode, string?]> = [];
  const options = optionsOf(x);
  if (upstream.single) out.push(['single-instance']);
  const used = upstream.companions.filter((c) => f.referencesOf(c).some((r) => r !== c && within(r, handler)));
  if (used.length > 0) out.push(['session-cleanup', used.map((c) => c.text).join(', ')]);
  if (options && propertyOf(options, 'eventStore')) out.push(['event-store']);
  if (options && (propertyOf(options, 'allowedHosts') || propertyOf(options, 'allowedOrigins'))) out.push(['origin-policy']);
  return out;
}
