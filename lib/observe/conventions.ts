/**
 * The names the telemetry uses. Span and metric attributes follow the OpenTelemetry semantic
 * conventions for MCP (`mcp.*`, with `gen_ai.*`, `jsonrpc.*`, `rpc.*`, `error.type` and
 * `network.transport` as those conventions use them); what they have no name for is ours, under
 * `mcp_dual_era.*`. spec/observe/conventions.spec.ts checks the borrowed names against the
 * conventions package.
 */

/** Span attribute keys. */
export const Attr = {
  /** The request's method (`tools/call`, `server/discover`…). */
  methodName: 'mcp.method.name',
  /** The revision the caller spoke (`2026-07-28`, or a legacy session's negotiated one). */
  protocolVersion: 'mcp.protocol.version',
  /** The resource of a `resources/read`. */
  resourceUri: 'mcp.resource.uri',
  /** The tool of a `tools/call`. */
  toolName: 'gen_ai.tool.name',
  /** The prompt of a `prompts/get`. */
  promptName: 'gen_ai.prompt.name',
  /** `execute_tool` on a `tools/call`. */
  operationName: 'gen_ai.operation.name',
  /** The JSON-RPC id of the request (as a string). */
  requestId: 'jsonrpc.request.id',
  /** The JSON-RPC error code of the answer (as a string), when it is an error. */
  statusCode: 'rpc.response.status_code',
  /** The JSON-RPC error code again, as the conventions record a failed operation. */
  errorType: 'error.type',
  /** `tcp` over HTTP, `pipe` over stdio. */
  networkTransport: 'network.transport',
  /** The era the caller speaks: `modern` or `legacy`. */
  clientEra: 'mcp_dual_era.client.era',
  /** The era of the server behind us: `modern` or `legacy`. */
  serverEra: 'mcp_dual_era.server.era',
  /** How the request got its upstream session: `reused` (one was free), `opened` (a new one), `waited` (for one to be free). */
  upstreamSession: 'mcp_dual_era.upstream.session',
  /** Which round of an MRTR call this request is: 1 for the first call, n + 1 for the retry that answers round n. */
  round: 'mcp_dual_era.mrtr.round',
  /** `input_required` when the answer asks the caller for input, `complete` otherwise. */
  resultType: 'mcp_dual_era.result_type',
  /** The replica of the fleet the request was forwarded to (it continues a call parked there). */
  forwardedTo: 'mcp_dual_era.forwarded_to',
} as const;

/** The conventions' value of `gen_ai.operation.name` for a tool call. */
export const EXECUTE_TOOL = 'execute_tool';

/** The conventions' name of the server-side duration histogram, as a Prometheus name. */
export const SERVER_DURATION_METRIC = 'mcp_server_operation_duration_seconds';
