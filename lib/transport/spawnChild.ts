/**
 * How a stdio server process is started (its environment, working directory and pipes), and one
 * process started ahead of the transport that will speak to it: a command that must answer its
 * host fast starts its server before it has loaded the rest of itself, and the first
 * `StdioChildTransport` started with the same command line, environment and directory takes that
 * process over. Only `node:child_process`: this module is loaded first of all.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** A process started ahead, and what happened to it before a transport took it. */
export interface StartedAhead {
  readonly child: ChildProcess;
  /** The spawn succeeded. */
  spawned: boolean;
  /** The spawn failed (the command was not found…). */
  error: Error | undefined;
  /** It exited already. */
  exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined;
  /** Lets its output flow to the listeners the taker adds (until then it is held in the pipes' buffers). */
  release(): void;
}

const hold = () => {};

/** What a child process is started from: the command line, its environment and its directory. */
export interface ChildCommand {
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the environment the child starts from (see `inheritEnv`). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * What the child's environment starts from: ours (`true`, the default), a basic one (`'basic'`:
   * the names in `BASIC_ENV`, such as `PATH` and `HOME`), or nothing (`false`).
   */
  readonly inheritEnv?: boolean | 'basic';
  /** Names of ours never passed on (our own secrets, such as the variable holding the requestState key). */
  readonly withholdEnv?: readonly string[];
  readonly cwd?: string;
}

let ahead: { readonly options: ChildCommand; readonly started: StartedAhead } | undefined;

/**
 * What a basic environment keeps of ours (`inheritEnv: 'basic'`): enough to find and run a
 * program and for it to find its user's files, nothing that configures anything else.
 */
export const BASIC_ENV: readonly string[] =
  process.platform === 'win32'
    ? [
        'APPDATA',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'TMP',
        'USERNAME',
        'USERPROFILE',
        'WINDIR',
      ]
    : ['HOME', 'LANG', 'LC_ALL', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'TMPDIR', 'USER'];

/** The environment a server process starts with: ours (all, basic or none), less what is withheld, plus `env`. */
export function childEnv(o: Pick<ChildCommand, 'env' | 'inheritEnv' | 'withholdEnv'>): Record<string, string> {
  const env: Record<string, string> = {};
  if (o.inheritEnv !== false) {
    const names = o.inheritEnv === 'basic' ? BASIC_ENV : Object.keys(process.env);
    for (const name of names) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
  }
  // Withheld from ours only: what the caller gives in `env` is the caller's to give.
  for (const name of o.withholdEnv ?? []) delete env[name];
  return { ...env, ...o.env };
}

/** Starts a server process as `StdioChildTransport` does. */
export function spawnChild(o: ChildCommand): ChildProcess {
  return spawn(o.command, [...(o.args ?? [])], { env: childEnv(o), cwd: o.cwd, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
}

function sameEnv(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const x = Object.entries(a ?? {});
  return x.length === Object.keys(b ?? {}).length && x.every(([k, v]) => b?.[k] === v);
}

/** Whether two option sets start the same process. */
function sameProcess(a: ChildCommand, b: ChildCommand): boolean {
  const args = a.args ?? [];
  const other = b.args ?? [];
  const withheld = (o: ChildCommand) => [...(o.withholdEnv ?? [])].sort().join('\u0000');
  return (
    a.command === b.command &&
    args.length === other.length &&
    args.every((x, i) => x === other[i]) &&
    a.cwd === b.cwd &&
    (a.inheritEnv ?? true) === (b.inheritEnv ?? true) &&
    withheld(a) === withheld(b) &&
    sameEnv(a.env, b.env)
  );
}

/**
 * Starts the server process of `options` now, for the first transport that starts the same
 * process (at most one waits at a time; another call replaces it). Its output waits in its pipes.
 * If no transport takes it, it is stopped when this process exits.
 */
export function startAhead(options: ChildCommand): void {
  if (ahead && sameProcess(ahead.options, options)) return;
  ahead?.started.child.kill('SIGTERM');
  const child = spawnChild(options);
  // Held, not read: with a 'readable' listener and no read(), what the process writes stays in the
  // streams' buffers (and Node does not drop it when the process exits, as it does for streams
  // nobody listens to). Removing the listeners lets it flow to the taker's 'data' listeners.
  child.stdout!.on('readable', hold);
  child.stderr!.on('readable', hold);
  const started: StartedAhead = {
    child,
    spawned: false,
    error: undefined,
    exit: undefined,
    release() {
      child.stdout!.removeListener('readable', hold);
      child.stderr!.removeListener('readable', hold);
    },
  };
  child.once('spawn', () => (started.spawned = true));
  // Kept until a transport takes it: an 'error' without a listener would throw.
  child.once('error', (e) => (started.error = e));
  child.once('exit', (code, signal) => (started.exit = { code, signal }));
  process.once('exit', () => {
    if (ahead?.started === started) child.kill('SIGTERM');
  });
  ahead = { options, started };
}

/** Stops the process started ahead, if no transport took it (the command that started it ended without it). */
export function dropAhead(): void {
  const dropped = ahead;
  ahead = undefined;
  if (dropped && dropped.started.exit === undefined) dropped.started.child.kill('SIGTERM');
}

/** The process started ahead for these options, handed over once; `undefined` when there is none. */
export function takeAhead(options: ChildCommand): StartedAhead | undefined {
  if (!ahead || !sameProcess(ahead.options, options)) return undefined;
  const { started } = ahead;
  ahead = undefined;
  return started;
}
