/**
 * The stdio front's ceilings: the least any stdio-to-stdio front of a stdio server can do. A
 * process that starts the server and pipes its own stdin to the server's stdin and the server's
 * stdout to its own stdout.
 *
 *   node bench/stdioRelay.js [--parse] -- <command> [args…]
 *
 * Without `--parse`, byte for byte: no framing, no parsing, no translation. What it costs over
 * calling the server directly is the second process hop alone.
 *
 * With `--parse`, line by line: every message is decoded (`JSON.parse`) and encoded again
 * (`JSON.stringify`) and nothing else, and the lines of one chunk leave in one write. That is the
 * least a front that reads the messages it passes on (to translate them, route them, answer some
 * itself) can do: the floor of any translating front, the stdio front among them.
 *
 * Ends when its input ends (the server's stdin is closed) or the server exits.
 */
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const parse = argv.slice(0, Math.max(dash, 0)).includes('--parse');
if (dash === -1 || dash === argv.length - 1) {
  process.stderr.write('usage: stdioRelay.js [--parse] -- <command> [args…]\n');
  process.exit(2);
}
const [command, ...args] = argv.slice(dash + 1) as [string, ...string[]];
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });

/** A chunk handler that decodes and encodes again each whole line, writing a chunk's lines at once. */
function reencoding(out: Writable): (chunk: Buffer) => void {
  let partial = '';
  return (chunk) => {
    const text = partial + chunk.toString('utf8');
    let written = '';
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      if (nl > start) written += `${JSON.stringify(JSON.parse(text.slice(start, nl)))}\n`;
      start = nl + 1;
    }
    partial = text.slice(start);
    if (written.length > 0) out.write(written);
  };
}

if (parse) {
  process.stdin.on('data', reencoding(child.stdin));
  process.stdin.once('end', () => child.stdin.end());
  child.stdout.on('data', reencoding(process.stdout));
} else {
  process.stdin.pipe(child.stdin);
  child.stdout.pipe(process.stdout);
}
child.stdin.on('error', () => {});
child.once('exit', (code) => process.exit(code ?? 0));
const stop = (): void => {
  child.stdin.end();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
