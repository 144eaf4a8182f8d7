/**
 * The MRTR memory scenario without the wrap, in a process of its own: the messages themselves (the
 * pushed request and the original request params: their JSON size and the heap N parsed copies of
 * each take), and the legacy server alone as the wrap runs it (N servers, each driven by a bare
 * in-memory client, each with one call suspended on its push, then with that call finished).
 */
import { bareClient, createRelatedPushServer } from './callers.ts';
import { askParamsText, forEachLimit, settle, textOf, Wrong, type Json } from './requests.ts';
import type { Lib, ScenarioOptions } from './scenario.ts';

export interface ServerMemoryResult {
  readonly kind: 'server-memory';
  readonly n: number;
  /** The pushed `elicitation/create` request as the server sent it, and its JSON size. */
  readonly pushJson: string;
  readonly pushJsonBytes: number;
  /** The original request's params (with the modern `_meta`), and their JSON size. */
  readonly paramsJson: string;
  readonly paramsJsonBytes: number;
  /** Heap per parsed copy, N copies kept in an array. */
  readonly pushHeapPerCopy: number;
  readonly paramsHeapPerCopy: number;
  /**
   * The server alone, as the wrap runs it (one server per upstream session, one call each): heap
   * per server with its `ask_name` call suspended on the push, and per server once that call finished.
   */
  readonly serverPerSuspended: number;
  readonly serverPerFinished: number;
  readonly wrong: Wrong;
}

/** The heap `n` values made by `make` take, per value. */
async function heapPerCopy(n: number, make: (i: number) => unknown): Promise<number> {
  const keep: unknown[] = new Array(n).fill(null);
  const before = (await settle()).heapUsed;
  for (let i = 0; i < n; i++) keep[i] = make(i);
  const after = (await settle()).heapUsed;
  const perCopy = (after - before) / n;
  keep.fill(null);
  return perCopy;
}

/** Measures the messages and N legacy servers alone. */
export async function serverMemory(lib: Lib, o: ScenarioOptions): Promise<ServerMemoryResult> {
  const wrong = new Wrong();
  let samplePush: Json | undefined;
  /** One server and client, its ask_name call suspended on the push: resolves with a function that answers it. */
  const suspend = async (): Promise<() => Promise<void>> => {
    const client = await bareClient(lib, createRelatedPushServer());
    const pushed = new Promise<Json>((resolve) => (client.onPush = resolve));
    const answer = client.request('tools/call', { name: 'ask_name', arguments: {} });
    const push = await pushed;
    samplePush ??= push;
    return async () => {
      client.answer(push['id'] as number, { action: 'accept', content: { name: 'x' } });
      const m = await answer;
      if (textOf(m) !== 'Hello, x!') wrong.add(`server alone: ${JSON.stringify(m).slice(0, 160)}`);
    };
  };
  const limit = 64;
  const suspendAll = async (count: number, into: Array<() => Promise<void>>) =>
    forEachLimit(count, limit, async (i) => void (into[i] = await suspend()));
  const finishAll = async (from: Array<() => Promise<void>>) => forEachLimit(from.length, limit, (i) => from[i]!());

  for (let r = 0; r < (o.quick ? 2 : 3); r++) {
    const warm: Array<() => Promise<void>> = new Array(o.quick ? 100 : 200);
    await suspendAll(warm.length, warm);
    await finishAll(warm);
  }
  const pushJson = JSON.stringify(samplePush);
  const paramsJson = askParamsText;
  // At least 10,000 copies: the heap moves by a few hundred KB between collections anyway.
  const copies = Math.max(o.n, 10_000);
  const pushHeapPerCopy = await heapPerCopy(copies, (i) => JSON.parse(pushJson.replace(/"id":\d+/, `"id":${i}`)));
  const paramsHeapPerCopy = await heapPerCopy(copies, () => JSON.parse(paramsJson));

  const finishers: Array<() => Promise<void>> = new Array(o.n);
  const h0 = (await settle()).heapUsed;
  await suspendAll(o.n, finishers);
  const h1 = (await settle()).heapUsed;
  await finishAll(finishers);
  const h2 = (await settle()).heapUsed;
  return {
    kind: 'server-memory',
    n: o.n,
    pushJson,
    pushJsonBytes: Buffer.byteLength(pushJson),
    paramsJson,
    paramsJsonBytes: Buffer.byteLength(paramsJson),
    pushHeapPerCopy,
    paramsHeapPerCopy,
    serverPerSuspended: (h1 - h0) / o.n,
    serverPerFinished: (h2 - h0) / o.n,
    wrong,
  };
}
