/**
 * A GET or DELETE naming a legacy session this endpoint does not hold is answered 404 `Session not
 * found` (its client initializes again, as the spec says), whether the endpoint holds other
 * sessions or none: never 405, which would tell the client the endpoint has no stream, and tell an
 * outsider whether any session is held.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';

const unknown = suite('requests naming a legacy session the endpoint does not hold');

unknown('should answer GET and DELETE 404 Session not found, with or without other sessions held', async () => {
  const wrap = wrapLegacyServer({ upstream: () => createPushServer() });
  const http = await serveNodeHttp(wrap, { port: 0 });
  const url = `${http.origin}/mcp`;
  const ask = async (method: 'GET' | 'DELETE') => {
    const r = await fetch(url, {
      method,
      headers: { accept: 'text/event-stream', 'mcp-session-id': randomUUID(), 'mcp-protocol-version': '2025-11-25' },
    });
    return { status: r.status, body: await r.text() };
  };
  const client = new Client({ name: 'holder', version: '1.0.0' });
  try {
    for (const held of [false, true]) {
      if (held) await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      assert.is(wrap.legacySessions, held ? 1 : 0);
      for (const method of ['GET', 'DELETE'] as const) {
        const { status, body } = await ask(method);
        assert.is(status, 404, `${method} with ${held ? 'a session' : 'no session'} held: ${body}`);
        assert.match(body, '"code":-32001');
      }
    }
  } finally {
    await client.close();
    await http.close();
    await wrap.close();
  }
});

unknown.run();
