/**
 * The Streamable HTTP front of `wrapLegacyServer` under bad input: requests of both eras, valid or
 * mutated (body, routing headers, Origin/Host, Content-Type, method, path, ids of every kind, huge
 * and deeply nested bodies, requestState tampered, expired, replayed or foreign), one to three at a
 * time, into `wrap.fetch` (or the Node listener over a socket). Each answer must be exactly what
 * the oracle says (status, code, id echoed; one response, last, on an event stream); valid input
 * must get a schema-valid result; after every case nothing is left in flight, parked, held or
 * open beyond what the run itself keeps, and no timer is left running.
 */
import fc from 'fast-check';
import { connectFaultyServer } from '../../fixtures/servers/faultyServer.ts';
import { Keyring } from '../../lib/state/keyring.ts';
import { serveNodeHttp, type RunningHttpServer } from '../../lib/transport/nodeHttp.ts';
import { MrtrBroker } from '../../lib/wrap/mrtr/suspend.ts';
import { wrapLegacyServer, type LegacyServerWrap, type WrapStats } from '../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { validateMessage } from '../helpers/schemas.ts';
import { readEvents } from '../helpers/eventStream.ts';
import { viaNode } from '../helpers/viaNode.ts';
import { textOf, type Json } from './arbitraries.ts';
import { knownGap } from './gaps.ts';
import { expectHttp, type Expected, type Id } from './httpOracle.ts';
import {
  CAPS,
  compose,
  decoded,
  INPUT_ANSWERS,
  messageSpec,
  modernMessage,
  progressTokenOf,
  retryParams,
  textFor,
  type MessageSpec,
  type States,
  type Template,
} from './messages.ts';
import { bounded, checkProperty, liveTimers, settle, type RunOptions } from './runner.ts';

const ORIGIN = 'http://127.0.0.1:3000';
const MAX_BODY = 256 * 1024;
const PV = '2026-07-28';

/** A header change: removed, or set to another value (which a Web `Headers` may refuse: then it is left out). */
type HeaderChange = { readonly name: string; readonly value: string | null };

const HEADER_NAMES = [
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'content-type',
  'accept',
  'host',
  'origin',
  'mcp-session-id',
  'authorization',
  'content-length',
  'mcp-param-region',
];
const headerValue = fc.oneof(
  fc.string({
    maxLength: 24,
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
  }),
  fc.constantFrom(
    PV,
    '2025-11-25',
    'tools/call',
    'tools/list',
    'echo',
    'ask_name',
    '=?base64?ZWNobw==?=',
    '=?base64?ZWNobw?=',
    '=?base64?*?=',
    'text/plain',
    'application/json; charset=utf-8',
    'localhost:abc',
    '[::1]:x',
    'evil.example',
    'http://evil.example',
    'http://localhost:3000',
    'null',
    'Bearer a',
    '999999999',
  ),
);
const headerChange: fc.Arbitrary<HeaderChange> = fc.record({
  name: fc.constantFrom(...HEADER_NAMES),
  value: fc.option(headerValue, { nil: null }),
});

/** One request of a case, as generated: a message and how it travels. */
interface RequestSpec extends MessageSpec {
  readonly headers: readonly HeaderChange[];
  readonly httpMethod: string;
  readonly path: string;
}

function requestSpec(states: States): fc.Arbitrary<RequestSpec> {
  return fc
    .tuple(
      messageSpec(states, { maxHuge: 300_000 }),
      fc.record({
        headers: fc.oneof(
          { weight: 3, arbitrary: fc.constant([]) },
          { weight: 1, arbitrary: fc.array(headerChange, { minLength: 1, maxLength: 3 }) },
        ),
        httpMethod: fc.oneof(
          { weight: 30, arbitrary: fc.constant('POST') },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'DELETE', 'PUT', 'PATCH') },
        ),
        path: fc.oneof(
          { weight: 30, arbitrary: fc.constant('/mcp') },
          { weight: 1, arbitrary: fc.constantFrom('/mcp/', '/', '/mcp?x=1', '/MCP', '/mcp#f') },
        ),
      }),
    )
    .map(([message, travel]) => ({ ...message, ...travel }));
}

function encodeName(value: string): string {
  const safe = /^[\x20-\x7e\t]*$/.test(value) && !/^[ \t]|[ \t]$/.test(value) && !(value.startsWith('=?base64?') && value.endsWith('?='));
  return safe ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The headers a correct client sends with `message`. */
function routingHeaders(message: unknown): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    host: '127.0.0.1:3000',
  };
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return headers;
  const m = message as Json;
  const params = m['params'] as Json | undefined;
  const meta = params && typeof params === 'object' ? (params['_meta'] as Json | undefined) : undefined;
  const version = meta && typeof meta === 'object' ? meta['io.modelcontextprotocol/protocolVersion'] : undefined;
  if (typeof version === 'string') headers['mcp-protocol-version'] = version;
  if (typeof m['method'] === 'string') headers['mcp-method'] = m['method'];
  const names: Record<string, string> = {
    'tools/call': 'name',
    'prompts/get': 'name',
    'resources/read': 'uri',
    'tasks/get': 'taskId',
    'tasks/update': 'taskId',
    'tasks/cancel': 'taskId',
  };
  const nameParam = typeof m['method'] === 'string' && Object.hasOwn(names, m['method']) ? names[m['method']] : undefined;
  const name = nameParam && params && typeof params === 'object' ? params[nameParam] : undefined;
  if (typeof name === 'string') headers['mcp-name'] = encodeName(name);
  return headers;
}

/** A built request: what is sent, and what the oracle is told. */
interface Built {
  readonly url: string;
  readonly init: RequestInit & { headers: Headers };
  readonly body: string;
  /** The message as the server reads it (the body decoded). */
  readonly message: unknown;
  readonly valid: Template['valid'];
  readonly progressToken: unknown;
}

function build(spec: RequestSpec): Built {
  const t = spec.template;
  const { message, rawId } = compose(spec);
  let headerSource: unknown = message;
  try {
    if (rawId !== undefined) headerSource = JSON.parse(textOf(message, '0'));
  } catch {
    headerSource = undefined;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(routingHeaders(headerSource))) {
    try {
      headers.set(name, value);
    } catch {
      /* a value no client can put in a header (a method name beyond Latin-1) */
    }
  }
  for (const change of spec.headers) {
    try {
      // An empty Host is no Host (a Node client puts its own in its place).
      if (change.value === null || (change.name === 'host' && change.value.trim() === '')) headers.delete(change.name);
      else headers.set(change.name, change.value);
    } catch {
      /* a value a Web Headers refuses is not sent at all */
    }
  }
  headers.delete('content-length');
  const body = textFor(spec, message, rawId);
  const untouched = spec.mutations.length === 0 || t.fixed;
  const valid =
    untouched &&
    spec.headers.length === 0 &&
    !spec.text &&
    spec.id.kind === 'valid' &&
    spec.httpMethod === 'POST' &&
    spec.path === '/mcp' &&
    t.raw === undefined
      ? t.valid
      : undefined;
  const hasBody = spec.httpMethod !== 'GET';
  const sent = decoded(body, message);
  return {
    url: `${ORIGIN}${spec.path}`,
    init: { method: spec.httpMethod, headers, ...(hasBody ? { body } : {}) },
    body: hasBody ? body : '',
    message: sent,
    valid,
    progressToken: progressTokenOf(sent),
  };
}

/** The fixture behind the fuzzed front: a wrap over the faulty server, with states to refuse. */
export interface HttpFixture {
  readonly front: 'fetch' | 'node';
  readonly wrap: LegacyServerWrap;
  readonly states: States;
  readonly send: (request: Request) => Promise<Response>;
  /** What the wrap holds between cases: the parked calls behind the live and the expired state. */
  readonly baseline: WrapStats;
  close(): Promise<void>;
}

function modernPost(id: Id, method: string, params: Json, caps: Json = CAPS, authorization: string | null = null): Request {
  const message = modernMessage(id, method, params, caps);
  const headers = routingHeaders(message);
  if (authorization !== null) headers['authorization'] = authorization;
  return new Request(`${ORIGIN}/mcp`, { method: 'POST', headers, body: JSON.stringify(message) });
}

/** The one response of an answer, JSON or streamed; the problems with the stream. */
async function responseOf(response: Response, stream: boolean): Promise<{ message: Json | undefined; notes: Json[]; problems: string[] }> {
  const type = response.headers.get('content-type') ?? '';
  if (stream) {
    if (!type.startsWith('text/event-stream'))
      return {
        message: undefined,
        notes: [],
        problems: [`expected an event stream, got ${response.status} ${type}: ${(await response.text()).slice(0, 200)}`],
      };
    const { messages, problems } = await readEvents(response);
    const responses = messages.filter((m) => !('method' in m));
    if (responses.length !== 1) problems.push(`${responses.length} responses on the stream`);
    if (messages.length > 0 && 'method' in messages[messages.length - 1]!) problems.push('the stream does not end with the response');
    return { message: responses[0], notes: messages.filter((m) => 'method' in m), problems };
  }
  if (!type.startsWith('application/json'))
    return { message: undefined, notes: [], problems: [`expected JSON, got ${response.status} ${type}`] };
  const text = await response.text();
  try {
    return { message: JSON.parse(text) as Json, notes: [], problems: [] };
  } catch {
    return { message: undefined, notes: [], problems: [`a body that is not JSON: ${text.slice(0, 200)}`] };
  }
}

/** Completes an `input_required` round the way a modern client does; the problems. */
async function finishRound(fixture: HttpFixture, sent: Json, result: Json, authorization: string | null, rounds = 0): Promise<string[]> {
  if (rounds > 3) return ['more than three rounds'];
  const { params, caps } = retryParams(sent, result);
  const retry = modernPost(`retry-${rounds}`, sent['method'] as string, params, caps, authorization);
  const response = await fixture.send(retry);
  const { message, problems } = await responseOf(response, false);
  if (problems.length > 0 || !message) return [`the retry: ${problems.join('; ')}`];
  const next = message['result'] as Json | undefined;
  if (!next) return [`the retry was refused: ${JSON.stringify(message).slice(0, 300)}`];
  if (next['resultType'] === 'input_required') return finishRound(fixture, sent, next, authorization, rounds + 1);
  return validateMessage(PV, message, { method: sent['method'] as string }).map((p) => `the retry's result: ${p}`);
}

/** Sends one request and checks its answer against the oracle; the problems. */
async function runRequest(fixture: HttpFixture, spec: RequestSpec): Promise<string[]> {
  const built = build(spec);
  const request = new Request(built.url, built.init);
  const expected: Expected = expectHttp({
    method: spec.httpMethod,
    path: new URL(built.url).pathname,
    header: (n) => built.init.headers.get(n),
    body: built.body,
    maxBodyBytes: MAX_BODY,
  });
  let response: Response;
  try {
    response = await fixture.send(request);
  } catch (e) {
    return [`${spec.httpMethod} ${built.body.slice(0, 300)}: the front threw ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`];
  }
  const what = `${spec.httpMethod} ${built.body.slice(0, 200)} → expected ${JSON.stringify(expected)}, got ${response.status}`;
  // Over a socket, a request that needs a URL of its own (a legacy session, anything but a plain POST)
  // cannot have one when the Host header is no valid authority: the server says 400.
  const host = built.init.headers.get('host');
  const needsUrl = expected.kind === 'legacy-open' || spec.httpMethod !== 'POST' || built.init.headers.get('mcp-session-id') !== null;
  // Node refuses headers beyond its limit (16 KiB) with 431 before any handler runs.
  let headerBytes = 0;
  built.init.headers.forEach((value, name) => (headerBytes += name.length + value.length + 4));
  if (fixture.front === 'node' && headerBytes > 16 * 1024 && response.status === 431) return [];
  if (
    fixture.front === 'node' &&
    needsUrl &&
    host !== null &&
    !/^(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i.test(host) &&
    response.status === 400
  ) {
    const text = await response.text();
    return text === '' || /"code":-32600/.test(text) ? [] : [`${what}: ${text.slice(0, 200)}`];
  }
  const problems = await judge(fixture, response, expected, built);
  return problems.map((p) => `${what}: ${p}`);
}

async function judge(fixture: HttpFixture, response: Response, expected: Expected, built: Built): Promise<string[]> {
  switch (expected.kind) {
    case 'empty': {
      const text = await response.text();
      const problems: string[] = [];
      if (!expected.status.includes(response.status)) problems.push(`status ${response.status}`);
      if (text !== '' && response.status !== 404) problems.push(`a body: ${text.slice(0, 100)}`);
      return problems;
    }
    case 'error': {
      if (response.status !== expected.status && response.status !== expected.or)
        return [`status ${response.status}: ${(await response.text()).slice(0, 200)}`];
      const { message, problems } = await responseOf(response, false);
      if (!message) return problems;
      return errorProblems(message, expected.code, expected.id);
    }
    case 'listen': {
      if (response.status !== 200 || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
        return [`not an event stream: ${response.status} ${(await response.text()).slice(0, 200)}`];
      const { messages, problems } = await readEvents(response, (m) => m['method'] === 'notifications/subscriptions/acknowledged');
      const ack = messages[messages.length - 1];
      if (!ack || ack['method'] !== 'notifications/subscriptions/acknowledged') return [...problems, 'no acknowledgement'];
      if (messages.length !== 1) problems.push('messages before the acknowledgement');
      if (
        (ack['params'] as Json)['_meta'] === undefined ||
        ((ack['params'] as Json)['_meta'] as Json)['io.modelcontextprotocol/subscriptionId'] !== expected.id
      )
        problems.push('the acknowledgement names another subscription');
      return [...problems, ...validateMessage(PV, ack)];
    }
    case 'legacy-open': {
      const session = response.headers.get('mcp-session-id');
      const stream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
      const { message, problems } = await responseOf(response, stream);
      if (session) {
        // Closed by its opener: a session answers no other caller.
        const authorization = built.init.headers.get('authorization');
        const closed = await fixture.send(
          new Request(`${ORIGIN}/mcp`, {
            method: 'DELETE',
            headers: {
              host: '127.0.0.1:3000',
              'mcp-session-id': session,
              'mcp-protocol-version': '2025-11-25',
              ...(authorization !== null ? { authorization } : {}),
            },
          }),
        );
        await closed.text();
      }
      if (!message) return problems;
      if (message['jsonrpc'] !== '2.0') problems.push('not JSON-RPC 2.0');
      if (response.status === 200 && message['id'] !== expected.id)
        problems.push(`id ${JSON.stringify(message['id'])}, not ${JSON.stringify(expected.id)}`);
      if (response.status !== 200 && !('error' in message)) problems.push('an HTTP error without a JSON-RPC error');
      return problems;
    }
    case 'answer': {
      // A request that asked for a stream and was refused at once (before the stream's head left)
      // gets its error as JSON with its own status.
      const refusedAtOnce = response.status !== 200 && (response.headers.get('content-type') ?? '').startsWith('application/json');
      const stream = expected.stream && !refusedAtOnce;
      if (!stream && expected.refusal === undefined && response.status !== 200 && response.status !== 404 && response.status !== 400)
        return [`status ${response.status}`];
      const { message, notes, problems } = await responseOf(response, stream);
      if (!message) return problems;
      if (message['jsonrpc'] !== '2.0') problems.push('not JSON-RPC 2.0');
      if (message['id'] !== expected.id) problems.push(`id ${JSON.stringify(message['id'])}, not ${JSON.stringify(expected.id)}`);
      for (const n of notes)
        if (n['method'] !== 'notifications/progress' && n['method'] !== 'notifications/message')
          problems.push(`a ${JSON.stringify(n['method'])} on the request's stream`);
      for (const n of notes)
        if (n['method'] === 'notifications/progress' && (n['params'] as Json)['progressToken'] !== built.progressToken)
          problems.push('progress under another token');
      const error = message['error'] as Json | undefined;
      const status = stream ? 200 : response.status;
      if (expected.refusal) {
        if (!error || error['code'] !== expected.refusal.code || (!stream && response.status !== expected.refusal.status))
          problems.push(`not the refusal ${JSON.stringify(expected.refusal)}: ${JSON.stringify(message).slice(0, 200)}`);
        return problems;
      }
      if (error && stream && !knownGap('stream-errors-inside-200'))
        problems.push(`an error inside a 200 event stream: ${JSON.stringify(error).slice(0, 200)}`);
      if (error) {
        const allowed: Record<number, number> = { [-32602]: 200, [-32603]: 200, [-32601]: 404, [-32021]: 400 };
        const code = error['code'] as number;
        if (!(code in allowed) || (!stream && allowed[code] !== status))
          problems.push(`error ${code} with HTTP ${status}: ${JSON.stringify(error['message'])}`);
        if (expected.method === 'server/discover') problems.push('server/discover failed');
        if (
          built.valid !== undefined &&
          (built.valid === 'result' || built.valid.code !== code || (!stream && built.valid.status !== status))
        )
          problems.push(`valid input refused: ${JSON.stringify(error).slice(0, 200)}`);
        return problems;
      }
      if (status !== 200) problems.push(`a result with HTTP ${status}`);
      const result = message['result'] as Json | undefined;
      if (!result || typeof result !== 'object') return [...problems, 'neither result nor error'];
      if (built.valid !== undefined && built.valid !== 'result')
        problems.push(`expected the refusal ${JSON.stringify(built.valid)}, got a result`);
      if (built.valid !== undefined || result['resultType'] === 'input_required')
        problems.push(...validateMessage(PV, message, { method: expected.method }));
      if (result['resultType'] === 'input_required')
        problems.push(...(await finishRound(fixture, built.message as Json, result, built.init.headers.get('authorization'))));
      else if (result['resultType'] !== 'complete') problems.push(`resultType ${JSON.stringify(result['resultType'])}`);
      return problems;
    }
  }
}

function errorProblems(message: Json, code: number, id: Id | undefined): string[] {
  const problems: string[] = [];
  if (message['jsonrpc'] !== '2.0') problems.push('not JSON-RPC 2.0');
  const error = message['error'] as Json | undefined;
  if (!error || typeof error['message'] !== 'string') return [...problems, `no error: ${JSON.stringify(message).slice(0, 200)}`];
  if (error['code'] !== code) problems.push(`code ${JSON.stringify(error['code'])} (${JSON.stringify(error['message']).slice(0, 120)})`);
  if (id === undefined ? message['id'] !== undefined && message['id'] !== null : message['id'] !== id)
    problems.push(`id ${JSON.stringify(message['id'])}, not ${JSON.stringify(id)}`);
  return problems;
}

/** What the wrap holds now, as far as the leak check is concerned. */
function held(s: WrapStats): string {
  return JSON.stringify({
    requests: s.requests,
    inFlight: s.inFlight,
    holds: s.holds,
    parked: s.parked,
    listens: s.listens,
    legacySessions: s.legacySessions,
  });
}

/** Builds the fixture: a wrap over in-process faulty servers, and the states it must refuse. */
export async function createHttpFixture(options: { front: 'fetch' | 'node' }): Promise<HttpFixture> {
  let offset = 0;
  const broker = new MrtrBroker({ collectMs: 1, parkTimeoutMs: 60 * 60_000, now: () => Date.now() + offset });
  const wrap = wrapLegacyServer({
    upstream: () => ({ connect: (t: never) => connectFaultyServer(t).then(() => undefined) }),
    mrtr: broker,
    http: { maxBodyBytes: MAX_BODY },
    requestTimeoutMs: 30_000,
  });
  let listening: RunningHttpServer | undefined;
  let send = (request: Request) => wrap.fetch(request);
  if (options.front === 'node') {
    listening = await serveNodeHttp(wrap, { port: 0 });
    send = viaNode(listening.origin, { keepAlive: false });
  }
  const park = async (id: string): Promise<string> => {
    const response = await send(modernPost(id, 'tools/call', { name: 'ask_name', arguments: {} }));
    const result = ((await response.json()) as { result: Json }).result;
    return result['requestState'] as string;
  };
  const live = await park('park-live');
  offset = -2 * 60 * 60_000;
  const expired = await park('park-expired');
  offset = 0;
  const replayed = await park('park-replayed');
  await (
    await send(
      modernPost('resume', 'tools/call', {
        name: 'ask_name',
        arguments: {},
        inputResponses: { 'elicitation-1': INPUT_ANSWERS['elicitation/create'] },
        requestState: replayed,
      }),
    )
  ).text();
  const foreign = new Keyring().seal(new TextEncoder().encode('{}'), 'requestState');
  await settle(() => wrap.stats().parked === 2 && wrap.stats().inFlight === 2 && wrap.stats().requests === 0);
  return {
    front: options.front,
    wrap,
    states: { live, expired, replayed, foreign },
    send,
    baseline: wrap.stats(),
    async close() {
      await listening?.close();
      await wrap.close();
    },
  };
}

/** After the run: the parked call behind the live state still resumes, and an ordinary call works. */
export async function finalChecks(fixture: HttpFixture): Promise<string[]> {
  const problems: string[] = [];
  const resumed = await fixture.send(
    modernPost('final-resume', 'tools/call', {
      name: 'ask_name',
      arguments: {},
      inputResponses: { 'elicitation-1': INPUT_ANSWERS['elicitation/create'] },
      requestState: fixture.states.live,
    }),
  );
  const r = (await resumed.json()) as Json;
  const text = ((r['result'] as Json | undefined)?.['content'] as Array<{ text: string }> | undefined)?.[0]?.text;
  if (text !== 'Hello, Ada!') problems.push(`the parked call did not resume: ${JSON.stringify(r).slice(0, 300)}`);
  const echo = (await (
    await fixture.send(modernPost('final-echo', 'tools/call', { name: 'echo', arguments: { text: 'still here' } }))
  ).json()) as Json;
  if (((echo['result'] as Json | undefined)?.['content'] as Array<{ text: string }> | undefined)?.[0]?.text !== 'still here')
    problems.push(`an ordinary call failed: ${JSON.stringify(echo).slice(0, 300)}`);
  return problems;
}

/** Runs the HTTP front property; returns the cases (requests) run. */
export async function fuzzHttpFront(fixture: HttpFixture, options: RunOptions & { front: string }): Promise<number> {
  let requests = 0;
  const expectedHeld = held(fixture.baseline);
  const timers = liveTimers();
  const property = fc.asyncProperty(fc.array(requestSpec(fixture.states), { minLength: 1, maxLength: 3 }), async (specs) => {
    requests += specs.length;
    const problems = (await bounded(Promise.all(specs.map((s) => runRequest(fixture, s))), 20_000, 'the case')).flat();
    const idle = await settle(() => held(fixture.wrap.stats()) === expectedHeld && liveTimers() <= timers);
    if (!idle)
      problems.push(
        `left behind: ${held(fixture.wrap.stats())} (expected ${expectedHeld}), ${liveTimers()} live timers (expected at most ${timers})`,
      );
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });
  await checkProperty(`http-${options.front}`, property, { ...options, noShrink: true });
  return requests;
}
