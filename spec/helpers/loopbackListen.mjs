/**
 * A preload (`node --import`) for third-party servers that listen on every interface: a
 * `listen(port, cb)` without a host binds 127.0.0.1 instead, and the bound port is printed to
 * stderr as `LISTENING <port>` so a test can start the server on port 0 and find it.
 */
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || typeof args[0] === 'string') && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') process.stderr.write(`LISTENING ${address.port}\n`);
  });
  return listen.apply(this, args);
};
