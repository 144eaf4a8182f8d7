/**
 * Ctrl-C on `serve` while a call is in progress: the call's client is answered that the server is
 * shutting down (not cut off), and the log says what shutting down ended. The built command in
 * front of server-everything, a raw modern call of its long-running tool.
 */
import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { builtCli } from '../helpers/built.ts';
import { EVERYTHING, ROOT } from '../helpers/everything.ts';
import { servingUrl } from '../helpers/servingUrl.ts';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'spec', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

const s = suite('serve stopped with a call in progress');

s('should answer the call that the server is shutting down, and say so in the log', async () => {
  const child = spawn(process.execPath, [builtCli(), 'serve', '--port', '0', '--', process.execPath, EVERYTHING, 'stdio'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const serving = servingUrl(child);
  try {
    const url = await serving.url;
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'trigger-long-running-operation',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 30 }, _meta: { ...META, progressToken: 'p' } },
      }),
    });
    // Under way once the server reports its first step.
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let said = '';
    while (!said.includes('notifications/progress')) {
      const { done, value } = await reader.read();
      if (done) break;
      said += decoder.decode(value, { stream: true });
    }
    assert.match(said, 'notifications/progress', 'the call is under way');
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGINT');
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      said += decoder.decode(value, { stream: true });
    }
    assert.match(said, '"id":5');
    assert.match(said, /"error":\{"code":-32603,"message":"Internal error: the upstream server was shut down/);
    assert.is(await exited, 0);
    assert.match(
      serving.log(),
      'mcp-dual-era: shutting down: ending 1 call(s) in progress, each answered that the server is shutting down',
    );
  } finally {
    child.kill('SIGKILL');
  }
});

s.run();
