/**
 * The transcript corpus: every scenario's legacy and modern sides are run through the translator
 * both ways and compared, and every message (fixture and emitted) is validated against the official
 * JSON Schema of its revision. Format: fixtures/transcripts/README.md.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { okValue } from '../../helpers/outcome.ts';
import * as t from '../../../lib/core/index.ts';
import type { JsonRpcNotification, JsonRpcRequest } from '../../../lib/core/jsonrpc.ts';
import type { InputMethod } from '../../../lib/core/legacy/inputs.ts';
import { validateMessage, type Revision } from '../../helpers/schemas.ts';
import { loadScenario, missingFiles, scenarioNames, type Scenario, type Step } from '../../helpers/transcripts.ts';

const MODERN: Revision = '2026-07-28';
type Obj = Record<string, any>;

function valid(revision: Revision, message: unknown, what: string, method?: string): void {
  const problems = validateMessage(revision, message, method === undefined ? {} : { method });
  if (problems.length > 0)
    assert.unreachable(`${what} is not valid ${revision}:\n  ${problems.slice(0, 4).join('\n  ')}\n  ${JSON.stringify(message)}`);
}

function lines(s: Scenario, side: 'legacy' | 'modern', label: string | undefined): any[] {
  return label === undefined ? [] : ((side === 'legacy' ? s.legacy : s.modern).get(label) ?? []);
}

function one(list: any[], what: string): any {
  assert.is(list.length, 1, `${what}: expected exactly one line`);
  return list[0];
}

/** Runs one step both ways; returns the messages it emitted (era, message, method) for validation. */
function runStep(s: Scenario, step: Step): Array<[Revision, unknown, string | undefined]> {
  const L = lines(s, 'legacy', step.label);
  const M = lines(s, 'modern', step.label);
  const backL = step.back ? lines(s, 'legacy', step.back) : L;
  const backM = step.backModern ? lines(s, 'modern', step.backModern) : M;
  const lv = s.legacyVersion;
  const ctx = s.context;
  const session = ctx['session'];
  const serverInfo = ctx['serverInfo'];
  const cache = ctx['cache'];
  const emitted: Array<[Revision, unknown, string | undefined]> = [];
  const toModern = (got: unknown, want: unknown, method?: string) => {
    assert.equal(got, want, `${step.label}: legacy → modern`);
    emitted.push([MODERN, got, method]);
  };
  const toLegacy = (got: unknown, want: unknown, method?: string) => {
    assert.equal(got, want, `${step.label}: modern → legacy`);
    emitted.push([lv, got, method]);
  };
  const opts = (o: Obj): Obj => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

  switch (step.kind) {
    case 'initialize': {
      const l = one(L, 'initialize'),
        m = one(M, 'discover');
      toModern(okValue(t.initializeToDiscoverRequest(l), 'initializeToDiscoverRequest'), backM[0]);
      const back = one(backL, 'initialize back');
      toLegacy(
        okValue(t.discoverToInitializeRequest(m, opts({ legacyVersion: back.params.protocolVersion })), 'discoverToInitializeRequest'),
        back,
      );
      break;
    }
    case 'initializeResult': {
      const l = one(L, 'initialize result'),
        m = one(M, 'discover result');
      const d = okValue(t.initializeResultToDiscover(l.result, opts({ cache })), 'initializeResultToDiscover');
      toModern({ jsonrpc: '2.0', id: l.id, result: d }, backM[0], 'server/discover');
      const back = one(backL, 'initialize result back');
      const i = okValue(
        t.discoverToInitializeResult(m.result, { requestedVersion: back.result.protocolVersion }),
        'discoverToInitializeResult',
      );
      toLegacy({ jsonrpc: '2.0', id: m.id, result: i }, back, 'initialize');
      break;
    }
    case 'request': {
      const l = one(L, 'request'),
        m = one(M, 'request');
      toModern(okValue(t.requestToModern(l, session), 'requestToModern'), backM[0]);
      const got = okValue(t.requestToLegacy(m), 'requestToLegacy');
      toLegacy(got.request, one(backL, 'request back'));
      if (step['retry'] !== undefined) assert.equal(got.envelope.retry, step['retry'], `${step.label}: retry input`);
      break;
    }
    case 'result': {
      const method = String(step['method']);
      const l = one(L, 'result'),
        m = one(M, 'result');
      const r = okValue(
        t.resultToModern(method, l.result, opts({ serverInfo, cache, retry: step['retry'] as boolean | undefined })),
        'resultToModern',
      );
      toModern({ jsonrpc: '2.0', id: l.id, result: r.result }, backM[0], method);
      const back = okValue(t.resultToLegacy(method, m.result), 'resultToLegacy');
      toLegacy({ jsonrpc: '2.0', id: m.id, result: back.result }, one(backL, 'result back'), method);
      break;
    }
    case 'error': {
      const method = step['method'] as string | undefined;
      const l = one(L, 'error'),
        m = one(M, 'error');
      toModern({ ...l, error: t.errorToModern(l.error, opts({ method, params: step['params'] })) }, backM[0]);
      toLegacy({ ...m, error: t.errorToLegacy(m.error, opts({ method })) }, one(backL, 'error back'));
      break;
    }
    case 'inputRequired': {
      const first = (step['firstOrdinal'] as number | undefined) ?? 1;
      const m = one(M, 'input_required');
      const pushes = L.map((p, i) => ({ key: t.inputKeyOf(p, first + i), request: p }));
      const r = okValue(t.inputRequiredResult(pushes, opts({ requestState: step['requestState'], serverInfo })), 'inputRequiredResult');
      toModern({ jsonrpc: '2.0', id: m.id, result: r }, backM[0], String(step['method'] ?? 'tools/call'));
      const read = okValue(t.readInputRequired(m.result), 'readInputRequired');
      const entries = Object.entries(read.inputRequests);
      assert.is(entries.length, backL.length, `${step.label}: one push per input request`);
      entries.forEach(([key, input], i) => {
        const want = backL[i];
        const push = okValue(
          t.inputRequestToPush(key, input, opts({ id: want.id, elicitationId: want.params?.elicitationId }) as { id: string }),
          'inputRequestToPush',
        );
        toLegacy(push, want);
      });
      break;
    }
    case 'inputResponses': {
      const pending = step['pending'] as Record<string, { id: string | number; method: InputMethod }>;
      const original = one(lines(s, 'modern', String(step['original'])), 'original request');
      const m = one(M, 'retry');
      const keyById = new Map(Object.entries(pending).map(([k, p]) => [p.id, k]));
      const inputResponses: Record<string, Obj> = {};
      for (const resp of L) {
        const key = keyById.get(resp.id);
        assert.ok(key, `${step.label}: response ${resp.id} answers no pending push`);
        inputResponses[key!] = okValue(t.resultToInputResponse(pending[key!]!.method, key!, resp.result), 'resultToInputResponse');
      }
      toModern(t.retryRequest(original, opts({ id: m.id, inputResponses, requestState: step['requestState'] }) as never), backM[0]);
      const legacy = okValue(t.requestToLegacy(m), 'requestToLegacy');
      const got = Object.entries(legacy.envelope.retry?.inputResponses ?? {}).map(([key, resp]) => ({
        jsonrpc: '2.0',
        id: pending[key]!.id,
        result: okValue(t.inputResponseToResult(pending[key]!.method, key, resp), 'inputResponseToResult'),
      }));
      assert.equal(legacy.envelope.retry?.requestState, step['requestState'], `${step.label}: requestState echoed`);
      got.forEach((g, i) => toLegacy(g, backL[i], pending[[...keyById.values()].find((k) => pending[k]!.id === g.id)!]!.method));
      assert.is(got.length, backL.length, `${step.label}: one response per input`);
      break;
    }
    case 'log': {
      const l = one(L, 'log');
      const got = okValue(t.logToModern(l, step['logLevel'] as never), 'logToModern');
      if (M.length === 0) assert.is(got, undefined, `${step.label}: filtered out`);
      else {
        toModern(got, backM[0]);
        toLegacy(okValue(t.logToLegacy(M[0]), 'logToLegacy'), one(backL, 'log back'));
      }
      break;
    }
    case 'progress': {
      const l = one(L, 'progress'),
        m = one(M, 'progress');
      toModern(okValue(t.progressToModern(l), 'progressToModern'), backM[0]);
      toLegacy(okValue(t.progressToLegacy(m, { legacyVersion: lv as never }), 'progressToLegacy'), one(backL, 'progress back'));
      break;
    }
    case 'cancel': {
      const l = one(L, 'cancel'),
        m = one(M, 'cancel');
      toModern(okValue(t.cancelToModern(l), 'cancelToModern'), backM[0]);
      toLegacy(okValue(t.cancelToLegacy(m), 'cancelToLegacy'), one(backL, 'cancel back'));
      break;
    }
    case 'listenNotification': {
      const l = one(L, 'notification');
      const listen = { subscriptionId: step['subscriptionId'] as string, filter: step['filter'] as Obj };
      const got = t.notificationToListen(l as JsonRpcNotification, listen);
      if (M.length === 0) assert.is(got, undefined, `${step.label}: not opted in`);
      else {
        toModern(got, backM[0]);
        const back = t.notificationFromListen(M[0]);
        assert.equal(back.subscriptionId, step['subscriptionId'], `${step.label}: subscription id`);
        toLegacy(back.notification, one(backL, 'notification back'));
      }
      break;
    }
    case 'legacyOnly': {
      const l = one(L, 'legacy-only notification');
      assert.is(M.length, 0, `${step.label}: a legacy-only notification has no modern line`);
      assert.ok(t.isLegacyOnlyNotification(l.method), `${step.label}: ${l.method} should be legacy-only`);
      break;
    }
    case 'subscriptions': {
      const caps = ctx['serverCapabilities'] ?? {};
      const [listen, ack] = M;
      assert.ok(listen && ack, `${step.label}: needs the listen request and its acknowledgement`);
      const uris = L.map((r) => r.params.uri);
      const filter = t.legacySubscriptionsToFilter(uris, caps);
      assert.equal(filter, listen.params.notifications, `${step.label}: listen filter`);
      const emittedListen = { ...listen, params: { ...listen.params, notifications: filter } };
      emitted.push([MODERN, emittedListen, undefined]);
      const ackGot = t.acknowledgement(listen.id, t.honouredFilter(filter, caps));
      toModern(ackGot, ack);
      const back = t.filterToLegacySubscriptions(listen.params.notifications, caps);
      assert.equal(
        back,
        backL.map((r) => r.params.uri),
        `${step.label}: subscribed URIs`,
      );
      break;
    }
    case 'urlElicitation': {
      const l = one(L, '-32042'),
        m = one(M, 'input_required');
      const got = okValue(
        t.urlElicitationToInputRequired(l.error, opts({ requestState: step['requestState'], serverInfo })),
        'urlElicitationToInputRequired',
      );
      toModern({ jsonrpc: '2.0', id: l.id, result: got.result }, backM[0], 'tools/call');
      const ids = step['elicitationIds'] as Record<string, string>;
      assert.equal(got.elicitationIds, ids, `${step.label}: elicitation ids kept`);
      const back = one(backL, '-32042 back');
      const err = okValue(
        t.inputRequiredToUrlElicitation(
          okValue(t.readInputRequired(m.result), 'readInputRequired').inputRequests,
          (k) => ids[k]!,
          back.error.message,
        ),
        'inputRequiredToUrlElicitation',
      );
      toLegacy({ jsonrpc: '2.0', id: m.id, error: err }, back);
      break;
    }
    case 'task': {
      const l = one(L, 'task'),
        m = one(M, 'task');
      toModern(
        {
          jsonrpc: '2.0',
          id: l.id,
          result: okValue(t.createTaskResultToModern(l.result, opts({ serverInfo })), 'createTaskResultToModern'),
        },
        backM[0],
        'tools/call',
      );
      toLegacy(
        { jsonrpc: '2.0', id: m.id, result: okValue(t.createTaskResultToLegacy(m.result), 'createTaskResultToLegacy') },
        one(backL, 'task back'),
        'tools/call',
      );
      break;
    }
    case 'batch': {
      const batch = one(L, 'batch');
      const items = t.splitBatch(batch);
      const out = items.map((it) => {
        assert.ok(it.ok, `${step.label}: a batch member was refused: ${JSON.stringify(it)}`);
        assert.is((it as { item: { kind: string } }).item.kind, 'request', `${step.label}: batch members are requests`);
        return okValue(t.requestToModern((it as { item: { message: JsonRpcRequest } }).item.message, session), 'requestToModern');
      });
      assert.is(out.length, backM.length, `${step.label}: one modern request per member`);
      out.forEach((o, i) => toModern(o, backM[i]));
      toLegacy(
        M.map((m) => okValue(t.requestToLegacy(m), 'requestToLegacy').request),
        one(backL, 'batch back'),
      );
      break;
    }
    default:
      assert.unreachable(`unknown step kind ${step.kind}`);
  }
  return emitted;
}

const corpus = suite('corpus');
const names = scenarioNames();

corpus('should hold at least 25 scenarios, each with both sides', () => {
  assert.ok(names.length >= 25, `only ${names.length} scenarios`);
  for (const name of names) assert.equal(missingFiles(name), [], `${name} is unpaired`);
});

for (const name of names) {
  if (missingFiles(name).length > 0) continue;
  corpus(`should translate ${name} both ways into schema-valid messages`, () => {
    const s = loadScenario(name);
    const labels = new Set(
      s.steps.flatMap((st) => [st.label, st.back, st.backModern, st['original'] as string | undefined].filter(Boolean)),
    );
    for (const label of [...s.legacy.keys(), ...s.modern.keys()])
      assert.ok(labels.has(label), `${name}: line label ${label} belongs to no step`);
    for (const st of s.steps) assert.ok(s.legacy.has(st.label) || s.modern.has(st.label), `${name}: step ${st.label} has no lines`);
    const methodOf = new Map<string, string>();
    for (const st of s.steps) if (typeof st['method'] === 'string') methodOf.set(st.label, st['method']);
    // The fixtures themselves are valid messages of their revision.
    for (const [side, rev] of [
      ['legacy', s.legacyVersion],
      ['modern', MODERN],
    ] as const) {
      for (const [label, msgs] of side === 'legacy' ? s.legacy : s.modern) {
        const step = s.steps.find((st) => st.label === label || st.back === label || st.backModern === label);
        let method = methodOf.get(step?.label ?? label);
        if (step?.kind === 'initializeResult') method = side === 'legacy' ? 'initialize' : 'server/discover';
        if (step?.kind === 'inputResponses' && side === 'legacy') continue; // validated per push method below
        for (const m of msgs) valid(rev, m, `${name}/${side}.jsonl ${label}`, method);
      }
    }
    for (const step of s.steps)
      for (const [rev, msg, method] of runStep(s, step)) valid(rev, msg, `${name}: emitted for ${step.label}`, method);
  });
}

corpus.run();
