import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';

/** Sends raw bytes on a new connection and resolves with what came back before it closed (or `timeoutMs` passed). */
function rawExchange(
  port: number,
  send: (write: (text: string) => void) => void,
  timeoutMs: number,
): Promise<{ text: string; closedAfterMs: number | undefined }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedAfterMs: undefined });
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
    socket.on('error', () => {});
    socket.on('connect', () => send((t) => socket.write(t)));
  });
}

const listener = suite('serveNodeHttp');

listener('should answer a request on a connection past the cap with 503, Retry-After and the limit, then serve again', async () => {
  const held: Array<() => void> = [];
  const server = await serveNodeHttp(
    async () => {
      await new Promise<void>((r) => held.push(r));
      return new Response('{}', { headers: { 'content-type': 'application/json' } });
    },
    { port: 0, maxConnections: 2 },
  );
  const port = Number(new URL(server.origin).port);
  try {
    const inFlight = [fetch(`${server.origin}/a`), fetch(`${server.origin}/b`)];
    while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
    const third = await rawExchange(port, (write) => write('GET /c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), 3000);
    assert.match(third.text, /^HTTP\/1\.1 503/);
    assert.match(third.text, /retry-after: 1/i);
    assert.match(third.text, '"code":-32005');
    assert.match(third.text, '"limit":"connections"');
    assert.ok(third.closedAfterMs !== undefined, 'the connection is closed after the refusal');
    for (const release of held.splice(0)) release();
    await Promise.all(inFlight);
    await new Promise((r) => setTimeout(r, 50));
    const again = fetch(`${server.origin}/d`);
    while (held.length < 1) await new Promise((r) => setTimeout(r, 10));
    held.shift()!();
    assert.is((await again).status, 200, 'served once connections closed');
  } finally {
    for (const release of held) release();
    await server.close();
  }
});

listener('should close a connection whose headers do not arrive within the headers timeout', async () => {
  const server = await serveNodeHttp(async () => new Response('ok'), { port: 0, headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
  const port = Number(new URL(server.origin).port);
  try {
    const slow = await rawExchange(
      port,
      (write) => {
        write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        const drip = setInterval(() => write('X-Slow: 1\r\n'), 200);
        setTimeout(() => clearInterval(drip), 5000);
      },
      6000,
    );
    assert.ok(slow.closedAfterMs !== undefined && slow.closedAfterMs < 4000, `closed after ${slow.closedAfterMs} ms`);
    assert.match(slow.text, /^HTTP\/1\.1 408/, 'with 408 Request Timeout');
  } finally {
    await server.close();
  }
});

listener.run();
