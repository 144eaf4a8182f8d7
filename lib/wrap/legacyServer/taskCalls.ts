/**
 * The task-run calls of a legacy server that runs tools as tasks (2025-11-25 core tasks), on the
 * modern dispatch's path: `tasks/*` served from the wrap's tasks (`serveTaskMethod`), which way a
 * `tools/call` goes (`taskRouteOf`), a call made a task of the caller's (`startRefusal`, kept by
 * `toolTasks.ts` once the server created it), and a call run as a task to its end for a caller without the tasks extension
 * (`runToEnd`), or refused to it (`extensionRefusal`) when the wrap is told to.
 */
import { ErrorCode, missingCapability } from '../../core/errors.ts';
import type { JsonRpcRequest } from '../../core/jsonrpc.ts';
import { TASKS_EXTENSION } from '../../core/modern/capabilities.ts';
import { isTaskMethod } from '../../core/modern/methods.ts';
import { isRecord, type JsonObject } from '../../core/primitives.ts';
import type { Envelope } from '../../core/translate/envelope.ts';
import { readLegacyTask } from '../../core/translate/tasks.ts';
import { errorAnswer, type Answer, type ModernContext } from '../../fronts/served.ts';
import type { CallHooks, RpcOutcome } from '../../session/callHooks.ts';
import type { UpstreamSession } from '../../session/upstreamSession.ts';
import { DEFAULTS } from '../../util/defaults.ts';
import type { ModernDispatchOptions } from './dispatchOptions.ts';
import { declaresTasks, type PendingRequest } from './modernRequest.ts';
import { unmarked } from './taskResults.ts';
import { limitAnswer } from '../../util/limits.ts';

/**
 * Serves `tasks/get`, `tasks/update` and `tasks/cancel` from the wrap's tasks, once the server was
 * seen to run tools as tasks (`ToolTasks.offered`); `undefined` for any other request, or before.
 */
export function serveTaskMethod(
  request: JsonRpcRequest,
  ctx: ModernContext,
  envelope: Envelope,
  options: ModernDispatchOptions,
): Promise<Answer> | undefined {
  if (!options.tasks?.offered || !isTaskMethod(request.method)) return undefined;
  if (!declaresTasks(envelope)) return Promise.resolve(extensionRefusal(request, request.method));
  return options.tasks.serve(request, ctx.principal, options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
}

/** `-32021` naming the tasks extension, for a request (`what`) that needs it and did not declare it. */
export function extensionRefusal(request: JsonRpcRequest, what: string): Answer {
  return errorAnswer(
    request.id,
    missingCapability(
      { extensions: { [TASKS_EXTENSION]: {} } },
      `Missing required client capability: ${what} needs the tasks extension (${TASKS_EXTENSION})`,
    ),
  );
}

/**
 * A `tools/call` on a server that runs tools as tasks: a tool it runs only as a task (`required`), or
 * may (`optional`) for a caller that can poll one, becomes a task for a caller that declares the
 * extension (`start`, see `startRefusal`); for one that does not, a `required` tool runs as a task to its
 * end and answers as a call (`task`, see `runToEnd`), or, when the wrap's tasks say so
 * (`TaskLimits.withoutExtension`), is refused (`refuse`, see `extensionRefusal`). Any other call is
 * sent as it is (`plain`).
 */
export async function taskRouteOf(r: PendingRequest, session: UpstreamSession): Promise<'start' | 'task' | 'refuse' | 'plain'> {
  const name = r.up.request.params?.['name'];
  const support = typeof name === 'string' ? await r.options.tools?.taskSupportOf(session, name).catch(() => undefined) : undefined;
  const polls = declaresTasks(r.up.envelope);
  if (support === 'required' && !polls && r.options.tasks?.refusesWithoutExtension) return 'refuse';
  if (support === 'required' || (support === 'optional' && polls)) return polls ? 'start' : 'task';
  return 'plain';
}

/**
 * The refusal of a call that would be made a task of the caller's, when the caller has as many
 * running as it may: answered before anything is sent. (A call made a task is sent as any call
 * that may push, `params.task` added: what the server asks before it creates the task is a round
 * of the call, and the task it creates becomes the caller's as the call is answered, `finisher`.)
 */
export function startRefusal(r: PendingRequest): Answer | undefined {
  const refusal = r.options.tasks?.refusal(r.ctx.principal);
  return refusal ? limitAnswer(refusal, r.request.id) : undefined;
}

/** `tools/call` params asking the server to run the call as a task. */
export function withTask(params: JsonObject | undefined): JsonObject {
  return { ...(params ?? {}), task: {} };
}

/**
 * A call to a tool the server runs only as a task, for a caller without the tasks extension: the
 * task is created (`create`, with `params.task`) and followed to its end with `tasks/result`, whose
 * answer is the call's; the server's pushes for the task are the call's own (MRTR rounds), and a
 * call cancelled cancels the task.
 */
export function runToEnd(
  session: UpstreamSession,
  create: (hooks: CallHooks) => Promise<RpcOutcome>,
): (hooks: CallHooks) => Promise<RpcOutcome> {
  return async (hooks) => {
    let cancelled = hooks.signal?.aborted ?? false;
    let taskId: string | undefined;
    let current: (() => void) | undefined;
    const cancelTask = (): void => {
      cancelled = true;
      current?.();
      if (taskId !== undefined) void session.call('tasks/cancel', { taskId }, { pushable: false });
    };
    hooks.signal?.addEventListener('abort', cancelTask, { once: true });
    hooks.onCancel?.(cancelTask);
    const through: CallHooks = {
      pushable: true,
      onCancel: (cancel) => {
        current = cancel;
        if (cancelled) cancel();
      },
      ...(hooks.onProgress ? { onProgress: (params: JsonObject) => hooks.onProgress!(params) } : {}),
      ...(hooks.onLog ? { onLog: (params: JsonObject) => hooks.onLog!(params) } : {}),
      ...(hooks.onPush ? { onPush: (push: JsonRpcRequest, before?: boolean) => hooks.onPush!(push, before) } : {}),
      ...(hooks.onPushCancelled ? { onPushCancelled: (id: string | number) => hooks.onPushCancelled!(id) } : {}),
    };
    try {
      const created = await create(through);
      if ('error' in created || !isRecord(created.result['task'])) return created;
      const task = readLegacyTask(created.result['task']);
      if (!task.ok) return { error: task.error };
      taskId = task.value.taskId;
      if (cancelled) {
        cancelTask();
        return { error: { code: ErrorCode.InternalError, message: 'Request cancelled' } };
      }
      const outcome = await session.call('tasks/result', { taskId }, through);
      return 'result' in outcome ? { result: unmarked(outcome.result) } : outcome;
    } finally {
      hooks.signal?.removeEventListener('abort', cancelTask);
    }
  };
}
