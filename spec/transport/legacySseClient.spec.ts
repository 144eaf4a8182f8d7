/**
 * LegacySseClient's `endpoint` event against a scripted HTTP+SSE server (a fetch that answers the
 * GET with a stream the test writes): a relative endpoint is resolved against the SSE URL and
 * POSTed to, another origin or a non-URL is refused, a missing event times out, a GET that is not
 * an SSE stream is refused with what the server said, and the end of the stream ends the session.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AdapterError } from '../../lib/core/errors.ts';
import type { JsonRpcMessage } from '../../lib/core/jsonrpc.ts';
import { LegacyHttpClientLink, type LinkOwner } from '../../lib/transport/legacyHttpClientLink.ts';
import { LegacySseClient } from '../../lib/transport/legacySseClient.ts';

const SSE_URL = 'http://127.0.0.1:9/mcp/sse';

/** A GET stream the test writes SSE into, and the fetches it saw. */
function scripted(getAnswer?: () => Response) {
  let writer!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (writer = c) });
  const fetches: Array<{ url: string; method: string; body: string | undefined }> = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    fetches.push({ url, method: init?.method ?? 'GET', body: typeof init?.body === 'string' ? init.body : undefined });
    if (init?.method === 'POST') return new Response(null, { status: 202 });
    return getAnswer?.() ?? new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }) as typeof globalThis.fetch;
  return {
    fetch,
    fetches,
    write: (text: string) => writer.enqueue(new TextEncoder().encode(text)),
    end: () => writer.close(),
  };
}

/** What the link's transport saw. */
function owner() {
  const seen = { messages: [] as JsonRpcMessage[], errors: [] as Error[], closed: 0 };
  const o: LinkOwner = {
    onmessage: (m) => void seen.messages.push(m),
    onerror: (e) => void seen.errors.push(e),
    onclose: () => void (seen.closed += 1),
    send: async () => {},
    close: async () => {},
  };
  return { o, seen };
}

async function refusal(p: Promise<unknown>): Promise<AdapterError> {
  try {
    await p;
  } catch (e) {
    assert.instance(e, AdapterError);
    return e as AdapterError;
  }
  throw new Error('expected a refusal');
}

const s = suite('LegacySseClient');

s('should resolve a relative endpoint against the SSE URL and POST there', async () => {
  const server = scripted();
  const { o, seen } = owner();
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch }, o);
  const client = new LegacySseClient(link);
  const connecting = client.connect();
  server.write('event: endpoint\ndata: /mcp/messages?sessionId=abc\n\n');
  await connecting;
  assert.is(client.endpoint?.href, 'http://127.0.0.1:9/mcp/messages?sessionId=abc');
  await client.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, undefined);
  assert.equal(server.fetches.at(-1), {
    url: 'http://127.0.0.1:9/mcp/messages?sessionId=abc',
    method: 'POST',
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  server.write('data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n');
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(seen.messages, [{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);
  await link.close(async () => {});
});

s('should keep the first endpoint event and ignore later ones', async () => {
  const server = scripted();
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch }, owner().o);
  const client = new LegacySseClient(link);
  const connecting = client.connect();
  server.write('event: endpoint\ndata: /first\n\nevent: endpoint\ndata: /second\n\n');
  await connecting;
  await new Promise((r) => setTimeout(r, 10));
  assert.is(client.endpoint?.pathname, '/first');
  await link.close(async () => {});
});

s('should refuse an endpoint on another origin', async () => {
  const server = scripted();
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch }, owner().o);
  const client = new LegacySseClient(link);
  const connecting = client.connect();
  server.write('event: endpoint\ndata: http://evil.example/messages\n\n');
  const e = await refusal(connecting);
  assert.is(e.code, 'protocol');
  assert.match(e.message, 'another origin');
  assert.is(client.endpoint, undefined);
  await link.close(async () => {});
});

s('should refuse an endpoint event that holds no URL', async () => {
  const server = scripted();
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch }, owner().o);
  const connecting = new LegacySseClient(link).connect();
  server.write('event: endpoint\ndata: http://[not a url\n\n');
  const e = await refusal(connecting);
  assert.is(e.code, 'protocol');
  assert.match(e.message, 'holds no URL');
  await link.close(async () => {});
});

s('should give up when no endpoint event comes in time', async () => {
  const server = scripted();
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch, requestTimeoutMs: 50 }, owner().o);
  const e = await refusal(new LegacySseClient(link).connect());
  assert.is(e.code, 'timeout');
  assert.match(e.message, 'no endpoint event within 50 ms');
  await link.close(async () => {});
});

s('should refuse a stream that ends before its endpoint event', async () => {
  const server = scripted();
  const { o, seen } = owner();
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch }, o);
  const connecting = new LegacySseClient(link).connect();
  server.write(': hello\n\n');
  server.end();
  const e = await refusal(connecting);
  assert.is(e.code, 'upstream-error');
  assert.match(e.message, 'closed before its endpoint event');
  // No session was ever established, so none is lost.
  assert.equal(seen.errors, []);
  assert.is(link.closed, false);
  await link.close(async () => {});
});

s('should refuse a GET that is not an SSE stream, with what the server said', async () => {
  const server = scripted(() => new Response('no such thing', { status: 404, headers: { 'content-type': 'text/plain' } }));
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch }, owner().o);
  const e = await refusal(new LegacySseClient(link).connect());
  assert.is(e.code, 'upstream-error');
  assert.equal(e.upstream, { httpStatus: 404, body: 'no such thing' });
  await link.close(async () => {});
});

s('should end the session when the stream ends after its endpoint event', async () => {
  const server = scripted();
  const { o, seen } = owner();
  const link = new LegacyHttpClientLink({ url: SSE_URL, mode: 'sse', fetch: server.fetch }, o);
  const connecting = new LegacySseClient(link).connect();
  server.write('event: endpoint\ndata: /messages\n\n');
  await connecting;
  server.end();
  await new Promise((r) => setTimeout(r, 10));
  assert.is(link.closed, true);
  assert.is(seen.closed, 1);
  assert.is((seen.errors[0] as AdapterError | undefined)?.code, 'upstream-exited');
});

s.run();
