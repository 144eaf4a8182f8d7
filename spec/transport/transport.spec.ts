/**
 * `SdkTransport`, the type of what wrapLegacyClient and wrapModernClient return, fits the SDKs'
 * `Transport`: each is handed to `connect()` of the v1 SDK's `Client` (@modelcontextprotocol/sdk)
 * and of the v2 client (@modelcontextprotocol/client) with no cast, type-checked with tsc with
 * `exactOptionalPropertyTypes` on and off. Types only: nothing is connected here.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { typecheck } from '../helpers/typecheck.ts';

const CLIENTS = { v1: '@modelcontextprotocol/sdk/client/index.js', v2: '@modelcontextprotocol/client' } as const;

const WRAPS = {
  wrapLegacyClient: `import { wrapLegacyClient } from 'mcp-dual-era';
import { StdioChildTransport } from 'mcp-dual-era/server';
await client.connect(wrapLegacyClient('https://mcp.example.com/mcp'));
await client.connect(wrapLegacyClient({ url: new URL('https://mcp.example.com/mcp'), headers: { authorization: 'Bearer t' } }));
await client.connect(wrapLegacyClient(new StdioChildTransport({ command: 'node', args: ['server.js'] })));
const transport = wrapLegacyClient('https://mcp.example.com/mcp');
transport.onmessage = (message) => void message.jsonrpc;
await client.connect(transport);`,
  wrapModernClient: `import { wrapModernClient } from 'mcp-dual-era/client';
await client.connect(wrapModernClient({ command: 'node', args: ['server.js'] }));
await client.connect(wrapModernClient({ url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer t' } }, { timeoutMs: 1000 }));
const transport = wrapModernClient({ command: 'node' });
transport.events.on('verdict', () => {});
await client.connect(transport);`,
};

/** One file per SDK client and wrap. */
const files = Object.fromEntries(
  Object.entries(CLIENTS).flatMap(([sdk, from]) =>
    Object.entries(WRAPS).map(([wrap, code]) => [
      `${wrap}-${sdk}.ts`,
      `import { Client } from '${from}';\nconst client = new Client({ name: 'host', version: '1.0.0' });\n${code}\n`,
    ]),
  ),
);

const t = suite('SdkTransport');

for (const exact of [true, false]) {
  t(
    `should let both wraps be handed to the v1 and the v2 SDK Client with no cast (exactOptionalPropertyTypes ${exact ? 'on' : 'off'})`,
    () => {
      assert.equal(typecheck(files, exact), []);
    },
  );
}

t.run();
