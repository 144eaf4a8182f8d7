/**
 * `mcp-dual-era explain`, run as the real command: a recorded legacy session shown as a modern
 * client sees it through the adapter (and a modern one as a legacy peer sees it), every translated
 * message valid under its revision's official schema.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { validateMessage } from '../helpers/schemas.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');
const CLI = resolve(ROOT, 'lib/cli/main.ts');
const LEGACY = resolve(ROOT, 'examples/transcripts/legacy-session.jsonl');
const MODERN = resolve(ROOT, 'examples/transcripts/modern-session.jsonl');

function run(args: string[], input?: string) {
  const r = spawnSync(TSX, [CLI, 'explain', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    ...(input !== undefined ? { input } : {}),
    env: { ...process.env, NO_COLOR: '' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Explained = { era: string; from: string; message: any; becomes: any[]; note: string; problem?: string };

function explained(file: string): Explained[] {
  const r = run([file, '--json']);
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Explained[];
}

/** Validates every translated message, knowing each response's method from its request. */
function validateAll(list: Explained[], revision: '2026-07-28' | '2025-11-25'): void {
  const methods = new Map<unknown, string>();
  for (const e of list) {
    for (const m of e.becomes) {
      if (typeof m.method === 'string' && 'id' in m) methods.set(m.id, m.method);
      const method = typeof m.method === 'string' ? m.method : methods.get(m.id);
      assert.equal(validateMessage(revision, m, method ? { method } : {}), [], `${revision}: ${JSON.stringify(m)}`);
    }
  }
}

const x = suite('mcp-dual-era explain');

x('should show a legacy session as a modern client sees it, schema-valid', () => {
  const list = explained(LEGACY);
  assert.is(list.length, 19);
  assert.ok(
    list.every((e) => e.era === 'legacy' && e.problem === undefined),
    JSON.stringify(list.filter((e) => e.problem)),
  );
  const [init, initResult, initialized, setLevel] = list;
  assert.is(init!.becomes[0].method, 'server/discover');
  assert.equal(init!.becomes[0].params._meta['io.modelcontextprotocol/clientInfo'], { name: 'desk-host', version: '3.2.0' });
  assert.equal(initResult!.becomes[0].result.supportedVersions, ['2026-07-28']);
  assert.equal(initialized!.becomes, []);
  assert.equal(setLevel!.becomes, [], 'logging/setLevel has no modern form');
  const call = list.find((e) => e.message.method === 'tools/call')!;
  assert.is(call.becomes[0].params._meta['io.modelcontextprotocol/logLevel'], 'info', 'the level travels on later requests');
  const debug = list.find((e) => e.message.params?.level === 'debug')!;
  assert.equal(debug.becomes, [], 'a log below the level is not sent');
  const push = list.find((e) => e.message.method === 'elicitation/create')!;
  assert.is(push.becomes[0].id, 3, 'the push answers the call it belongs to');
  assert.is(push.becomes[0].result.resultType, 'input_required');
  assert.is(push.becomes[0].result.inputRequests['elicitation-1'].method, 'elicitation/create');
  const answer = list.find((e) => e.message.id === 'srv-1' && 'result' in e.message)!;
  const retry = answer.becomes[0];
  assert.is(retry.method, 'tools/call');
  assert.equal(retry.params.inputResponses, { 'elicitation-1': { action: 'accept', content: { city: 'Lisbon' } } });
  assert.is(retry.params.requestState, push.becomes[0].result.requestState, 'the requestState is echoed');
  const final = list.find((e) => e.message.id === 3 && 'result' in e.message)!;
  assert.is(final.becomes[0].id, retry.id, 'the final result answers the retry');
  const subscribe = list.find((e) => e.message.method === 'resources/subscribe')!;
  assert.is(subscribe.becomes[0].method, 'subscriptions/listen');
  assert.equal(subscribe.becomes[0].params.notifications.resourceSubscriptions, ['weather://lisbon']);
  const updated = list.find((e) => e.message.method === 'notifications/resources/updated')!;
  assert.is(updated.becomes[0].params._meta['io.modelcontextprotocol/subscriptionId'], subscribe.becomes[0].id);
  assert.equal(list.find((e) => e.message.method === 'ping')!.becomes, []);
  validateAll(list, '2026-07-28');
});

x('should show a modern session as a legacy peer sees it, schema-valid', () => {
  const list = explained(MODERN);
  assert.is(list.length, 7);
  assert.ok(
    list.every((e) => e.era === 'modern' && e.problem === undefined),
    JSON.stringify(list.filter((e) => e.problem)),
  );
  assert.is(list[0]!.becomes[0].method, 'initialize');
  assert.is(list[1]!.becomes[0].result.serverInfo.name, 'weather-server');
  const call = list[2]!;
  assert.equal(
    call.becomes.map((m) => m.method),
    ['logging/setLevel', 'tools/call'],
    'a new log level becomes logging/setLevel first',
  );
  assert.not.ok('_meta' in call.becomes[1].params, 'the era keys are taken off');
  const round = list[3]!;
  assert.is(round.becomes[0].method, 'elicitation/create', 'input_required becomes a push');
  const retry = list[4]!;
  assert.equal(
    retry.becomes,
    [{ jsonrpc: '2.0', id: round.becomes[0].id, result: { action: 'accept', content: { city: 'Lisbon' } } }],
    'the retry answers the push',
  );
  const final = list[6]!;
  assert.is(final.becomes[0].id, 2, "the retry's answer is the first call's");
  assert.not.ok('resultType' in final.becomes[0].result);
  validateAll(list, '2025-11-25');
});

x('should print side by side, plain when piped, and read standard input', () => {
  const piped = run([LEGACY, '--width', '120']);
  assert.is(piped.status, 0);
  assert.not.match(piped.stdout, '\x1b[', 'no colour when piped');
  assert.match(piped.stdout, 'legacy (as recorded)');
  assert.match(piped.stdout, '(nothing)');
  assert.ok(
    piped.stdout.split('\n').every((line) => line.length <= 126 || line.includes('↳')),
    'lines keep to the width',
  );
  const stdin = run(['-', '--json'], '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  assert.is(stdin.status, 0);
  assert.is(JSON.parse(stdin.stdout)[0].note.includes('ping'), true);
});

x('should fail with exit code 2 and a clear message on bad input', () => {
  const missing = run(['no-such-file.jsonl']);
  assert.is(missing.status, 2);
  assert.match(missing.stderr, 'cannot read no-such-file.jsonl');
  const broken = run(['-'], '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{oops\n');
  assert.is(broken.status, 2);
  assert.match(broken.stderr, '-:2: not JSON');
  const none = run([]);
  assert.is(none.status, 2);
  assert.match(none.stderr, 'name one transcript');
});

x('should exit 2 on an unknown option, and say its exit codes in --help', () => {
  const unknown = run(['--sideways', LEGACY]);
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, "Unknown option '--sideways'");
  const help = run(['--help']);
  assert.is(help.status, 0);
  assert.match(help.stdout, 'Exit codes: 0 done, 2 usage');
});

x.run();
