/**
 * What the codemod could not rewrite safely, by code: the comment it leaves above the statement
 * (`// @mcp-dual-era <code>: <message>`, easy to grep) and the line in its report. Markers are
 * added once: a statement that already carries the marker is not marked again.
 */

/** The tag every marker comment starts with. */
export const MARKER_TAG = '@mcp-dual-era';

/** What each marker comment says, by its code: the text written after `// @mcp-dual-era <code>:`. */
export const MARKERS = {
  // wrap mode
  'handler-not-wiring':
    'this handler does more than serve an MCP transport, so it was left as it is; serve the endpoint with wrapLegacyServer(...).node(req, res) (or .fetch(request)) in place of the transport',
  'http-not-recognized':
    'an MCP server transport wired in a way the codemod does not recognise; serve the endpoint with wrapLegacyServer(...).node(req, res), .fetch(request) or serveStdio(...) by hand',
  'server-from-request':
    'the server is built from request data, but mcp-dual-era needs a factory it can call for each upstream session: upstream: () => createServer()',
  'server-built-here':
    'the server is built and configured inside the handler; move that into a function (createServer()) so the wrap can call it for each upstream session',
  'single-instance':
    'one server instance serves one session at a time; give wrapLegacyServer a factory (upstream: () => createServer()) to serve several clients at once',
  'transport-kept': 'this transport is no longer connected to the server (mcp-dual-era serves it now); move what it did here onto the wrap',
  'session-cleanup':
    "the original wiring ran this when a session closed, the wrap's sessions do not; call it from the server's onclose inside the factory",
  'event-store': 'resumability (an event store, Last-Event-ID replay) has no 2026-07-28 counterpart and is not used by mcp-dual-era',
  'origin-policy':
    'mcp-dual-era accepts only loopback Host and Origin headers by default; list public host names in http.allowedHosts and browser origins in http.allowedOrigins',
  'sse-endpoint':
    'an HTTP+SSE server without a route the codemod recognises; add a Streamable HTTP endpoint served by wrapLegacyServer(...).node(req, res) beside it',
  'sse-client':
    "an HTTP+SSE endpoint: modern servers speak Streamable HTTP only; connect with wrapLegacyClient(<the server's Streamable HTTP URL>)",
  'client-transport-used':
    'the transport is used beyond connect(), so it was left as it is; connect with client.connect(wrapLegacyClient(...)) and move those uses onto the wrap',
  'client-options': 'transport options wrapLegacyClient does not take (it takes url, headers and fetch); the transport was left as it is',
  // native mode
  'needs-v2':
    'native mode writes the modern idiom of the v2 SDK (@modelcontextprotocol/server); move this file to v2 first (npx @modelcontextprotocol/codemod v1-to-v2), or use --mode wrap',
  'side-effects-before-push':
    'the handler does work before this push that would run again on re-entry: return inputRequired(...) before it, or keep that work idempotent, then read the answer from ctx.mcpReq.inputResponses',
  'sequential-pushes':
    'several pushes in one handler: return inputRequired(...) for each round and carry what earlier rounds learned in requestState (ctx.mcpReq.requestState())',
  'push-conditional':
    'a push inside a condition, loop, callback or expression the codemod cannot split; return inputRequired(...) there and read the answer from ctx.mcpReq.inputResponses on re-entry',
  'push-params':
    "the push's parameters are not a literal the codemod can move (URL or form mode unknown, or built in the same statement); build inputRequired.elicit(...) / elicitUrl(...) by hand",
  'push-outside-request':
    'a server-initiated request outside any client request: 2026-07-28 has no channel for it; ask for it from the tool that needs it (return inputRequired(...))',
  'roots-in-oninitialized':
    'roots requested at initialize: 2026-07-28 has no initialize and no server-initiated requests; ask for them in the tool that needs them (inputRequired.listRoots())',
  'tools-by-capabilities':
    'tools registered according to the capabilities declared at initialize: in 2026-07-28 capabilities come with each request; register every tool and check ctx.mcpReq.envelope in the handler',
  oninitialized: 'oninitialized runs only after a legacy initialize; 2026-07-28 requests never trigger it',
  'session-state':
    'session-keyed state: 2026-07-28 has no sessions; carry per-call state in requestState (inputRequired({ requestState }), ctx.mcpReq.requestState())',
  ping: 'ping is gone in 2026-07-28, in both directions: the transport tells whether the peer is there',
  'set-logging-level':
    "logging/setLevel is gone in 2026-07-28: the client sends a logLevel in each request's _meta, and ctx.mcpReq.log() filters by it",
  'subscribe-resource':
    'resources/subscribe is gone in 2026-07-28: clients open subscriptions/listen (client.listen({ resourceSubscriptions })), which the v2 serving entries answer; servers publish changes with sendResourceUpdated()',
  'log-outside-request':
    'a log outside any request: 2026-07-28 delivers logs only on the request they belong to; log from the handler (ctx.mcpReq.log) or to stderr',
  'serve-2026':
    'this connection serves the 2025 protocol only; serve 2026-07-28 too with serveStdio(() => createServer()) or createMcpHandler(() => createServer())',
  'handler-shape': "the handler's context parameter cannot be found or added here; rewrite its pushes by hand",
} as const;

/** The code of a marker comment (`server-from-request`, `transport-kept`, …). */
export type MarkerCode = keyof typeof MARKERS;

/** The comment line of a marker (without indentation or newline). */
export function markerComment(code: MarkerCode, detail?: string): string {
  return `// ${MARKER_TAG} ${code}: ${MARKERS[code]}${detail ? ` (${detail})` : ''}`;
}

/** Whether comment text already carries a marker with this code. */
export function carriesMarker(comments: readonly string[], code: MarkerCode): boolean {
  const needle = `${MARKER_TAG} ${code}:`;
  return comments.some((c) => c.includes(needle));
}
