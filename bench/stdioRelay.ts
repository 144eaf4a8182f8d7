/**
 * The stdio front's ceilings: the least any stdio-to-stdio front of a stdio server can do. A
 * process that starts the server and pipes its own stdin to the server's stdin and the server's
 * stdout to its own stdout.
 *
 *   node bench/stdioRelay.js [--parse | --translate] -- <command> [args…]
 *
 * Without a flag, byte for byte: no framing, no parsing, no translation. What it costs over
 * calling the server directly is the second process hop alone.
 *
 * With `--parse`, line by line: every message is decoded (`JSON.parse`) and encoded again
 * (`JSON.stringify`) and nothing else, and the lines of one chunk leave in one write. That is the
 * least a front that reads the messages it passes on (to translate them, route them, answer some
 * itself) can do.
 *
 * With `--translate`, the least a translating front does, for a modern client: it opens a legacy
 * session itself (`initialize`, `notifications/initialized`); each modern request goes to the
 * server as a legacy one under an id of its own, without the envelope's `_meta` keys; each answer
 * goes back under the client's id as a modern result (`resultType`, the server's info). No checks,
 * no sessions to choose, no cancellation, no deadlines, no pushes: the floor of any translating
 * stdio front, the wrap's among them.
 *
 * Ends when its input ends (the server's stdin is closed) or the server exits.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { frame } from '../lib/transport/lineFramer.ts';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const flags = argv.slice(0, Math.max(dash, 0));
const mode = flags.includes('--translate') ? 'translate' : flags.includes('--parse') ? 'parse' : 'bytes';
if (dash === -1 || dash === argv.length - 1) {
  process.stderr.write('usage: stdioRelay.js [--parse | --translate] -- <command> [args…]\n');
  process.exit(2);
}
const [command, ...args] = argv.slice(dash + 1) as [string, ...string[]];
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });

type Message = Record<string, unknown>;

/** Each whole line read from `from`, decoded, becomes what `each` makes of it (lines, or ''); a chunk's lines leave `to` in one write. */
function lines(from: Readable, each: (message: Message) => string, to: Writable): void {
  let partial = '';
  from.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8');
    let written = '';
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      if (nl > start) written += each(JSON.parse(text.slice(start, nl)) as Message);
      start = nl + 1;
    }
    partial = text.slice(start);
    if (written.length > 0) to.write(written);
  });
}

/** The envelope's keys in a modern request's `_meta`, which a legacy server is not sent (the trace context is, as the wrap sends it). */
const isEnvelopeKey = (key: string): boolean => key.startsWith('io.modelcontextprotocol/');

/** The id of the relay's own `initialize`. */
const INITIALIZE_ID = 0;

function translating(): void {
  const clientIds = new Map<number, unknown>();
  let nextId = INITIALIZE_ID + 1;
  let serverInfo: unknown;
  child.stdin.write(
    frame({
      jsonrpc: '2.0',
      id: INITIALIZE_ID,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stdio-relay', version: '1.0.0' } },
    }),
  );
  lines(
    process.stdin,
    (request) => {
      const params = request['params'] as Message | undefined;
      const meta = params?.['_meta'] as Message | undefined;
      let sent = params;
      if (params && meta) {
        const { _meta, ...rest } = params;
        let kept: Message | undefined;
        for (const key in meta) if (!isEnvelopeKey(key)) (kept ??= {})[key] = meta[key];
        sent = kept ? { ...rest, _meta: kept } : rest;
      }
      const id = nextId++;
      clientIds.set(id, request['id']);
      return frame({ jsonrpc: '2.0', id, method: request['method'], ...(sent ? { params: sent } : {}) });
    },
    child.stdin,
  );
  lines(
    child.stdout,
    (answer) => {
      const upstreamId = answer['id'] as number;
      if (upstreamId === INITIALIZE_ID) {
        serverInfo = (answer['result'] as Message | undefined)?.['serverInfo'];
        child.stdin.write(frame({ jsonrpc: '2.0', method: 'notifications/initialized' }));
        return '';
      }
      const id = clientIds.get(upstreamId);
      clientIds.delete(upstreamId);
      if (answer['error']) return frame({ jsonrpc: '2.0', id, error: answer['error'] });
      const result = answer['result'] as Message;
      return frame({
        jsonrpc: '2.0',
        id,
        result: {
          ...result,
          resultType: 'complete',
          _meta: { ...(result['_meta'] as Message | undefined), 'io.modelcontextprotocol/serverInfo': serverInfo },
        },
      });
    },
    process.stdout,
  );
}

if (mode === 'translate') translating();
else if (mode === 'parse') {
  lines(process.stdin, frame, child.stdin);
  lines(child.stdout, frame, process.stdout);
} else {
  process.stdin.pipe(child.stdin);
  child.stdout.pipe(process.stdout);
}
if (mode !== 'bytes') process.stdin.once('end', () => child.stdin.end());
child.stdin.on('error', () => {});
child.once('exit', (code) => process.exit(code ?? 0));
const stop = (): void => {
  child.stdin.end();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
