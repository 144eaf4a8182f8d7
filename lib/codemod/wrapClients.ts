/**
 * Wrap mode, clients: an SDK v1 client's transport handed to `wrapLegacyClient`, so the same
 * client also reaches modern-only servers (legacy ones are relayed as before). A stdio transport is
 * wrapped where it is connected; a Streamable HTTP transport becomes `wrapLegacyClient(url)` (with
 * its headers and fetch); an HTTP+SSE transport is marked (modern servers have no SSE endpoint).
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { propertyOf, propertyValue, type FileRewrite } from './fileRewrite.ts';
import { boundIdentifier, connectCallOf, importedClass } from './wiring.ts';

export const ROOT_ENTRY = 'mcp-dual-era';

const CLIENT_MODULE = /^@modelcontextprotocol\/sdk\/(?:dist\/(?:esm|cjs)\/)?client\/(stdio|streamableHttp|sse)(?:\.js)?$/;

/** Whether a module is one of the v1 SDK's client transport modules. */
export function isClientTransportModule(module: string): boolean {
  return CLIENT_MODULE.test(module);
}

/** Members of a transport that the wrap also has, so uses of them survive the rewrite. */
const BRIDGE_MEMBERS = new Set(['close', 'onclose', 'onerror']);

function insideWrap(node: TS.Node): boolean {
  for (let n: TS.Node | undefined = node.parent; n && !ts.isSourceFile(n); n = n.parent) {
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'wrapLegacyClient') return true;
    if (ts.isStatement(n)) return false;
  }
  return false;
}

/** Applies the client rules to a file. */
export function wrapClients(f: FileRewrite): void {
  const found: TS.NewExpression[] = [];
  const visit = (node: TS.Node): void => {
    if (ts.isNewExpression(node) && importedClass(f, node.expression, isClientTransportModule)) found.push(node);
    ts.forEachChild(node, visit);
  };
  visit(f.sf);
  for (const node of found) {
    if (insideWrap(node)) continue;
    const name = importedClass(f, node.expression, isClientTransportModule)!;
    if (name === 'SSEClientTransport') f.mark(node, 'sse-client');
    else if (name === 'StdioClientTransport') stdio(f, node);
    else if (name === 'StreamableHTTPClientTransport') http(f, node);
  }
}

/** The connect call of a transport and the other uses of its variable. */
function usesOf(
  f: FileRewrite,
  node: TS.NewExpression,
): { connect?: TS.CallExpression; others: TS.Identifier[]; wrapped: boolean; variable?: TS.Identifier } {
  const inline = connectCallOf(node);
  if (inline) return { connect: inline, others: [], wrapped: false };
  const bound = boundIdentifier(node);
  if (!bound) return { others: [], wrapped: false };
  const decl = f.declarationOf(bound);
  const variable = decl && ts.isVariableDeclaration(decl) && ts.isIdentifier(decl.name) ? decl.name : bound;
  const refs = f.referencesOf(variable).filter((r) => r !== variable && r !== bound);
  const connect = refs.map(connectCallOf).find((c) => c !== undefined);
  const wrapped = refs.some(insideWrap);
  return { ...(connect ? { connect } : {}), others: refs.filter((r) => !connect || r !== connect.arguments[0]), wrapped, variable };
}

function stdio(f: FileRewrite, node: TS.NewExpression): void {
  const { connect, wrapped: done } = usesOf(f, node);
  if (done) return;
  if (!connect) {
    f.mark(node, 'client-transport-used');
    return;
  }
  const arg = connect.arguments[0]!;
  // wrapLegacyClient takes the SDK's own transport as it is (no cast, in TypeScript or JavaScript).
  f.replace(arg, `wrapLegacyClient(${arg.getText(f.sf)})`);
  f.need(ROOT_ENTRY, 'wrapLegacyClient');
  f.rewrote(connect, 'client over stdio: client.connect(transport) → client.connect(wrapLegacyClient(transport))');
}

/** `wrapLegacyClient`'s target for `new StreamableHTTPClientTransport(url, options)`, if the options fit. */
function httpTarget(f: FileRewrite, node: TS.NewExpression): string | undefined {
  const [url, options] = node.arguments ?? [];
  if (!url) return undefined;
  if (!options) return url.getText(f.sf);
  if (!ts.isObjectLiteralExpression(options)) return undefined;
  const parts = [`url: ${url.getText(f.sf)}`];
  for (const p of options.properties) {
    const name = p.name && ts.isIdentifier(p.name) ? p.name.text : undefined;
    if (name === 'fetch' && (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p))) {
      parts.push(p.getText(f.sf));
      continue;
    }
    if (name !== 'requestInit' || !ts.isPropertyAssignment(p) || !ts.isObjectLiteralExpression(p.initializer)) return undefined;
    const init = p.initializer;
    if (init.properties.length !== 1 || !propertyOf(init, 'headers')) return undefined;
    const headers = propertyValue(init, 'headers');
    if (!headers || !ts.isObjectLiteralExpression(headers)) return undefined;
    parts.push(`headers: ${headers.getText(f.sf)}`);
  }
  return `{ ${parts.join(', ')} }`;
}

function http(f: FileRewrite, node: TS.NewExpression): void {
  const { connect, others, wrapped } = usesOf(f, node);
  if (wrapped) return;
  const target = httpTarget(f, node);
  if (!target) {
    f.mark(node, 'client-options');
    return;
  }
  const beyond = others.filter(
    (r) => !(ts.isPropertyAccessExpression(r.parent) && r.parent.expression === r && BRIDGE_MEMBERS.has(r.parent.name.text)),
  );
  if (!connect || beyond.length > 0) {
    f.mark(beyond[0] ?? node, 'client-transport-used');
    return;
  }
  f.replace(node, `wrapLegacyClient(${target})`);
  f.need(ROOT_ENTRY, 'wrapLegacyClient');
  f.rewrote(node, 'client over Streamable HTTP: new StreamableHTTPClientTransport(url) → wrapLegacyClient(url)');
}
