/**
 * The translator on its own, in a script to read top to bottom: a legacy client's session with a
 * legacy server that pushes an elicitation in the middle of a tool call, translated message by
 * message into what a modern (2026-07-28) client sees through mcp-dual-era — and the modern
 * client's retry back into what the legacy server receives. Pure functions, no I/O of their own.
 * Run it with `npx tsx examples/translate-session.ts` (`npm start` serves a live example instead).
 */
import {
  initializeResultToDiscover,
  initializeToDiscoverRequest,
  inputKeyOf,
  inputRequiredResult,
  inputResponseToResult,
  requestToLegacy,
  requestToModern,
  resultToModern,
  retryRequest,
  sessionFromInitialize,
  type JsonRpcRequest,
  type Outcome,
} from '../lib/core/index.ts';

const colour = process.stdout.isTTY && !process.env['NO_COLOR'];
const paint = (code: number, text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
const SERVER = { name: 'weather-server', version: '1.4.0' };

function must<T>(o: Outcome<T, unknown>): T {
  if (!o.ok) throw new Error(JSON.stringify(o.error));
  return o.value;
}

function show(title: string, legacy: unknown, modern: unknown): void {
  process.stdout.write(
    `\n${paint(1, title)}\n  ${paint(33, 'legacy')}  ${JSON.stringify(legacy)}\n  ${paint(36, 'modern')}  ${JSON.stringify(modern)}\n`,
  );
}

const initialize: JsonRpcRequest = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: { elicitation: { form: {} }, roots: { listChanged: true } },
    clientInfo: { name: 'desk-host', version: '3.2.0' },
  },
};
show('initialize becomes server/discover', initialize, must(initializeToDiscoverRequest(initialize)));

const initResult = {
  protocolVersion: '2025-11-25',
  capabilities: { tools: { listChanged: true }, logging: {} },
  serverInfo: SERVER,
  instructions: 'Ask for a city.',
};
show('the InitializeResult becomes a DiscoverResult', initResult, must(initializeResultToDiscover(initResult)));

const session = sessionFromInitialize(initialize.params as never, 'info');
const call: JsonRpcRequest = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'forecast', arguments: { days: 3 } } };
const modernCall = must(requestToModern(call, session));
show('every request carries the session in _meta', call, modernCall);

const push: JsonRpcRequest = {
  jsonrpc: '2.0',
  id: 'srv-1',
  method: 'elicitation/create',
  params: { message: 'Which city?', requestedSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const round = must(
  inputRequiredResult([{ key: inputKeyOf(push, 1), request: push }], { requestState: '<sealed by mcp-dual-era>', serverInfo: SERVER }),
);
show('the server pushes elicitation/create: the modern client gets input_required', push, { jsonrpc: '2.0', id: 4, result: round });

const retry = retryRequest(modernCall, {
  id: 5,
  inputResponses: { 'elicitation-1': { action: 'accept', content: { city: 'Lisbon' } } },
  requestState: '<sealed by mcp-dual-era>',
});
const upstream = must(requestToLegacy(retry));
const answer = must(
  inputResponseToResult('elicitation/create', 'elicitation-1', upstream.envelope.retry?.inputResponses?.['elicitation-1']),
);
show('the modern retry answers the parked push upstream', { jsonrpc: '2.0', id: 'srv-1', result: answer }, retry);

const final = { content: [{ type: 'text', text: 'Lisbon: sun, 24°C, 25°C, 22°C' }] };
show(
  'the final result',
  { jsonrpc: '2.0', id: 4, result: final },
  { jsonrpc: '2.0', id: 5, result: must(resultToModern('tools/call', final, { serverInfo: SERVER })).result },
);
process.stdout.write('\n');
