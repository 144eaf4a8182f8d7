/**
 * The attribute and metric names borrowed from the OpenTelemetry semantic conventions are theirs,
 * letter for letter (read from the conventions package), and ours stay under `mcp_dual_era.`.
 */
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Attr, EXECUTE_TOOL, SERVER_DURATION_METRIC } from '../../lib/observe/conventions.ts';

const c = suite('the names of the telemetry');

c("should use the conventions' own names for what they name", () => {
  assert.is(Attr.methodName, semconv.ATTR_MCP_METHOD_NAME);
  assert.is(Attr.protocolVersion, semconv.ATTR_MCP_PROTOCOL_VERSION);
  assert.is(Attr.resourceUri, semconv.ATTR_MCP_RESOURCE_URI);
  assert.is(Attr.toolName, semconv.ATTR_GEN_AI_TOOL_NAME);
  assert.is(Attr.promptName, semconv.ATTR_GEN_AI_PROMPT_NAME);
  assert.is(Attr.operationName, semconv.ATTR_GEN_AI_OPERATION_NAME);
  assert.is(EXECUTE_TOOL, semconv.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL);
  assert.is(Attr.requestId, semconv.ATTR_JSONRPC_REQUEST_ID);
  assert.is(Attr.statusCode, semconv.ATTR_RPC_RESPONSE_STATUS_CODE);
  assert.is(Attr.errorType, semconv.ATTR_ERROR_TYPE);
  assert.is(Attr.networkTransport, semconv.ATTR_NETWORK_TRANSPORT);
  // The histogram's name, as Prometheus spells `mcp.server.operation.duration` in seconds.
  assert.is(SERVER_DURATION_METRIC, `${semconv.METRIC_MCP_SERVER_OPERATION_DURATION.replaceAll('.', '_')}_seconds`);
});

c('should keep every name of ours under mcp_dual_era.', () => {
  const borrowed = new Set<unknown>(Object.values(semconv));
  for (const name of Object.values(Attr)) assert.ok(borrowed.has(name) || name.startsWith('mcp_dual_era.'), name);
});

c.run();
