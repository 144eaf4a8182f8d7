/**
 * A round holds every push of one turn of the server, over the pipes and streams people run it on,
 * under load: the conformance fixture's `test_input_required_result_multiple_inputs` (an elicitation,
 * a sampling request and `roots/list`, pushed at once with `Promise.all`, v1 SDK) through
 * `wrapLegacyServer`, with the fixture as a child process over stdio and over Streamable HTTP, many
 * callers at once with plain calls in between. Every first call must come back with all three
 * inputs in one `input_required` round (the broker ends a round once the server answered a `ping`
 * asked after its pushes), and every retry with the answers must finish the call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JsonRpcResponse } from '../../../lib/core/jsonrpc.ts';
import { httpBackend, stdioBackend, type Backend } from '../../../lib/session/backend.ts';
import { Cancellation } from '../../../lib/util/signals.ts';
import type { Answer } from '../../../lib/fronts/served.ts';
import { MrtrBroker } from '../../../lib/wrap/mrtr/suspend.ts';
import { wrapLegacyServer, type LegacyServerWrap } from '../../../lib/wrap/legacyServer/wrapLegacyServer.ts';
import { modernRequest } from '../../helpers/messages.ts';

const ROOT = join(import.meta.dirname, '../../..');
const FIXTURE = (name: string): string[] => ['--import', 'tsx', join(ROOT, 'fixtures/servers', name)];
const CAPS = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, sampling: {}, roots: {} } };
const KEYS = ['client_roots', 'greeting', 'user_name'];
/** Rounds each caller takes, and plain calls it makes between its rounds. */
const ROUNDS = 10;
const PLAIN = 2;

type Json = Record<string, unknown>;

const g = suite('round gathering under load');

/** The conformance fixture over Streamable HTTP, on a free port: its URL, and the child to stop. */
function startHttpFixture(): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, FIXTURE('conformanceHttp.ts'), {
      cwd: ROOT,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const url = /http:\/\/\S+\/mcp/.exec(out)?.[0];
      if (url) resolve({ url, child });
    });
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited (${code}) before listening`)));
  });
}

function resultOf(answer: Answer | undefined): Json {
  const message = answer && 'message' in answer ? (answer.message as JsonRpcResponse) : undefined;
  if (!message || !('result' in message)) throw new Error(`no result: ${JSON.stringify(answer).slice(0, 300)}`);
  return message.result as Json;
}

/** `callers` callers at once, each taking `ROUNDS` multiple-input rounds with plain calls between; the problems seen. */
async function load(wrap: LegacyServerWrap, callers: number): Promise<{ rounds: number; problems: string[] }> {
  const problems: string[] = [];
  let rounds = 0;
  let id = 0;
  // A caller refused for a limit (sessions are opened a few at a time: a stdio server is a process
  // to start) tries again shortly, as clients do on a 503.
  const serve = async (method: string, params: Json, principal: string): Promise<Answer | undefined> => {
    for (let attempt = 0; ; attempt++) {
      const answer = await wrap.serveModern(modernRequest(method, params, CAPS, ++id), {
        principal,
        signal: new Cancellation(),
        notify: () => {},
      });
      if (attempt < 200 && answer && 'status' in answer && answer.status === 503) await new Promise((r) => setTimeout(r, 25));
      else return answer;
    }
  };
  const caller = async (c: number): Promise<void> => {
    const principal = `caller-${c}`;
    for (let r = 0; r < ROUNDS; r++) {
      const name = `n${c}-${r}`;
      const first = resultOf(await serve('tools/call', { name: 'test_input_required_result_multiple_inputs', arguments: {} }, principal));
      const inputs = first['inputRequests'] as Json | undefined;
      const keys = Object.keys(inputs ?? {}).sort();
      if (first['resultType'] !== 'input_required' || keys.join() !== KEYS.join()) {
        problems.push(`${name}: first answer ${first['resultType']} with inputs [${keys.join(', ')}]`);
        continue;
      }
      const answers = {
        user_name: { action: 'accept', content: { name } },
        greeting: { role: 'assistant', content: { type: 'text', text: `hi ${name}` }, model: 'spec-model' },
        client_roots: { roots: [{ uri: `file:///w/${name}`, name: 'w' }] },
      };
      const done = resultOf(
        await serve(
          'tools/call',
          {
            name: 'test_input_required_result_multiple_inputs',
            arguments: {},
            inputResponses: answers,
            requestState: first['requestState'],
          },
          principal,
        ),
      );
      const text = (done['content'] as Array<{ text?: string }> | undefined)?.[0]?.text;
      const expected = `name=${name}; greeting=hi ${name}; roots=file:///w/${name} (w)`;
      if (done['resultType'] !== 'complete' || text !== expected) problems.push(`${name}: retry answered ${done['resultType']}: ${text}`);
      else rounds++;
      for (let p = 0; p < PLAIN; p++) {
        const plain = resultOf(await serve('tools/call', { name: 'test_simple_text', arguments: {} }, principal));
        if (plain['resultType'] !== 'complete') problems.push(`${name}: plain call answered ${plain['resultType']}`);
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, (_, c) => caller(c)));
  return { rounds, problems };
}

async function run(upstream: Backend, callers: number): Promise<void> {
  // The default bound (15 ms): a round sent at the bound would show up as a split round here.
  const wrap = wrapLegacyServer({ upstream, mrtr: new MrtrBroker() });
  try {
    const { rounds, problems } = await load(wrap, callers);
    assert.equal(problems.slice(0, 5), [], `${problems.length} problems`);
    assert.is(rounds, callers * ROUNDS);
  } finally {
    await wrap.close();
  }
}

// Each call parked on a round holds a server process of its own: 8 callers at once start 8.
g('should keep the three pushes of one turn in one round over stdio, 8 callers at once', async () => {
  await run(stdioBackend({ command: process.execPath, args: FIXTURE('conformanceStdio.ts'), cwd: ROOT, stderr: 'ignore' }), 8);
});

g('should keep the three pushes of one turn in one round over Streamable HTTP, 24 callers at once', async () => {
  const { url, child } = await startHttpFixture();
  try {
    await run(httpBackend({ url }), 24);
  } finally {
    child.kill();
  }
});

g.run();
