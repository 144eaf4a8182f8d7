/**
 * LearnedTools: what a bridged session knows of the upstream's tool input schemas, learnt from
 * `tools/list` answers, forgotten on a change, and read afresh (every page, stamped with the
 * session's `_meta`) after a header mismatch; false when that reading fails.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LATEST_MODERN_VERSION } from '../../../lib/core/era.ts';
import type { JsonRpcRequest, JsonRpcResponse } from '../../../lib/core/jsonrpc.ts';
import { sessionFromInitialize } from '../../../lib/core/translate/envelope.ts';
import type { ModernUpstream } from '../../../lib/transport/modernUpstream.ts';
import { LearnedTools } from '../../../lib/wrap/legacyClient/learnedTools.ts';

const SESSION = sessionFromInitialize({ protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '1' } });

/** An upstream that answers `tools/list` from `answer`, recording the requests. */
function upstream(answer: (request: JsonRpcRequest) => JsonRpcResponse | Promise<JsonRpcResponse>) {
  const requests: JsonRpcRequest[] = [];
  const up = {
    kind: 'http',
    request: async (request: JsonRpcRequest) => {
      requests.push(request);
      return answer(request);
    },
  } as unknown as ModernUpstream;
  return { up, requests };
}

const s = suite('LearnedTools');

s('should learn schemas from a tools/list result and forget them on a change', () => {
  const tools = new LearnedTools();
  tools.learn({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }, { inputSchema: {} }, 'junk'] });
  assert.equal(tools.schemaOf('echo'), { type: 'object' });
  tools.forget();
  assert.is(tools.schemaOf('echo'), undefined);
});

s('should read every page afresh, stamped for the session', async () => {
  const { up, requests } = upstream((r) => {
    const cursor = (r.params as { cursor?: string } | undefined)?.cursor;
    return cursor === undefined
      ? { jsonrpc: '2.0', id: r.id, result: { tools: [{ name: 'a', inputSchema: { title: 'A' } }], nextCursor: 'more' } }
      : { jsonrpc: '2.0', id: r.id, result: { tools: [{ name: 'b', inputSchema: { title: 'B' } }] } };
  });
  const tools = new LearnedTools();
  assert.ok(await tools.relearn(up, SESSION, LATEST_MODERN_VERSION, new AbortController().signal));
  assert.equal(
    requests.map((r) => r.id),
    ['tools-0', 'tools-1'],
  );
  assert.ok(requests.every((r) => r.method === 'tools/list' && typeof (r.params as { _meta?: unknown })._meta === 'object'));
  assert.equal([tools.schemaOf('a'), tools.schemaOf('b')], [{ title: 'A' }, { title: 'B' }]);
});

s('should say false when a page is an error, when the upstream fails, or before initialize', async () => {
  const tools = new LearnedTools();
  const signal = new AbortController().signal;
  const refusing = upstream((r) => ({ jsonrpc: '2.0', id: r.id, error: { code: -32603, message: 'no' } }));
  assert.is(await tools.relearn(refusing.up, SESSION, LATEST_MODERN_VERSION, signal), false);
  const broken = upstream(() => Promise.reject(new Error('down')));
  assert.is(await tools.relearn(broken.up, SESSION, LATEST_MODERN_VERSION, signal), false);
  const unused = upstream(() => Promise.reject(new Error('never asked')));
  assert.is(await tools.relearn(unused.up, undefined, LATEST_MODERN_VERSION, signal), false);
  assert.is(unused.requests.length, 0);
});

s.run();
