/**
 * A real nginx (Debian's nginx-light) in front of replicas, for one spec: round robin, no
 * stickiness (or the task-hash variant: a task's requests hashed on their `Mcp-Name`), streaming
 * answers passed through unbuffered, on a free loopback port, with its own prefix directory;
 * stopped by process id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where nginx is, if installed. */
export const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * How nginx picks a replica: `round-robin`, or `task-hash`: the tasks extension's requests
 * (`Mcp-Method: tasks/…`) by a consistent hash of their `Mcp-Name` (the task's id), so that one
 * task's requests land on one replica; every other request by a hash of its own `$request_id`
 * (spread as at random).
 */
export type NginxBalance = 'round-robin' | 'task-hash';

/** The configuration we test with (and docs/fleet.md shows): round robin over the replicas, or the task-hash variant. */
export function nginxConfig(dir: string, port: number, replicas: readonly string[], balance: NginxBalance = 'round-robin'): string {
  const hashed = balance === 'task-hash';
  return `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${hashed ? TASK_ROUTE_MAP : ''}  upstream mcp {
${hashed ? '    hash $mcp_route consistent;\n' : ''}    # max_fails=0: a replica that refuses a connection (restarting) is not taken out for
    # fail_timeout (10 s by default); nginx tries the next one for that request. Otherwise a
    # rolling restart takes each replica out in turn, for longer than a restart lasts, until none is
    # left and nginx answers 502 itself.
${replicas.map((r) => `    server ${r} max_fails=0;`).join('\n')}
    keepalive 16;
    # Shorter than the replicas' own (60 s): nginx closes an idle connection before a replica
    # would, and a replica that drains lets nginx close the ones it keeps.
    keepalive_timeout 4s;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`;
}

/** The task-hash variant's routing key: a task's id for its requests, the request's own id for any other. */
const TASK_ROUTE_MAP = `  map $http_mcp_method $mcp_route {
    ~^tasks/ $http_mcp_name;
    default $request_id;
  }
`;

/** A running nginx. */
export interface RunningNginx {
  readonly url: string;
  /** Its master process (a script that must end it on any exit path sends it SIGTERM: it stops its workers). */
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/** Starts nginx on a free port in front of `replicas` (`host:port` each), balancing as `balance` says. */
export async function startNginx(replicas: readonly string[], balance: NginxBalance = 'round-robin'): Promise<RunningNginx> {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install -y nginx-light)');
  const dir = mkdtempSync(join(tmpdir(), 'mde-nginx-'));
  mkdirSync(join(dir, 'logs'));
  const port = await freePort();
  writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, port, replicas, balance));
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null)
      throw new Error(`nginx exited: ${err}${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}`);
    try {
      await fetch(`${url}/healthz`);
      break;
    } catch {
      if (i > 200) throw new Error(`nginx did not listen: ${err}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    url,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGQUIT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
