/**
 * The wrap bench's ceiling: the least any HTTP front of a stdio server can do. A `node:http` server
 * that writes each POSTed JSON-RPC body, verbatim, as one line to ONE stdio child (initialized once
 * at startup) and answers the POST with the child's response line of the same id, verbatim. No
 * validation, no translation, no id remapping (the load generator's ids are unique), no sessions.
 *
 *   node --import tsx bench/passthrough.ts [--host H] [--port N] -- <command> [args…]
 *
 * Prints `ready http://host:port/` on stdout once the child is initialized. SIGTERM/SIGINT closes
 * the child's stdin and exits.
 */
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
if (dash === -1 || dash === argv.length - 1) {
  process.stderr.write('usage: passthrough.ts [--host H] [--port N] -- <command> [args…]\n');
  process.exit(2);
}
const own = argv.slice(0, dash);
const option = (name: string): string | undefined => {
  const i = own.indexOf(name);
  return i === -1 ? undefined : own[i + 1];
};
const host = option('--host') ?? '127.0.0.1';
const port = Number(option('--port') ?? 0);
const [command, ...args] = argv.slice(dash + 1) as [string, ...string[]];

const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const pending = new Map<unknown, ServerResponse>();
let initialized: ((line: string) => void) | undefined;

// Newline framing of the child's stdout; each line goes back to the POST waiting for its id.
let partial = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk: string) => {
  let start = 0;
  let nl = chunk.indexOf('\n');
  while (nl !== -1) {
    const line = start === 0 && partial ? partial + chunk.slice(0, nl) : chunk.slice(start, nl);
    if (start === 0) partial = '';
    start = nl + 1;
    nl = chunk.indexOf('\n', start);
    if (line.length === 0) continue;
    const id = (JSON.parse(line) as { id?: unknown }).id;
    const res = pending.get(id);
    if (res) {
      pending.delete(id);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(line) });
      res.end(line);
    } else if (id === 'passthrough-init') initialized?.(line);
  }
  partial += chunk.slice(start);
});
child.on('exit', (code, signal) => {
  for (const res of pending.values()) {
    res.writeHead(502);
    res.end();
  }
  pending.clear();
  process.stderr.write(`passthrough: the server exited (${signal ?? code})\n`);
  process.exit(1);
});

// Initialize the one session once.
await new Promise<void>((resolve) => {
  initialized = () => resolve();
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 'passthrough-init', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'passthrough', version: '1.0.0' } } })}\n`,
  );
});
child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405);
    res.end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    pending.set((JSON.parse(body) as { id?: unknown }).id, res);
    child.stdin.write(`${body}\n`);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(port, host, resolve));
process.stdout.write(`ready http://${host}:${(server.address() as AddressInfo).port}/\n`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  child.removeAllListeners('exit');
  child.once('exit', () => process.exit(0));
  child.stdin.end();
  setTimeout(() => child.kill('SIGKILL'), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
