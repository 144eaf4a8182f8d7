/**
 * StdioChildTransport against a real child process whose first answer is one line past the bound
 * (`fixtures/servers/hugeLine.mjs`, id last as the v1 SDK writes it): that request gets its one
 * -32603 naming the bound at once, the line is reported through `onerror`, and the next request is
 * answered normally on the same pipe.
 */
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdapterError } from '../../lib/core/errors.ts';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { StdioChildTransport } from '../../lib/transport/stdioChild.ts';
import { waitFor } from '../helpers/everything.ts';

const HUGE_LINE = resolve(import.meta.dirname, '../../fixtures/servers/hugeLine.mjs');
const MiB = 1024 * 1024;

const s = suite('StdioChildTransport');

s('should answer a request whose answer is a line past maxMessageBytes with -32603 at once, and go on', async () => {
  const t = new StdioChildTransport({
    command: process.execPath,
    args: [HUGE_LINE, String(5 * MiB)],
    stderr: 'ignore',
    shutdownGraceMs: 200,
    maxMessageBytes: MiB,
  });
  const got: JsonRpcMessage[] = [];
  const errors: Error[] = [];
  t.onmessage = (m) => void got.push(m);
  t.onerror = (e) => void errors.push(e);
  // Short, so that a failure does not print megabytes.
  const answersTo = (id: number) =>
    got.filter((m) => 'id' in m && m.id === id && !('method' in m)).map((m) => JSON.stringify(m).slice(0, 300));
  try {
    await t.start();
    const sent = Date.now();
    await t.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'huge', arguments: {} } });
    assert.ok(await waitFor(() => answersTo(7).length > 0, 5000), 'the oversized answer is answered');
    assert.ok(Date.now() - sent < 3000, 'promptly, not by a timeout');
    assert.equal(answersTo(7), [
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32603, message: `Internal error: the server's answer is larger than ${MiB} bytes` },
      }),
    ]);
    assert.is(errors.length, 1);
    assert.ok(errors[0] instanceof AdapterError && errors[0].code === 'protocol');
    assert.match(errors[0]!.message, `larger than ${MiB} bytes`);
    await t.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'small', arguments: {} } });
    assert.ok(await waitFor(() => answersTo(8).length > 0, 5000));
    assert.equal(answersTo(8), [JSON.stringify({ result: { content: [{ type: 'text', text: 'small' }] }, jsonrpc: '2.0', id: 8 })]);
    assert.is(answersTo(7).length, 1, 'one answer to the first request');
  } finally {
    await t.close();
  }
});

s.run();
