/**
 * The two settings of the tasks bench, each with one task started and left `working` while it is
 * polled (cancelled at the end):
 *
 * - one process: `wrapLegacyServer` served by Node's HTTP server (`serveNodeHttp`, as `serve` runs
 *   it) in front of the legacy conformance fixture in the same process; `tasks/get` of the task
 *   against a plain `greet` call, in turn;
 * - a fleet: the task started on replica A; `tasks/get` sent to replica B (forwarded to A, which
 *   the task's id names), a plain call to B, `tasks/get` sent to A itself, a plain call to A, in turn.
 */
import type { Lib } from '../mrtr/scenario.ts';
import type { Wrong } from '../mrtr/requests.ts';
import { measureRounds, type Kind, type PollCell } from './polls.ts';
import { cancelTask, checkGreeting, checkWorking, plainCall, pollTask, startTask, taskIdOf, type Send } from './wire.ts';

/** How long the polled task works: longer than any run polls it. */
const TASK_SECONDS = 3600;

export interface Counts {
  readonly warm: number;
  readonly rounds: number;
}

/** Starts the task that is polled, through `send`; its id, or throws. */
async function started(send: Send, nextId: () => number): Promise<string> {
  const id = nextId();
  const got = taskIdOf(await send(startTask(id, TASK_SECONDS)), id);
  if ('wrong' in got) throw new Error(`starting the task: ${got.wrong}`);
  return got.taskId;
}

/** Cancels it (its server stops working on it); what went wrong, if anything. */
async function cancelled(send: Send, taskId: string, nextId: () => number, wrong: Wrong): Promise<void> {
  const id = nextId();
  const answer = await send(cancelTask(id, taskId));
  if (typeof answer === 'string' || !('result' in answer)) wrong.add(`cancel ${taskId}: ${JSON.stringify(answer).slice(0, 160)}`);
}

const poll = (key: string, send: Send, taskId: string): Kind => ({
  key,
  send,
  request: (id) => pollTask(id, taskId),
  check: (a, id) => checkWorking(a, id, taskId),
});

const plain = (key: string, send: Send): Kind => ({
  key,
  send,
  request: (id) => plainCall(id, `n${id}`),
  check: (a, id) => checkGreeting(a, id, `n${id}`),
});

/** The keys of the kinds measured in each setting. */
export const KINDS = {
  oneProcess: { poll: 'poll', plain: 'plain' },
  fleet: { forwarded: 'forwardedPoll', plainB: 'plainOnB', local: 'localPoll', plainA: 'plainOnA' },
} as const;

/** One process: the wrap over Node's HTTP server, in front of `upstream` (a legacy server in this process). */
export async function oneProcess(
  lib: Lib,
  upstream: Parameters<Lib['wrapLegacyServer']>[0]['upstream'],
  endpoint: (url: URL) => { send: Send; close(): void },
  counts: Counts,
  nextId: () => number,
  wrong: Wrong,
): Promise<PollCell> {
  const wrap = lib.wrapLegacyServer({ upstream });
  const running = await lib.serveNodeHttp(wrap, { port: 0 });
  const caller = endpoint(new URL('/mcp', running.origin));
  try {
    const taskId = await started(caller.send, nextId);
    const k = KINDS.oneProcess;
    const cell = await measureRounds(
      [poll(k.poll, caller.send, taskId), plain(k.plain, caller.send)],
      [[k.poll, k.plain, 'tasks/get ÷ plain call, one process']],
      counts,
      nextId,
      wrong,
    );
    await cancelled(caller.send, taskId, nextId, wrong);
    return cell;
  } finally {
    caller.close();
    await running.close();
    await wrap.close();
  }
}

/** A fleet: the task on replica A, polled through B (forwarded) and on A, plain calls to both. */
export async function fleet(a: Send, b: Send, counts: Counts, nextId: () => number, wrong: Wrong): Promise<PollCell> {
  const taskId = await started(a, nextId);
  const k = KINDS.fleet;
  const cell = await measureRounds(
    [poll(k.forwarded, b, taskId), plain(k.plainB, b), poll(k.local, a, taskId), plain(k.plainA, a)],
    [
      [k.forwarded, k.plainB, 'forwarded tasks/get ÷ plain call, fleet'],
      [k.forwarded, k.local, 'forwarded tasks/get ÷ local tasks/get, fleet'],
      [k.local, k.plainA, 'tasks/get ÷ plain call, fleet replica'],
    ],
    counts,
    nextId,
    wrong,
  );
  await cancelled(a, taskId, nextId, wrong);
  return cell;
}
