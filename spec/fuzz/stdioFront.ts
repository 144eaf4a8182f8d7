/**
 * The stdio front of `wrapLegacyServer` under bad input: one to eight lines per case (messages of
 * both eras, valid or mutated; garbage, partial and huge lines; batches; cancellations of earlier
 * requests), written in chunks cut anywhere (inside a line, inside a UTF-8 sequence) into a fresh
 * `serveStdio` on in-memory streams. Every line out must be one JSON-RPC message; every request
 * gets exactly one answer with its id and the code the oracle says (a legacy session opened by an
 * `initialize` is relayed: the legacy server answers at most once); a notification gets none; a
 * cancelled request may get none, and so may a modern request sent before the `initialize` that
 * opens a legacy session (the client fell back to the legacy era: what it asked before is
 * abandoned). Then the input ends, the front finishes, and the wrap holds nothing more than
 * before the case.
 */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { serveStdio } from '../../lib/fronts/stdioFront.ts';
import { validateMessage } from '../helpers/schemas.ts';
import type { Json } from './arbitraries.ts';
import { knownGap } from './gaps.ts';
import type { HttpFixture } from './httpFront.ts';
import { claimsModern, decodeAsWritten, deeperThan, expectMessage, shapeOf, type Expected, type Id } from './httpOracle.ts';
import { compose, messageSpec, modernMessage, PV, retryParams, textFor, type MessageSpec } from './messages.ts';
import { bounded, checkProperty, liveTimers, settle, type RunOptions } from './runner.ts';

/** One line of input, as generated. */
type LineSpec =
  | { readonly kind: 'message'; readonly spec: MessageSpec }
  | { readonly kind: 'garbage'; readonly text: string }
  | { readonly kind: 'cancel'; readonly of: number }
  | { readonly kind: 'batch'; readonly specs: readonly MessageSpec[] };

const garbage = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 40, unit: 'binary' }),
  fc.constantFrom(
    '',
    '   ',
    '\r',
    '{',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"',
    '}{',
    'null',
    '[]',
    '[1,2]',
    '"\\u0000"',
    '\u0000',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    'x'.repeat(200_000),
  ),
);

function lineSpec(fixture: HttpFixture): fc.Arbitrary<LineSpec> {
  const message = messageSpec(fixture.states, { maxHuge: 2_000_000 });
  return fc.oneof(
    { weight: 10, arbitrary: message.map((spec) => ({ kind: 'message' as const, spec })) },
    { weight: 2, arbitrary: garbage.map((text) => ({ kind: 'garbage' as const, text })) },
    { weight: 1, arbitrary: fc.nat(7).map((of) => ({ kind: 'cancel' as const, of })) },
    { weight: 1, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }).map((specs) => ({ kind: 'batch' as const, specs })) },
  );
}

/** What one line of input must get. */
type LineExpectation =
  | { readonly kind: 'nothing' }
  /** Exactly one error with this code (and id, or none). */
  | { readonly kind: 'error'; readonly code: number; readonly id: Id | undefined }
  /** One answer from the modern path (a result, or one of the errors the server behind may give). */
  | {
      readonly kind: 'answer';
      readonly id: Id;
      readonly method: string;
      readonly refusal?: number;
      readonly valid: boolean;
      readonly message: Json;
    }
  | { readonly kind: 'listen'; readonly id: Id }
  /** Relayed to the legacy session, or cancelled: `min` to `max` answers with this id. */
  | { readonly kind: 'relayed'; readonly id: Id | undefined; readonly min: number; readonly max: number };

interface Written {
  readonly text: string;
  readonly expectations: LineExpectation[];
  /** The modern requests among the lines, as the front decodes them. */
  readonly requests: Json[];
}

/** A message relayed to the legacy session: one answer for a request (or none, while that gap is known), none otherwise. */
function relayed(id: Id | undefined, answers: 0 | 1): LineExpectation {
  return { kind: 'relayed', id, min: answers === 1 && !knownGap('relayed-request-may-go-unanswered') ? 1 : 0, max: answers };
}

function fromExpected(e: Expected, value: unknown, valid: boolean): LineExpectation {
  switch (e.kind) {
    case 'error':
      return { kind: 'error', code: e.code, id: e.id };
    case 'answer':
      return {
        kind: 'answer',
        id: e.id,
        method: e.method,
        ...(e.refusal ? { refusal: e.refusal.code } : {}),
        valid,
        message: value as Json,
      };
    case 'listen':
      return { kind: 'listen', id: e.id };
    case 'empty':
      return { kind: 'nothing' };
    case 'legacy-open':
      return relayed(e.id, 1);
  }
}

/**
 * The input text of a case, and what each of its lines must get. A line the framer sees is what
 * lies between newlines (a mutated message may hold one, and become two lines).
 */
function write(lines: readonly LineSpec[]): Written {
  const texts: string[] = [];
  const valid: boolean[] = [];
  for (const line of lines) {
    if (line.kind === 'garbage') texts.push(line.text);
    else if (line.kind === 'cancel') texts.push('');
    else if (line.kind === 'batch') texts.push(`[${line.specs.map((spec) => textOf(spec)).join(',')}]`);
    else texts.push(textOf(line.spec));
    valid.push(
      line.kind === 'message' &&
        line.spec.mutations.length === 0 &&
        !line.spec.text &&
        line.spec.id.kind === 'valid' &&
        line.spec.template.valid !== undefined,
    );
  }
  // A cancellation names the id of an earlier line's request (or 0 when there is none).
  const out: string[] = [];
  const expectations: LineExpectation[] = [];
  const requests: Json[] = [];
  let legacy = false;
  const active: Id[] = [];
  /** Where the expectations of this case's modern requests are. */
  const modernAt: number[] = [];
  lines.forEach((line, i) => {
    let text = texts[i]!;
    if (line.kind === 'cancel') {
      const earlier = active[line.of % Math.max(1, active.length)];
      text = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: earlier ?? 0, reason: 'fuzz' } });
    }
    for (const part of text.split('\n')) {
      let framed = part.endsWith('\r') ? part.slice(0, -1) : part;
      // The UTF-8 decoder skips a byte order mark at the start of the stream (only there).
      if (out.length === 0 && framed.startsWith('\ufeff')) framed = framed.slice(1);
      out.push(part);
      if (framed.trim().length === 0) continue;
      let value: unknown;
      try {
        value = decodeAsWritten(framed);
      } catch {
        expectations.push({ kind: 'error', code: -32700, id: undefined });
        continue;
      }
      if (deeperThan(value, 64)) {
        expectations.push({ kind: 'error', code: -32700, id: undefined });
        continue;
      }
      const shape = shapeOf(value);
      if (shape.kind === 'broken') expectations.push({ kind: 'error', code: -32600, id: shape.id });
      else if (shape.kind === 'batch') expectations.push(legacy ? relayed(undefined, 0) : { kind: 'error', code: -32600, id: undefined });
      else if (shape.kind === 'request' && claimsModern(value)) {
        modernAt.push(expectations.length);
        expectations.push(fromExpected(expectMessage(value, {}), value, valid[i]! && framed === texts[i]));
        active.push(shape.id);
        requests.push(value as Json);
      } else if (
        shape.kind === 'notification' &&
        shape.method === 'notifications/cancelled' &&
        active.some((id) => id === ((value as Json)['params'] as Json | undefined)?.['requestId'])
      ) {
        // Cancels a modern request of this case: it may now go unanswered.
        const target = ((value as Json)['params'] as Json)['requestId'] as Id;
        for (let k = 0; k < expectations.length; k++) {
          const e = expectations[k]!;
          if ((e.kind === 'answer' || e.kind === 'listen' || e.kind === 'error') && e.id === target)
            expectations[k] = { kind: 'relayed', id: target, min: 0, max: 1 };
        }
        expectations.push({ kind: 'nothing' });
      } else if (legacy) expectations.push(shape.kind === 'request' ? relayed(shape.id, 1) : relayed(undefined, 0));
      else if (shape.kind === 'request' && shape.method === 'initialize') {
        legacy = true;
        // The client fell back to the legacy era: its modern requests so far may go unanswered.
        for (const k of modernAt) {
          const e = expectations[k]!;
          if (e.kind === 'answer' || e.kind === 'listen' || e.kind === 'error')
            expectations[k] = { kind: 'relayed', id: e.id, min: 0, max: 1 };
        }
        expectations.push(relayed(shape.id, 1));
      } else if (shape.kind === 'request') expectations.push(fromExpected(expectMessage(value, {}), value, false));
      else expectations.push({ kind: 'nothing' });
    }
  });
  return { text: `${out.join('\n')}\n`, expectations, requests };

  function textOf(spec: MessageSpec): string {
    const { message, rawId } = compose(spec);
    return textFor(spec, message, rawId);
  }
}

/** Cuts `bytes` at `cuts` (positions anywhere, a UTF-8 sequence included). */
function chunks(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const c of at) {
    out.push(bytes.subarray(start, c));
    start = c;
  }
  out.push(bytes.subarray(start));
  return out.filter((b) => b.length > 0);
}

/** Runs one case; the problems. */
async function runCase(fixture: HttpFixture, lines: readonly LineSpec[], cuts: readonly number[]): Promise<string[]> {
  const { text, expectations, requests } = write(lines);
  const input = new PassThrough();
  const output = new PassThrough();
  const received: Json[] = [];
  const problems: string[] = [];
  let partial = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    partial += chunk;
    let nl: number;
    while ((nl = partial.indexOf('\n')) !== -1) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      try {
        received.push(JSON.parse(line) as Json);
      } catch {
        problems.push(`a line out that is not JSON: ${line.slice(0, 200)}`);
      }
    }
  });
  const front = serveStdio(fixture.wrap, { input, output, principal: 'anonymous', closeOnEnd: false, graceMs: 10_000 });
  for (const chunk of chunks(Buffer.from(text, 'utf8'), cuts)) input.write(chunk);

  const responses = (id: Id | undefined) =>
    received.filter((m) => !('method' in m) && (id === undefined ? m['id'] === undefined || m['id'] === null : m['id'] === id));
  const strict = expectations.filter((e) => e.kind === 'error' || e.kind === 'answer' || e.kind === 'listen');
  const satisfied = () =>
    strict.every((e) =>
      e.kind === 'listen'
        ? received.some(
            (m) =>
              m['method'] === 'notifications/subscriptions/acknowledged' &&
              ((m['params'] as Json)['_meta'] as Json)['io.modelcontextprotocol/subscriptionId'] === e.id,
          )
        : responses(e.id).length > 0,
    );
  // Every strict expectation met, and nothing but listens still being served (a cancelled request
  // may still have parked a round of input before its cancellation arrived).
  const quiet = () => fixture.wrap.stats().requests === fixture.wrap.stats().listens;
  await settle(() => satisfied() && quiet(), 10_000);

  // Rounds of input the modern requests started are finished the way a client does (with a reused
  // id, the request the round belongs to is found by trying each: a state bound to other params is
  // refused without being used up).
  let retries = 0;
  for (const answer of received.filter((m) => (m['result'] as Json | undefined)?.['resultType'] === 'input_required')) {
    const candidates = requests.filter(
      (r) => r['id'] === answer['id'] && ['tools/call', 'prompts/get', 'resources/read'].includes(r['method'] as string),
    );
    let finished = false;
    for (const original of candidates) {
      const { params, caps } = retryParams(original, answer['result'] as Json);
      const id = `stdio-retry-${retries++}`;
      input.write(`${JSON.stringify(modernMessage(id, original['method'] as string, params, caps))}\n`);
      await settle(() => responses(id).length > 0, 10_000);
      if ((responses(id)[0]?.['result'] as Json | undefined)?.['resultType'] === 'complete') {
        finished = true;
        break;
      }
    }
    if (!finished)
      problems.push(
        `the round of ${JSON.stringify(answer['id'])} could not be finished: ${JSON.stringify(received.filter((m) => String(m['id']).startsWith('stdio-retry-'))).slice(0, 400)}`,
      );
  }
  input.end();
  await bounded(front.done, 20_000, 'the stdio front finishing');
  // Whatever the front wrote in its last turns is read before anything is judged.
  await new Promise((resolve) => setImmediate(resolve));
  const drained = new Promise((resolve) => output.once('end', resolve));
  output.end();
  await drained;

  const byId = new Map<string, LineExpectation[]>();
  for (const e of expectations) {
    if (e.kind === 'nothing') continue;
    const key = e.id === undefined ? 'none' : JSON.stringify(e.id);
    byId.set(key, [...(byId.get(key) ?? []), e]);
  }
  for (const [key, list] of byId) {
    const id = key === 'none' ? undefined : (JSON.parse(key) as Id);
    const got = responses(id);
    const min = list.reduce((n, e) => n + (e.kind === 'error' || e.kind === 'answer' ? 1 : e.kind === 'relayed' ? e.min : 0), 0);
    const max = list.reduce((n, e) => n + (e.kind === 'relayed' ? e.max : e.kind === 'listen' ? 1 : 1), 0);
    if (got.length < min || got.length > max)
      problems.push(`${got.length} answers for id ${key}, expected ${min}…${max}: ${JSON.stringify(got).slice(0, 300)}`);
    // With a reused id the answers may come in any order: each must fit one of its requests, and each request must have one that fits it.
    for (const m of got)
      if (!list.some((e) => accepts(e, m)))
        problems.push(
          `an answer for id ${key} that fits none of its requests: ${JSON.stringify(m).slice(0, 300)} (${list.flatMap((e) => (e.kind === 'answer' ? answerProblems(e, [m]) : [])).join('; ')})`,
        );
    for (const e of list) {
      if ((e.kind === 'error' || e.kind === 'answer') && !got.some((m) => accepts(e, m)))
        problems.push(`no fitting answer for id ${key} (${e.kind === 'error' ? e.code : e.method}): ${JSON.stringify(got).slice(0, 300)}`);
      if (
        e.kind === 'listen' &&
        !received.some(
          (m) =>
            m['method'] === 'notifications/subscriptions/acknowledged' &&
            ((m['params'] as Json)['_meta'] as Json)['io.modelcontextprotocol/subscriptionId'] === e.id,
        )
      )
        problems.push(`no acknowledgement for the listen ${key}`);
    }
  }
  const known = new Set([...byId.keys()]);
  for (const m of received) {
    if ('method' in m) continue;
    const key = m['id'] === undefined || m['id'] === null ? 'none' : JSON.stringify(m['id']);
    if (!known.has(key) && !key.startsWith('"stdio-retry-'))
      problems.push(`an answer nobody asked for: ${JSON.stringify(m).slice(0, 300)}`);
    if (m['jsonrpc'] !== '2.0') problems.push(`not JSON-RPC 2.0: ${JSON.stringify(m).slice(0, 200)}`);
  }
  if (problems.length > 0 && process.env['FUZZ_DUMP']) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(process.env['FUZZ_DUMP'], JSON.stringify({ text, expectations, received }));
  }
  return problems.map((p) => `${p}\n  input: ${JSON.stringify(text.slice(0, 600))}`);
}

/** True when `m` is an answer `e` allows. */
function accepts(e: LineExpectation, m: Json): boolean {
  switch (e.kind) {
    case 'error':
      return (m['error'] as Json | undefined)?.['code'] === e.code;
    case 'answer':
      return answerProblems(e, [m]).length === 0;
    case 'relayed':
      return e.max > 0;
    case 'listen':
      // A listen ends with its result when the session behind it goes away.
      return (m['result'] as Json | undefined)?.['resultType'] === 'complete';
    case 'nothing':
      return false;
  }
}

function answerProblems(e: Extract<LineExpectation, { kind: 'answer' }>, got: readonly Json[]): string[] {
  const problems: string[] = [];
  const allowed = e.refusal !== undefined ? [e.refusal] : [-32602, -32603, -32601, -32021];
  for (const m of got) {
    const error = m['error'] as Json | undefined;
    if (error) {
      if (!allowed.includes(error['code'] as number))
        problems.push(`error ${JSON.stringify(error['code'])} for ${JSON.stringify(e.id)} (${JSON.stringify(error['message'])})`);
      if (e.method === 'server/discover') problems.push('server/discover failed');
      if (e.valid && e.refusal === undefined && e.method !== 'no/such/method')
        problems.push(`valid input refused: ${JSON.stringify(error).slice(0, 200)}`);
      continue;
    }
    if (e.refusal !== undefined) problems.push(`expected the refusal ${e.refusal}, got ${JSON.stringify(m).slice(0, 200)}`);
    const result = m['result'] as Json | undefined;
    if (e.valid || result?.['resultType'] === 'input_required')
      problems.push(...validateMessage(PV, m, { method: e.method }).map((p) => `${JSON.stringify(e.id)}: ${p}`));
  }
  return problems;
}

/** Runs the stdio front property; returns the lines written. */
export async function fuzzStdioFront(fixture: HttpFixture, options: RunOptions): Promise<number> {
  let lines = 0;
  const expected = JSON.stringify(fixture.baseline);
  const timers = liveTimers();
  const stats = () => {
    const s = fixture.wrap.stats();
    // Sessions come and go, and what the wrap learns of the server's tools stays: neither is held for a request.
    return JSON.stringify({ ...s, sessions: fixture.baseline.sessions, remembered: fixture.baseline.remembered });
  };
  const property = fc.asyncProperty(
    fc.array(lineSpec(fixture), { minLength: 1, maxLength: 8 }),
    fc.array(fc.nat(), { maxLength: 5 }),
    async (specs, cuts) => {
      lines += specs.length;
      const problems = await bounded(runCase(fixture, specs, cuts), 60_000, 'the case');
      const idle = await settle(() => stats() === expected && liveTimers() <= timers);
      if (!idle) problems.push(`left behind: ${stats()} (expected ${expected}), ${liveTimers()} live timers (expected at most ${timers})`);
      if (problems.length > 0) throw new Error(problems.join('\n'));
    },
  );
  await checkProperty('stdio', property, { ...options, noShrink: true });
  return lines;
}
