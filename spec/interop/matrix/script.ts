/**
 * The fixed script every cell of the matrix runs, one operation after another on one connected
 * client: each checks what matters of its feature end to end and says in a few words what it saw.
 * An operation throws to fail; waits are bounded (a guard against a hang, never a timing claim).
 */
import { sleep, waitFor } from '../../helpers/everything.ts';
import { MODEL_ANSWER, NAME, ROOTS, type ClientEra, type Driver } from './clients.ts';
import type { ServerEra } from './servers.ts';

export const NOTE_URI = 'note://greeting';
export const TOOLS = ['echo', 'ask_name', 'sample', 'list_roots', 'work', 'wait', 'cancellations', 'touch'];

export type OpId =
  | 'connect'
  | 'tools'
  | 'prompts'
  | 'resources'
  | 'elicitation'
  | 'sampling'
  | 'roots'
  | 'logs'
  | 'progress'
  | 'subscription'
  | 'cancellation';

export interface Op {
  readonly id: OpId;
  /** What the operation checks, for the report. */
  readonly checks: string;
}

export interface ScriptContext {
  readonly client: ClientEra;
  readonly server: ServerEra;
  /** The name the server gives itself. */
  readonly serverName: string;
}

export const OPS: readonly Op[] = [
  {
    id: 'connect',
    checks:
      "`server/discover` or `initialize`: the server is the fixture of its era, on the version the client era must settle on (2026-07-28 for a modern-only client, a legacy one for a legacy client, the server's era for a dual-era client), offering tools, prompts, logging and resources with subscriptions",
  },
  { id: 'tools', checks: "`tools/list` names the script's tools; `tools/call` of `echo` answers its text" },
  { id: 'prompts', checks: '`prompts/list` names `greet`; `prompts/get` fills in its argument' },
  { id: 'resources', checks: '`resources/list` names the note; `resources/read` returns its text' },
  { id: 'elicitation', checks: "a tool that asks for a name: the client's elicitation handler answers once, the tool greets that name" },
  { id: 'sampling', checks: "a tool that samples: the client's sampling handler answers once, the tool reports the answer" },
  { id: 'roots', checks: "a tool that lists roots: the client's roots handler answers once, the tool reports the root" },
  {
    id: 'logs',
    checks:
      'on a modern connection a call without a `logLevel` gets no logs; with the level set to `info` (`logging/setLevel` on a legacy connection, `logLevel` in `_meta` on a modern one), a call that logs at info, debug, info delivers exactly the two info logs',
  },
  { id: 'progress', checks: 'a call with a progress token delivers progress 1, 2, 3 to the client' },
  {
    id: 'subscription',
    checks:
      'subscribed to the note (`resources/subscribe`, or `subscriptions/listen`), a change announced by the server reaches the client as `notifications/resources/updated`',
  },
  {
    id: 'cancellation',
    checks:
      'a call that waits is cancelled by the client once it reports that it started: the call ends for the client and the server counts one more cancellation',
  },
];

/** The version family a client era must settle on against a server era. */
export function expectedEra(client: ClientEra, server: ServerEra): 'modern' | 'legacy' {
  if (client === 'modern') return 'modern';
  if (client === 'legacy') return 'legacy';
  return server === 'legacy' ? 'legacy' : 'modern';
}

function expect(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

function same(actual: unknown, expected: unknown, what: string): void {
  expect(
    JSON.stringify(actual) === JSON.stringify(expected),
    `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
  );
}

/** The era of the connection, from the version it settled on. */
function eraOf(d: Driver): 'modern' | 'legacy' | undefined {
  return d.version === '2026-07-28' ? 'modern' : d.version?.startsWith('202') ? 'legacy' : undefined;
}

/** Checks the connection itself (the client connected before this runs). */
export function checkConnect(d: Driver, ctx: ScriptContext): string {
  same(d.serverInfo?.name, ctx.serverName, 'server name');
  same(eraOf(d), expectedEra(ctx.client, ctx.server), `era of version ${d.version}`);
  const caps = d.serverCapabilities ?? {};
  const missing = ['tools', 'prompts', 'resources', 'logging'].filter((c) => caps[c] === undefined);
  expect(missing.length === 0, `server capabilities lack ${missing.join(', ')}: ${JSON.stringify(caps)}`);
  same((caps['resources'] as { subscribe?: unknown }).subscribe, true, 'resources.subscribe');
  return `${d.version}, ${d.serverInfo!.name} ${d.serverInfo!.version}`;
}

/** Runs the operation after `connect`. */
export async function runOp(id: Exclude<OpId, 'connect'>, d: Driver): Promise<string> {
  switch (id) {
    case 'tools': {
      const names = await d.listTools();
      const missing = TOOLS.filter((t) => !names.includes(t));
      expect(missing.length === 0, `tools/list lacks ${missing.join(', ')}`);
      same(await d.call('echo', { text: 'matrix' }), 'matrix', 'echo');
      return `${names.length} tools, echo answered`;
    }
    case 'prompts': {
      const names = await d.listPrompts();
      expect(names.includes('greet'), `prompts/list: ${JSON.stringify(names)}`);
      same(await d.getPrompt('greet', { name: NAME }), `Say hello to ${NAME}`, 'greet');
      return 'greet listed and filled in';
    }
    case 'resources': {
      const uris = await d.listResources();
      expect(uris.includes(NOTE_URI), `resources/list: ${JSON.stringify(uris)}`);
      same(await d.readResource(NOTE_URI), 'hello', 'read');
      return `${NOTE_URI} listed and read`;
    }
    case 'elicitation': {
      d.asked.length = 0;
      const text = await d.call('ask_name');
      expect(text.startsWith(`Hello, ${NAME}!`), `ask_name answered ${JSON.stringify(text)}`);
      same(d.asked, ['elicitation: What is your name?'], 'input requests answered');
      return text;
    }
    case 'sampling': {
      d.asked.length = 0;
      same(await d.call('sample'), `model said ${MODEL_ANSWER}`, 'sample');
      same(d.asked, ['sampling'], 'input requests answered');
      return `model said ${MODEL_ANSWER}`;
    }
    case 'roots': {
      d.asked.length = 0;
      same(await d.call('list_roots'), `roots ${ROOTS[0]!.uri}`, 'list_roots');
      same(d.asked, ['roots'], 'input requests answered');
      return `roots ${ROOTS[0]!.uri}`;
    }
    case 'logs': {
      d.logs.length = 0;
      // On the modern wire a request without a logLevel gets no logs; its logs would come before its answer.
      const modern = eraOf(d) === 'modern';
      if (modern) same(await d.call('work', { steps: 3 }), 'did 3 steps', 'work without a level');
      await d.setLogLevel('info');
      same(await d.call('work', { steps: 3 }), 'did 3 steps', 'work');
      // The two info logs bracket the debug one on the same stream: once the last is in, a leaked debug log would be too.
      await waitFor(() => d.logs.some((l) => l.data === 'step 3'), 10_000);
      same(
        d.logs,
        [
          { level: 'info', data: 'step 1' },
          { level: 'info', data: 'step 3' },
        ],
        'logs',
      );
      return modern ? 'none without a level, then info logs only' : 'info logs only';
    }
    case 'progress': {
      const seen: number[] = [];
      same(await d.call('work', { steps: 3 }, { onprogress: (p) => seen.push(p) }), 'did 3 steps', 'work');
      await waitFor(() => seen.length >= 3, 10_000);
      same(seen, [1, 2, 3], 'progress');
      return 'progress 1, 2, 3';
    }
    case 'subscription': {
      d.updates.length = 0;
      const leave = await d.subscribe(NOTE_URI);
      try {
        await d.call('touch', { uri: NOTE_URI });
        expect(await waitFor(() => d.updates.includes(NOTE_URI), 10_000), 'no notifications/resources/updated arrived');
      } finally {
        await leave();
      }
      return 'update delivered';
    }
    case 'cancellation': {
      const before = Number(await d.call('cancellations'));
      const abort = new AbortController();
      const outcome = await d
        .call('wait', {}, { signal: abort.signal, onprogress: () => abort.abort(new Error('cancelled by the matrix client')) })
        .then(
          (text) => ({ answered: text }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        );
      expect('error' in outcome, `the call was answered: ${JSON.stringify(outcome)}`);
      // The server may learn of the cancellation a moment after the client stopped waiting.
      let after = before;
      for (const deadline = Date.now() + 10_000; after === before && Date.now() < deadline; ) {
        await sleep(50);
        after = Number(await d.call('cancellations'));
      }
      same(after - before, 1, 'cancellations the server saw');
      return 'the call ended and the server saw it';
    }
  }
}
