/**
 * The fleet's hop goes only to the fleet: a retry sent straight to a replica that does not own its
 * call, with a request line in absolute form naming another host:port (an attacker who reaches a
 * replica directly, as pods or processes of one network can), is forwarded to the owner of its
 * call, never to the host it names: that host gets nothing of the caller's request, its
 * `Authorization` or a hop signature. Real replicas of `serve --fleet` on real Redis, in front of
 * server-everything, and a listener of our own standing for the host the attacker names.
 */
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hopTarget } from '../../lib/fleet/hops.ts';
import { specFleet, type SpecFleet } from '../helpers/fleetRedis.ts';
import {
  ELICITATION_ANSWER,
  ELICITATION_HEADERS,
  ELICITATION_META,
  elicitationCall,
  forwardedIn,
  startReplica,
  stopReplica,
  type Replica,
} from '../helpers/fleetReplicas.ts';

/** One request written as bytes on its own connection (`Connection: close`): the whole answer as text. */
function rawRequest(origin: string, requestLine: string, headers: Record<string, string>, body: string): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (answer += c));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    const lines = [
      requestLine,
      ...Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' }).map(
        ([k, v]) => `${k}: ${v}`,
      ),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

const unit = suite('hopTarget');

unit('should keep only the path and query of the request target, on the owner’s origin', () => {
  assert.is(hopTarget('http://127.0.0.1:4001', '/mcp?x=1').href, 'http://127.0.0.1:4001/mcp?x=1');
  assert.is(hopTarget('http://127.0.0.1:4001', 'http://127.0.0.1:4299/mcp').href, 'http://127.0.0.1:4001/mcp');
  assert.is(hopTarget('http://10.0.0.7:3000', 'https://evil.example:443/mcp?a=b').href, 'http://10.0.0.7:3000/mcp?a=b');
  assert.is(hopTarget('http://10.0.0.7:3000', '//evil.example/mcp').href, 'http://10.0.0.7:3000/mcp');
  assert.is(hopTarget('http://10.0.0.7:3000', undefined).href, 'http://10.0.0.7:3000/');
});

unit.run();

const attack = suite('a retry whose request line names another host (serve --fleet, real replicas)');
let fleet: SpecFleet;
let replicas: Replica[] = [];
attack.before(async () => {
  fleet = specFleet();
  replicas = await Promise.all([startReplica(fleet), startReplica(fleet)]);
});
attack.after(async () => {
  await Promise.all(replicas.map(stopReplica));
  await fleet.end();
});

attack('should forward it to the owner of its call, and send nothing to the host it names', async () => {
  const reached: IncomingMessage[] = [];
  const elsewhere = createHttpServer((req, res) => {
    reached.push(req);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"from elsewhere"}]}}');
  });
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  try {
    const [a, b] = replicas as [Replica, Replica];
    const parked = (await (await elicitationCall(a.url, 1, {}, { authorization: 'Bearer alice-token' })).json()) as {
      result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
    };
    assert.is(parked.result.resultType, 'input_required', JSON.stringify(parked));
    const [key] = Object.keys(parked.result.inputRequests);
    const before = await forwardedIn(replicas);
    const named = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/mcp`;
    const retry = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'trigger-elicitation-request',
        arguments: {},
        requestState: parked.result.requestState,
        inputResponses: { [key!]: ELICITATION_ANSWER },
        _meta: ELICITATION_META,
      },
    });
    const answer = await rawRequest(
      b.url,
      `POST ${named} HTTP/1.1`,
      {
        host: new URL(b.url).host,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer alice-token',
        ...ELICITATION_HEADERS,
      },
      retry,
    );
    assert.is(reached.length, 0, `the named host got the caller's request: ${JSON.stringify(reached.map((r) => r.headers))}`);
    assert.match(answer, /^HTTP\/1\.1 200/, answer.slice(0, 600));
    assert.match(answer, 'User provided the requested information!');
    assert.not.match(answer, 'from elsewhere');
    assert.is((await forwardedIn(replicas)) - before, 1, 'forwarded to the owner of the call');
  } finally {
    elsewhere.close();
  }
});

attack.run();
