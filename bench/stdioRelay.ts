/**
 * The stdio front's ceiling: the least any stdio-to-stdio front of a stdio server can do. A process
 * that starts the server and pipes its own stdin to the server's stdin and the server's stdout to
 * its own stdout, byte for byte: no framing, no parsing, no translation. What it costs over
 * calling the server directly is the second process hop alone.
 *
 *   node bench/stdioRelay.js -- <command> [args…]
 *
 * Ends when its input ends (the server's stdin is closed) or the server exits.
 */
import { spawn } from 'node:child_process';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
if (dash === -1 || dash === argv.length - 1) {
  process.stderr.write('usage: stdioRelay.js -- <command> [args…]\n');
  process.exit(2);
}
const [command, ...args] = argv.slice(dash + 1) as [string, ...string[]];
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.stdin.on('error', () => {});
child.once('exit', (code) => process.exit(code ?? 0));
const stop = (): void => {
  child.stdin.end();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
