/**
 * A redis-server of a spec's own (nothing kept on disk), for specs that stop, silence or restart
 * the fleet's Redis: on a free port, or on `port` again (a restart); ready once it says it accepts
 * connections; stopped by process id.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as assert from 'uvu/assert';
import { freePort } from './nginx.ts';

const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => spawnSync('test', ['-x', p]).status === 0);

/** A running redis-server: its process, URL and port. */
export interface OwnRedis {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
}

/** Starts a redis-server on a free port, or on `port` (another is not tried then). */
export async function ownRedis(port?: number): Promise<OwnRedis> {
  assert.ok(REDIS_SERVER, 'redis-server is installed');
  for (let attempt = 0; ; attempt++) {
    const at = port ?? (await freePort());
    const child = spawn(REDIS_SERVER!, ['--port', String(at), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // A port taken meanwhile makes it exit, and another is tried.
    const ready = await new Promise<boolean>((done) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('Ready to accept connections')) done(true);
      });
      child.once('exit', () => done(false));
    });
    if (ready) return { child, url: `redis://127.0.0.1:${at}`, port: at };
    if (attempt >= 3 || port !== undefined) throw new Error('redis-server did not start');
  }
}

/** Stops a redis-server of `ownRedis` (one stopped with SIGSTOP too) and waits for it to exit. */
export async function stopRedis(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGCONT');
  child.kill('SIGKILL');
  await exited;
}
