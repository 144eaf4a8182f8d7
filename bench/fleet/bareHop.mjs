/**
 * The floor of any forwarding replica written on Node's HTTP: a process that takes each request
 * and sends it on to one origin (the owner's), over kept-alive connections, streaming the answer
 * back: no lookup, no signature, no check. `node bareHop.mjs <origin>`; it says where it listens
 * on stdout ("listening on <port>").
 */
import { Agent, createServer, request } from 'node:http';

const origin = new URL(process.argv[2] ?? '');
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const headers = { ...req.headers, host: origin.host };
  const out = request({ agent, hostname: origin.hostname, port: origin.port, path: req.url, method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
  req.pipe(out);
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening on ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGINT', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
