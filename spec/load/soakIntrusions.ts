/**
 * The attacks of `npm run soak` on what a fleet adds, sent straight to the replicas as an attacker
 * inside the network would (on one process, straight to serve): `ssrf` (request lines in absolute
 * form naming a listener of the attacker's own, which must receive nothing), `hops` (forged hop
 * headers, each to be refused 403), `sessions` (made-up and stolen legacy session ids, to be
 * answered 404, and a steady crowd of new sessions from made-up callers against an honest client
 * whose session has its GET stream open, which must never lose it) and `bigids` (JSON-RPC ids past
 * 2^53, whose echo is reported as it came back). Run by the attacker process (`soakAttacks.ts`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { modernMeta } from '../helpers/messages.ts';
import { modernPost } from '../helpers/modernHttp.ts';

/** What these attacks need of the attacker process. */
export interface IntrusionCtx {
  /** The endpoint as clients reach it (the balancer, or serve itself). */
  readonly url: string;
  /** The origins of the replicas (or of serve itself), for what is sent straight to them. */
  readonly direct: readonly string[];
  readonly signal: AbortSignal;
  add(kind: string, outcome: string): void;
  /** Runs `fire` `perSecond` times a second until the signal, each outcome counted under `kind`. */
  paced(kind: string, perSecond: number, fire: () => Promise<string>): Promise<void>;
  /** A bare legacy `initialize` of `principal` at `url`; its session, if one is opened, is ended when the attacker stops. */
  legacyInitialize(url: string, principal: string): Promise<string>;
  /** A legacy session opened otherwise, ended (DELETE at `url`, as `principal`) when the attacker stops. */
  holdSession(sessionId: string, url: string, principal: string): void;
}

/** Absolute-form requests a second (each of a fleet's parks a call on one replica and sends its retry to another). */
const SSRF_PER_SECOND = 1;
const HOPS_PER_SECOND = 5;
const SESSION_GUESSES_PER_SECOND = 5;
/** New legacy sessions a second from made-up callers, at the replica holding the honest client's session. */
const CROWD_PER_SECOND = 1;
/** How often the honest legacy client uses its session. */
const VICTIM_PING_MS = 1000;
const BIGIDS_PER_SECOND = 0.5;
const REQUEST_TIMEOUT_MS = 30_000;
/** How long a legacy `initialize` may take (one under way when the attackers stop is let finish). */
const INITIALIZE_MS = 20_000;
const ELICIT = 'trigger-elicitation-request';
const LEGACY_VERSION = '2025-11-25';

/** Kinds the soak's goals read. */
export const KIND = {
  ssrf: 'ssrf (absolute-form request line)',
  hops: 'hops (forged, straight to replicas)',
  madeUp: 'sessions: made-up ids',
  stolen: "sessions: the honest client's id, by another caller",
  crowd: 'sessions: new sessions of made-up callers',
  victim: 'sessions: honest legacy client with its GET stream open',
  bigids: 'bigids (id echoed as sent?)',
} as const;

/** What the attacker's own listener saw, and how the honest legacy client fared. */
export interface IntrusionCounts {
  /** Connections that reached the listener the absolute-form request lines named (must stay 0). */
  ssrfListenerReached: number;
  /** Requests of the honest legacy client answered 404 (its session lost; must stay 0). */
  honestSessionLost: number;
}

const timeoutSignal = (ctx: IntrusionCtx) => AbortSignal.any([ctx.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]);

/** Each replica's id, from its `/healthz` (`undefined` on one process). */
async function replicaIds(ctx: IntrusionCtx): Promise<Array<string | undefined>> {
  return Promise.all(
    ctx.direct.map(async (origin) => {
      try {
        const health = (await (await fetch(`${origin}/healthz`, { signal: timeoutSignal(ctx) })).json()) as { replica?: string };
        return health.replica;
      } catch {
        return undefined;
      }
    }),
  );
}

/** The outcome of a raw HTTP answer: its status and the JSON-RPC error code or result type. */
function rawOutcome(status: number, body: string): string {
  const error = /"error":\{"code":(-?\d+)/.exec(body)?.[1];
  const type = /"resultType":"(\w+)"/.exec(body)?.[1];
  return `${status}${error ? ` ${error}` : type ? ` ${type}` : ''}`;
}

/**
 * Sends `head` (request line and headers, no blank line) and `body` on a socket of its own, asking
 * the server to close it after answering (the socket is not half-closed first: Node's server then
 * drops the answer); resolves with the answer once the server closes.
 */
function rawRequest(port: number, head: string, body: string, signal: AbortSignal): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const abort = () => socket.destroy(new Error('aborted'));
    signal.addEventListener('abort', abort, { once: true });
    socket.on('connect', () => socket.write(`${head}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (e) => (signal.removeEventListener('abort', abort), reject(e)));
    socket.on('close', () => {
      signal.removeEventListener('abort', abort);
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, text });
    });
  });
}

/** A listener of the attacker's own on loopback, counting the connections that reach it. */
async function attackerListener(counts: IntrusionCounts): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => {
    counts.ssrfListenerReached++;
    socket.on('error', () => {});
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, server };
}

const modernHeaders = (method: string, name: string | undefined, principal: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
  authorization: `Bearer ${principal}`,
});

/**
 * `ssrf`: request lines in absolute form naming the attacker's listener (`POST
 * http://127.0.0.1:<listener>/mcp HTTP/1.1`), sent straight to a replica with its own Host. In a
 * fleet, every other one is the retry of a call parked on one replica sent to the next (which
 * forwards it to the owner); the others are plain calls of `echo`. Stopping lets one under way
 * finish (its retry sent), so it leaves no call parked.
 */
export async function ssrfAttack(ctx: IntrusionCtx, counts: IntrusionCounts): Promise<void> {
  const { port: listenerPort, server } = await attackerListener(counts);
  const principal = 'attacker-ssrf';
  let turn = 0;
  const fire = async (): Promise<string> => {
    const n = turn++;
    const fleet = ctx.direct.length > 1;
    const target = new URL(ctx.direct[(n + 1) % ctx.direct.length]!);
    let params: Record<string, unknown> = { name: 'echo', arguments: { message: 'ssrf' } };
    let variant = 'plain call';
    if (fleet && n % 2 === 0) {
      const owner = ctx.direct[n % ctx.direct.length]!;
      const parked = await modernPost(
        `${owner}/mcp`,
        'tools/call',
        { name: ELICIT, arguments: {} },
        { principal, capabilities: { elicitation: {} }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), id: `ssrf-${n}` },
      );
      const r = parked.message['result'];
      const key = r?.resultType === 'input_required' ? Object.keys(r.inputRequests ?? {})[0] : undefined;
      if (!key || typeof r.requestState !== 'string') return `parking on the owner: ${parked.status}`;
      params = {
        name: ELICIT,
        arguments: {},
        inputResponses: { [key]: { action: 'accept', content: { name: 'Ada', email: 'ada@example.com' } } },
        requestState: r.requestState,
      };
      variant = 'retry of a call parked on another replica';
    }
    const capabilities = variant === 'plain call' ? {} : { elicitation: {} };
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: `ssrf-${n}`,
      method: 'tools/call',
      params: { ...params, _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': capabilities }) },
    });
    const headers = Object.entries({ host: target.host, ...modernHeaders('tools/call', params['name'] as string, principal) }).map(
      ([k, v]) => `${k}: ${v}`,
    );
    const answer = await rawRequest(
      Number(target.port),
      [`POST http://127.0.0.1:${listenerPort}/mcp HTTP/1.1`, ...headers].join('\r\n'),
      body,
      AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    );
    return `${variant}: ${rawOutcome(answer.status, answer.text)}`;
  };
  try {
    await ctx.paced(KIND.ssrf, SSRF_PER_SECOND, fire);
  } finally {
    server.close();
  }
}

/** A hop header as a replica writes one (`from.to.at.nonce.signature.names`), signed by nobody. */
function forgedHop(from: string, to: string, names: readonly string[]): string {
  return `${from}.${to}.${Date.now()}.${randomBytes(12).toString('base64url')}.${randomBytes(32).toString('base64url')}.${[...names].sort().join(',')}`;
}

/** Answers a GET that opened a stream no further (its status is the outcome). */
async function statusOnly(res: Response): Promise<number> {
  await res.body?.cancel().catch(() => {});
  return res.status;
}

/**
 * `hops`: requests with forged hop headers straight to each replica in turn: a modern call, a legacy
 * `initialize`, a legacy session's GET and DELETE, each claiming to come from another replica of
 * the fleet (or a made-up one), and one addressed to a replica other than the one it reaches.
 */
export async function hopsAttack(ctx: IntrusionCtx): Promise<void> {
  const ids = await replicaIds(ctx);
  const idOf = (i: number) => ids[i % ids.length] ?? `made-up-replica-${i % ids.length}`;
  let turn = 0;
  await ctx.paced(KIND.hops, HOPS_PER_SECOND, async () => {
    const n = turn++;
    const i = n % ctx.direct.length;
    const origin = ctx.direct[i]!;
    const to = idOf(i);
    const from = ctx.direct.length > 1 ? idOf(i + 1) : 'made-up-replica';
    const principal = `attacker-hop-${n}`;
    const variant = n % 5;
    if (variant === 0 || variant === 4) {
      const headers: Record<string, string> = modernHeaders('tools/call', 'echo', principal);
      headers['x-mcp-dual-era-hop'] = forgedHop(from, variant === 0 ? to : from, Object.keys(headers));
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: n,
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: 'hop' }, _meta: modernMeta() },
      });
      const res = await fetch(`${origin}/mcp`, { method: 'POST', headers, body, signal: timeoutSignal(ctx) });
      return `${variant === 0 ? 'modern call' : 'modern call addressed to another replica'}: ${await statusOnly(res)}`;
    }
    if (variant === 1) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${principal}`,
      };
      headers['x-mcp-dual-era-hop'] = forgedHop('made-up-replica', to, Object.keys(headers));
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      });
      // Not aborted when the attackers stop: a session it opens is known, and deleted.
      const res = await fetch(`${origin}/mcp`, { method: 'POST', headers, body, signal: AbortSignal.timeout(INITIALIZE_MS) });
      const session = res.headers.get('mcp-session-id');
      if (session) ctx.holdSession(session, `${origin}/mcp`, principal);
      return `legacy initialize: ${await statusOnly(res)}`;
    }
    const method = variant === 2 ? 'GET' : 'DELETE';
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      'mcp-session-id': `${to}.${randomUUID()}`,
      'mcp-protocol-version': LEGACY_VERSION,
      authorization: `Bearer ${principal}`,
    };
    headers['x-mcp-dual-era-hop'] = forgedHop(from, to, Object.keys(headers));
    const res = await fetch(`${origin}/mcp`, { method, headers, signal: timeoutSignal(ctx) });
    return `legacy session ${method}: ${await statusOnly(res)}`;
  });
}

/** A legacy session's request: GET (its stream), POST (a `ping`) or DELETE, as `principal` (none: no Authorization). */
async function sessionRequest(
  url: string,
  method: 'GET' | 'POST' | 'DELETE',
  sessionId: string,
  principal: string | undefined,
  signal: AbortSignal,
): Promise<number> {
  const headers: Record<string, string> = {
    accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
    'mcp-session-id': sessionId,
    'mcp-protocol-version': LEGACY_VERSION,
    ...(principal ? { authorization: `Bearer ${principal}` } : {}),
  };
  if (method === 'POST') headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    ...(method === 'POST' ? { body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' } : {}),
    signal,
  });
  return statusOnly(res);
}

/**
 * An honest legacy client: its session, its GET stream open, a `ping` a second; counts its 404s.
 * `found` is told its session id once its stream is open (a refused `initialize` is sent again
 * when the answer says).
 */
async function honestLegacyListener(ctx: IntrusionCtx, counts: IntrusionCounts, found: (sessionId: string) => void): Promise<void> {
  const principal = 'honest-legacy-listener';
  while (!ctx.signal.aborted) {
    let sessionId: string | null = null;
    try {
      const init = await fetch(ctx.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${principal}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: 'honest', version: '1' } },
        }),
        signal: AbortSignal.timeout(INITIALIZE_MS),
      });
      await init.text();
      sessionId = init.headers.get('mcp-session-id');
      if (sessionId && ctx.signal.aborted) {
        await sessionRequest(ctx.url, 'DELETE', sessionId, principal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)).catch(() => 0);
        return;
      }
      ctx.add(KIND.victim, `initialize: ${init.status}${sessionId ? '' : ' (no session)'}`);
      if (!sessionId) {
        await sleep(1000 * (Number(init.headers.get('retry-after')) || 1), ctx.signal);
        continue;
      }
      const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY_VERSION, authorization: `Bearer ${principal}` };
      await (
        await fetch(ctx.url, {
          method: 'POST',
          headers: { ...session, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
          signal: timeoutSignal(ctx),
        })
      ).text();
      const stream = new AbortController();
      const get = await fetch(ctx.url, {
        method: 'GET',
        headers: { ...session, accept: 'text/event-stream' },
        signal: AbortSignal.any([ctx.signal, stream.signal]),
      });
      ctx.add(KIND.victim, `GET stream: ${get.status}`);
      let streamOpen = get.ok;
      const drained = get.body ? get.body.pipeTo(new WritableStream()).catch(() => {}) : Promise.resolve();
      void drained.then(() => {
        streamOpen = false;
        if (!ctx.signal.aborted && !stream.signal.aborted) ctx.add(KIND.victim, 'GET stream ended by the server');
      });
      found(sessionId);
      let lost = false;
      for (let n = 1; !ctx.signal.aborted && !lost; n++) {
        await sleep(VICTIM_PING_MS, ctx.signal);
        if (ctx.signal.aborted) break;
        const res = await fetch(ctx.url, {
          method: 'POST',
          headers: { ...session, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: n, method: 'ping' }),
          signal: timeoutSignal(ctx),
        });
        await res.text();
        ctx.add(KIND.victim, `ping${streamOpen ? '' : ' (stream not open)'}: ${res.status}`);
        if (res.status === 404) {
          counts.honestSessionLost++;
          lost = true;
        }
      }
      stream.abort();
      if (!lost)
        ctx.add(
          KIND.victim,
          `DELETE at the end: ${await sessionRequest(ctx.url, 'DELETE', sessionId, principal, AbortSignal.timeout(REQUEST_TIMEOUT_MS))}`,
        );
    } catch (e) {
      if (ctx.signal.aborted) {
        if (sessionId)
          await sessionRequest(ctx.url, 'DELETE', sessionId, principal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)).catch(() => 0);
        return;
      }
      ctx.add(KIND.victim, `error ${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name}`);
      await sleep(1000, ctx.signal);
    }
  }
}

/** How long the attackers wait for the honest legacy client to be listening before they start anyway. */
export const VICTIM_READY_MS = 10_000;

/**
 * `sessions`: the honest legacy client above, listening before any attack starts (`ready`: a
 * client that was there first); then GET, POST and DELETE with made-up session ids (random,
 * `<replica id>.<uuid>` for every real replica id, `made-up.<uuid>`) and with the honest client's
 * own id under other callers, straight to each replica; and new legacy sessions from made-up
 * callers (`Bearer made-up-N`) at a steady rate at the replica holding the honest session.
 */
export function sessionsAttack(ctx: IntrusionCtx, counts: IntrusionCounts): { ready: Promise<void>; done: Promise<void> } {
  let honestId: string | undefined;
  let listening!: () => void;
  const ready = new Promise<void>((r) => (listening = r));
  const victim = honestLegacyListener(ctx, counts, (id) => {
    honestId = id;
    listening();
  });
  const bounded = Promise.race([ready, sleep(VICTIM_READY_MS, ctx.signal)]);
  return { ready: bounded, done: bounded.then(() => sessionsAttacks(ctx, victim, () => honestId)) };
}

/** The attacks of `sessions` on the honest client's session (`honestId`, once it has one) and on ids of their own. */
async function sessionsAttacks(ctx: IntrusionCtx, victim: Promise<void>, honestSession: () => string | undefined): Promise<void> {
  const ids = await replicaIds(ctx);
  const methods = ['GET', 'POST', 'DELETE'] as const;
  let guess = 0;
  const guesses = ctx.paced(KIND.madeUp, SESSION_GUESSES_PER_SECOND, async () => {
    const n = guess++;
    const origin = ctx.direct[n % ctx.direct.length]!;
    const method = methods[n % 3]!;
    const forms = [randomUUID(), `made-up.${randomUUID()}`, ...ids.filter((id) => id !== undefined).map((id) => `${id}.${randomUUID()}`)];
    const form = Math.floor(n / 3) % forms.length;
    const label = form === 0 ? 'random' : form === 1 ? 'made-up.<uuid>' : '<replica id>.<uuid>';
    return `${method} ${label}: ${await sessionRequest(`${origin}/mcp`, method, forms[form]!, `attacker-session-${n % 7}`, timeoutSignal(ctx))}`;
  });
  let steal = 0;
  const stealing = ctx.paced(KIND.stolen, 1, async () => {
    const n = steal++;
    const honestId = honestSession();
    if (!honestId) return 'no honest session yet';
    const origin = ctx.direct[n % ctx.direct.length]!;
    const method = methods[n % 3]!;
    const principal = n % 2 === 0 ? 'attacker-thief' : undefined;
    return `${method} ${principal ? 'as another caller' : 'without credentials'}: ${await sessionRequest(`${origin}/mcp`, method, honestId, principal, timeoutSignal(ctx))}`;
  });
  let crowd = 0;
  const crowding = ctx.paced(KIND.crowd, CROWD_PER_SECOND, async () => {
    const owner = honestSession()?.split('.')[0];
    const at = ids.indexOf(owner);
    const origin = ctx.direct[at >= 0 ? at : 0]!;
    return ctx.legacyInitialize(`${origin}/mcp`, `made-up-${crowd++}`);
  });
  await Promise.all([victim, guesses, stealing, crowding]);
}

/** Ids past what a double holds exactly, as JSON number text. */
const BIG_IDS = ['9007199254740993', '1208925819614629174706176'];

/**
 * `bigids`: a modern `echo` call and `server/discover` with each id above written as a number,
 * through the balancer; the outcome says whether the answer's id is the same text.
 */
export async function bigIdsAttack(ctx: IntrusionCtx): Promise<void> {
  let turn = 0;
  await ctx.paced(KIND.bigids, BIGIDS_PER_SECOND, async () => {
    const n = turn++;
    const id = BIG_IDS[n % BIG_IDS.length]!;
    const discover = Math.floor(n / BIG_IDS.length) % 2 === 1;
    const method = discover ? 'server/discover' : 'tools/call';
    const params = discover ? { _meta: modernMeta() } : { name: 'echo', arguments: { message: 'big' }, _meta: modernMeta() };
    const body = `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${JSON.stringify(params)}}`;
    const res = await fetch(ctx.url, {
      method: 'POST',
      headers: modernHeaders(method, discover ? undefined : 'echo', 'attacker-bigids'),
      body,
      signal: timeoutSignal(ctx),
    });
    const text = await res.text();
    const last = text.includes('data:')
      ? (text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .at(-1)
          ?.slice(5)
          .trim() ?? '')
      : text;
    const echoed = /"id"\s*:\s*(-?[\d.eE+-]+|"[^"]*"|null)/.exec(last)?.[1];
    const verdict = echoed === id ? 'same text' : echoed === undefined ? 'no id' : `differs: ${echoed}`;
    return `${method} id ${id}: ${res.status} ${verdict}`;
  });
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
