/**
 * ProtectedResource: the upstream's challenge pointed at the front, the front's metadata (the
 * upstream's, naming the front), where the upstream's metadata is looked for, and the refusal of
 * a configuration that would pass a caller's token to another resource.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalResource, metadataUrlOf, passthroughRefusal, ProtectedResource } from '../../lib/fronts/protectedResource.ts';

/** An upstream that serves metadata at the given paths (and records what was asked). */
async function upstreamServing(documents: Record<string, unknown>): Promise<{ origin: string; asked: string[]; close(): Promise<void> }> {
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    asked.push(req.url ?? '');
    const doc = documents[req.url ?? ''];
    if (doc === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(typeof doc === 'string' ? doc : JSON.stringify(doc));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, asked, close: () => new Promise((r) => server.close(() => r())) };
}

const pure = suite('protected-resource helpers');

pure('should name the metadata URL of a resource by its path, as RFC 9728 does', () => {
  assert.is(metadataUrlOf('https://mcp.example.com/mcp'), 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
  assert.is(metadataUrlOf('https://mcp.example.com/'), 'https://mcp.example.com/.well-known/oauth-protected-resource');
  assert.is(canonicalResource('https://mcp.example.com/mcp/#x'), 'https://mcp.example.com/mcp');
});

pure('should refuse a front that stands for another resource than the upstream names, and accept the same one', () => {
  assert.is(passthroughRefusal('https://mcp.example.com/mcp', 'https://mcp.example.com/mcp/'), undefined);
  const refused = passthroughRefusal('https://api.other.example/mcp', 'https://mcp.example.com/mcp');
  assert.ok(refused);
  assert.match(refused!, 'token passthrough');
  assert.match(refused!, 'https://api.other.example/mcp');
  assert.match(passthroughRefusal('not a url', 'https://mcp.example.com/mcp')!, 'no valid resource');
});

pure("should point the upstream's challenge at the front's metadata, quoted or not, and leave one without it alone", () => {
  const front = new ProtectedResource({ upstream: 'http://10.0.0.5:8080/mcp', resource: 'https://mcp.example.com/mcp' });
  const ours = 'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';
  assert.is(
    front.challenge(
      'Bearer error="invalid_token", error_description="expired", resource_metadata="http://10.0.0.5:8080/.well-known/oauth-protected-resource/mcp"',
      'http://127.0.0.1:3000/mcp',
    ),
    `Bearer error="invalid_token", error_description="expired", ${ours}`,
  );
  assert.is(
    front.challenge('Bearer resource_metadata=http://10.0.0.5:8080/x, scope="a b"', 'http://127.0.0.1:3000/mcp'),
    `Bearer ${ours}, scope="a b"`,
  );
  assert.is(front.challenge('Bearer realm="api"', 'http://127.0.0.1:3000/mcp'), 'Bearer realm="api"');
  // Without a public URL, the front is where the request came.
  const local = new ProtectedResource({ upstream: 'http://10.0.0.5:8080/mcp' });
  assert.is(
    local.challenge('Bearer resource_metadata="x"', 'http://127.0.0.1:3000/mcp?a=1'),
    'Bearer resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp"',
  );
});

pure('should know the metadata paths of the endpoint and no others', () => {
  const front = new ProtectedResource({ upstream: 'http://10.0.0.5:8080/mcp' });
  assert.ok(front.isMetadataPath('/.well-known/oauth-protected-resource', '/mcp'));
  assert.ok(front.isMetadataPath('/.well-known/oauth-protected-resource/mcp', '/mcp'));
  assert.not.ok(front.isMetadataPath('/.well-known/oauth-protected-resource/other', '/mcp'));
  assert.not.ok(front.isMetadataPath('/.well-known/oauth-authorization-server', '/mcp'));
});

pure.run();

const served = suite('ProtectedResource.metadata');

served("should answer the upstream's metadata with the front as its resource", async () => {
  const front = 'http://127.0.0.1:3000/mcp';
  const up = await upstreamServing({
    '/.well-known/oauth-protected-resource/mcp': {
      resource: front,
      authorization_servers: ['https://auth.example.com/'],
      scopes_supported: ['mcp'],
    },
  });
  try {
    const pr = new ProtectedResource({ upstream: `${up.origin}/mcp` });
    const res = await pr.metadata(front);
    assert.is(res.status, 200);
    assert.equal(await res.json(), { resource: front, authorization_servers: ['https://auth.example.com/'], scopes_supported: ['mcp'] });
    assert.is(await pr.refusal(front), undefined);
    // Read once, then kept.
    await pr.metadata(front);
    assert.equal(up.asked, ['/.well-known/oauth-protected-resource/mcp']);
  } finally {
    await up.close();
  }
});

served("should fall back to the origin's metadata, and read the URL the upstream's challenge named on its own origin only", async () => {
  const front = 'http://127.0.0.1:3000/mcp';
  const up = await upstreamServing({
    '/.well-known/oauth-protected-resource': { resource: front, authorization_servers: ['https://auth.example.com/'] },
    '/named': { resource: front, authorization_servers: ['https://named.example.com/'] },
  });
  try {
    const pr = new ProtectedResource({ upstream: `${up.origin}/mcp` });
    assert.equal(((await (await pr.metadata(front)).json()) as { authorization_servers: string[] }).authorization_servers, [
      'https://auth.example.com/',
    ]);
    pr.challenge('Bearer resource_metadata="https://evil.example.com/named"', front);
    assert.equal(
      ((await (await pr.metadata(front)).json()) as { authorization_servers: string[] }).authorization_servers,
      ['https://auth.example.com/'],
      'another origin is not read',
    );
    pr.challenge(`Bearer resource_metadata="${up.origin}/named"`, front);
    assert.equal(((await (await pr.metadata(front)).json()) as { authorization_servers: string[] }).authorization_servers, [
      'https://named.example.com/',
    ]);
    assert.not.ok(up.asked.some((p) => p.includes('evil')));
  } finally {
    await up.close();
  }
});

served('should refuse to serve the metadata of an upstream of another resource, and say none is published when it is not', async () => {
  const up = await upstreamServing({
    '/.well-known/oauth-protected-resource/mcp': {
      resource: 'https://elsewhere.example.com/mcp',
      authorization_servers: ['https://auth.example.com/'],
    },
  });
  const none = await upstreamServing({});
  const broken = await upstreamServing({ '/.well-known/oauth-protected-resource/mcp': '{"not":"metadata"}' });
  try {
    const refused = await new ProtectedResource({ upstream: `${up.origin}/mcp` }).metadata('http://127.0.0.1:3000/mcp');
    assert.is(refused.status, 502);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, 'token passthrough');
    assert.match(
      (await new ProtectedResource({ upstream: `${up.origin}/mcp` }).refusal('http://127.0.0.1:3000/mcp'))!,
      'https://elsewhere.example.com/mcp',
    );
    const absent = new ProtectedResource({ upstream: `${none.origin}/mcp` });
    assert.is((await absent.metadata('http://127.0.0.1:3000/mcp')).status, 404);
    assert.is(await absent.refusal('http://127.0.0.1:3000/mcp'), undefined);
    const bad = await new ProtectedResource({ upstream: `${broken.origin}/mcp` }).metadata('http://127.0.0.1:3000/mcp');
    assert.is(bad.status, 502);
  } finally {
    await up.close();
    await none.close();
    await broken.close();
  }
});

served.run();
