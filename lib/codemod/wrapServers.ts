/**
 * Wrap mode, servers: the wiring of an SDK v1 server onto `wrapLegacyServer`, handlers untouched.
 * `server.connect(new StdioServerTransport())` becomes `serveStdio(wrapLegacyServer(…))`; routes
 * and Node listeners that serve a `StreamableHTTPServerTransport` (stateless or with sessions) or
 * a `WebStandardStreamableHTTPServerTransport` become one endpoint served by the wrap; an
 * HTTP+SSE setup keeps its routes and gains a Streamable HTTP endpoint beside them. This file finds
 * the transports and their `connect` calls and rewrites stdio; the HTTP rewrites are
 * wrapStreamable.ts and wrapSse.ts, and what the wrap takes over from a transport is wrapUpstream.ts.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { walk, within, type FileRewrite } from './fileRewrite.ts';
import { boundIdentifier, connectCallOf, serverTransportKind, type ServerTransportKind } from './wiring.ts';
import { wrapSse } from './wrapSse.ts';
import { wrapStreamable } from './wrapStreamable.ts';
import { SERVER_ENTRY, serverOf, type FoundTransport } from './wrapUpstream.ts';

/** Applies the server wiring rules to a file. */
export function wrapServers(f: FileRewrite): void {
  const found: FoundTransport[] = [];
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
    else if (x.kind !== 'sse') wrapStreamable(f, x, served);
    else if (!hasStreamable) wrapSse(f, x, served);
  }
}

/** The transport's variable and its `connect` call. */
function locate(f: FileRewrite, node: TS.NewExpression, kind: ServerTransportKind): FoundTransport | undefined {
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

function stdio(f: FileRewrite, x: FoundTransport): void {
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
