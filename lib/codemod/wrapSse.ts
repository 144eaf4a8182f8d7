/**
 * Wrap mode, servers, HTTP+SSE: the SSE routes (the stream and the route that posts messages to its
 * transports) stay as they are; a Streamable HTTP endpoint served by `wrapLegacyServer` is added
 * after them, on `/mcp` or, when that path is taken, `/mcp-dual-era`.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { indentAt, lineEnd, newlineOf } from './edits.ts';
import { enclosingFunction, statementOf, walk, within, type FileRewrite } from './fileRewrite.ts';
import { markerComment } from './markers.ts';
import { findRegistration, registrationOf } from './wiring.ts';
import { endpointMarkers, SERVER_ENTRY, serverOf, upstreamOf, type FoundTransport } from './wrapUpstream.ts';

/** HTTP+SSE: the SSE routes stay; a Streamable HTTP endpoint served by the wrap is added after them. */
export function wrapSse(f: FileRewrite, x: FoundTransport, served: Set<TS.CallExpression>): void {
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
