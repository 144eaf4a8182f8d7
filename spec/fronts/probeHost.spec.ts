/**
 * The health and metrics endpoints answer the hosts the MCP endpoint answers, and anyone who names
 * the process by its IP address (an orchestrator's probe, a scraper), but no page a browser was
 * led to by a DNS name rebound to this process, and no foreign Origin.
 */
import { get } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPushServer } from '../../fixtures/servers/pushServer.ts';
import { serveNodeHttp } from '../../lib/transport/nodeHttp.ts';
import { wrapLegacyServer } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';

/** GET `path` at `origin` with these headers (Host among them): the status and body. */
function probe(origin: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(`${origin}${path}`, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

const probes = suite('health and metrics endpoints behind the Host and Origin check');

probes('should answer loopback and IP-address hosts, and refuse a rebound name or a foreign origin', async () => {
  const wrap = wrapLegacyServer({ upstream: () => createPushServer(), metrics: true, health: true });
  const http = await serveNodeHttp(wrap, { port: 0 });
  const port = new URL(http.origin).port;
  try {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, '10.244.1.7:8080', '[fd00::7]:8080']) {
        const answer = await probe(http.origin, path, { host });
        assert.is(answer.status, 200, `${path} with Host ${host}: ${answer.body}`);
      }
      const rebound = await probe(http.origin, path, { host: `attacker.example:${port}` });
      assert.is(rebound.status, 403, `${path} for a rebound name: ${rebound.body}`);
      assert.match(rebound.body, 'attacker.example');
      const foreign = await probe(http.origin, path, { host: `127.0.0.1:${port}`, origin: 'https://attacker.example' });
      assert.is(foreign.status, 403, `${path} from a foreign origin: ${foreign.body}`);
    }
  } finally {
    await http.close();
    await wrap.close();
  }
});

probes.run();
