import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Keyring } from '../../../lib/state/keyring.ts';
import { MrtrBroker } from '../../../lib/wrap/mrtr/suspend.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { modernMeta } from '../../helpers/messages.ts';

/** A legacy server whose tool asks twice (name, then colour) and counts how often it starts. */
function twoQuestionServer(counter: { starts: number; questions: string[] }) {
  return () => {
    const server = new McpServer({ name: 'two-questions', version: '1.0.0' });
    server.registerTool('favourite', { description: 'Asks a name and a colour' }, async () => {
      counter.starts++;
      const ask = async (field: string) => {
        counter.questions.push(field);
        const r = await server.server.elicitInput({
          mode: 'form',
          message: `Your ${field}?`,
          requestedSchema: { type: 'object', properties: { [field]: { type: 'string' } }, required: [field] },
        });
        return r.action === 'accept' ? String(r.content?.[field]) : '?';
      };
      const name = await ask('name');
      const colour = await ask('colour');
      return { content: [{ type: 'text', text: `${name} likes ${colour}` }] };
    });
    return server;
  };
}

const caps = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
function call(id: number, extra: Record<string, unknown> = {}) {
  return {
    jsonrpc: '2.0' as const,
    id,
    method: 'tools/call',
    params: { name: 'favourite', arguments: {}, ...extra, _meta: modernMeta(caps) },
  };
}
const ctx = (principal = 'alice') => ({ principal, signal: new AbortController().signal, notify: () => {} });

let wraps: LegacyServerWrap[] = [];
const r = suite('MrtrBroker in replay mode');
r.after.each(async () => {
  await Promise.all(wraps.map((w) => w.close()));
  wraps = [];
});

r('should complete two rounds statelessly, re-running the call and answering earlier pushes from the state', async () => {
  const counter = { starts: 0, questions: [] as string[] };
  const broker = new MrtrBroker({ replay: ['favourite'] });
  const wrap = wrapLegacyServer({ upstream: twoQuestionServer(counter), mrtr: broker });
  wraps.push(wrap);
  const first = (await wrap.serveModern(call(1), ctx()))!.message as any;
  assert.equal(Object.keys(first.result.inputRequests), ['elicitation-1']);
  assert.is(broker.parked, 0, 'nothing is parked in replay mode');
  const second = (await wrap.serveModern(
    call(2, {
      inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } },
      requestState: first.result.requestState,
    }),
    ctx(),
  ))!.message as any;
  assert.equal(Object.keys(second.result.inputRequests), ['elicitation-2']);
  const third = (await wrap.serveModern(
    call(3, {
      inputResponses: { 'elicitation-2': { action: 'accept', content: { colour: 'green' } } },
      requestState: second.result.requestState,
    }),
    ctx(),
  ))!.message as any;
  assert.equal(third.result.content, [{ type: 'text', text: 'Ada likes green' }]);
  assert.is(counter.starts, 3, 'the call ran once per round');
  assert.equal(counter.questions, ['name', 'name', 'colour', 'name', 'colour']);
});

r('should let a retry land on another process that holds the same key', async () => {
  const counter = { starts: 0, questions: [] as string[] };
  const key = Keyring.generate('shared');
  const a = wrapLegacyServer({ upstream: twoQuestionServer(counter), mrtr: new MrtrBroker({ replay: true, keyring: new Keyring([key]) }) });
  const b = wrapLegacyServer({ upstream: twoQuestionServer(counter), mrtr: new MrtrBroker({ replay: true, keyring: new Keyring([key]) }) });
  wraps.push(a, b);
  const first = (await a.serveModern(call(1), ctx()))!.message as any;
  const second = (await b.serveModern(
    call(2, {
      inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Bo' } } },
      requestState: first.result.requestState,
    }),
    ctx(),
  ))!.message as any;
  assert.equal(Object.keys(second.result.inputRequests), ['elicitation-2']);
});

r('should refuse a state for another caller, another request, or altered bytes', async () => {
  const wrap = wrapLegacyServer({ upstream: twoQuestionServer({ starts: 0, questions: [] }), mrtr: new MrtrBroker({ replay: true }) });
  wraps.push(wrap);
  const first = (await wrap.serveModern(call(1), ctx()))!.message as any;
  const state: string = first.result.requestState;
  const flipped = state.slice(0, -3) + (state.at(-3) === 'A' ? 'B' : 'A') + state.slice(-2);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ requestState: state }, 'bob'],
    [{ requestState: flipped }, 'alice'],
    [{ requestState: state, arguments: { other: true } }, 'alice'],
  ];
  for (const [extra, principal] of cases) {
    const answer = (await wrap.serveModern(call(5, extra), ctx(principal)))!.message as any;
    assert.is(answer.error?.code, -32602, JSON.stringify(extra).slice(0, 80));
  }
});

r('should end the call with a clear error when the server asks something else on replay', async () => {
  let variant = 'name';
  const factory = () => {
    const server = new McpServer({ name: 'fickle', version: '1.0.0' });
    server.registerTool('favourite', { description: 'Asks a different question each run' }, async () => {
      const field = variant;
      await server.server.elicitInput({
        mode: 'form',
        message: `Your ${field}?`,
        requestedSchema: { type: 'object', properties: { [field]: { type: 'string' } } },
      });
      await server.server.elicitInput({
        mode: 'form',
        message: 'And then?',
        requestedSchema: { type: 'object', properties: { x: { type: 'string' } } },
      });
      return { content: [{ type: 'text', text: 'done' }] };
    });
    return server;
  };
  const wrap = wrapLegacyServer({ upstream: factory, mrtr: new MrtrBroker({ replay: true }) });
  wraps.push(wrap);
  const first = (await wrap.serveModern(call(1), ctx()))!.message as any;
  const second = (await wrap.serveModern(
    call(2, { inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'x' } } }, requestState: first.result.requestState }),
    ctx(),
  ))!.message as any;
  variant = 'age';
  const third = (await wrap.serveModern(
    call(3, { inputResponses: { 'elicitation-2': { action: 'accept', content: { x: 'y' } } }, requestState: second.result.requestState }),
    ctx(),
  ))!.message as any;
  assert.is(third.error?.code, -32603);
  assert.match(third.error.message, /cannot be replayed/);
});

r.run();
