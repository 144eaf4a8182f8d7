/**
 * Runs fuzz properties with fast-check and reports in one shape: how many cases ran, and on failure
 * the counterexample with the seed and path that replay it. Also the process-level trap: an
 * unhandled rejection or an uncaught exception anywhere during a run fails it.
 */
import fc from 'fast-check';

/** Seed, case count and replay path of one run of a property. */
export interface RunOptions {
  readonly runs: number;
  readonly seed: number;
  /** A counterexample path printed by an earlier failure (with the same seed). */
  readonly path?: string;
  /**
   * No shrinking: for targets that keep state between cases (a wrap), where a leak left by one case
   * would make every smaller case fail too and shrinking would only hide the case that leaked.
   */
  readonly noShrink?: boolean;
}

/** What a fuzz target reports. */
export interface FuzzReport {
  readonly target: string;
  readonly cases: number;
  readonly ms: number;
}

/** The seed from `FUZZ_SEED`, or a fresh one. */
export function seedFromEnv(): number {
  const raw = process.env['FUZZ_SEED'];
  return raw !== undefined && raw.trim() !== '' ? Number(raw) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
}

/**
 * Checks a property; throws with the counterexample, the seed and the path on failure. Returns
 * the number of cases run.
 */
export async function checkProperty<T>(
  target: string,
  property: fc.IAsyncProperty<T> | fc.IProperty<T>,
  options: RunOptions,
): Promise<number> {
  const details = await fc.check(property as fc.IAsyncProperty<T>, {
    numRuns: options.runs,
    seed: options.seed,
    ...(options.path ? { path: options.path } : {}),
    ...(options.noShrink ? { endOnFailure: true } : {}),
  });
  if (details.failed) {
    const replay = `FUZZ_SEED=${options.seed} FUZZ_TARGET=${target}${details.counterexamplePath ? ` FUZZ_PATH=${details.counterexamplePath}` : ''} npm run fuzz`;
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(`${target}: ${cause}\n${fc.defaultReportMessage(details) ?? 'failed'}\nReplay with: ${replay}`);
  }
  return details.numRuns;
}

/** Collects unhandled rejections and uncaught exceptions until released. */
export interface ProcessTrap {
  readonly fired: readonly string[];
  release(): void;
}

export function trapProcessErrors(): ProcessTrap {
  const fired: string[] = [];
  const onRejection = (reason: unknown) =>
    fired.push(`unhandledRejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`);
  const onException = (error: Error) => fired.push(`uncaughtException: ${error.stack ?? error.message}`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    fired,
    release() {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
}

/** Resolves with `work`'s value, or rejects when it has not settled within `ms` (a hang). */
export async function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no outcome within ${ms} ms (a hang)`)), ms);
  });
  try {
    return await Promise.race([work, hang]);
  } finally {
    clearTimeout(timer);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Live timers keeping the event loop alive (unreferenced ones are not counted). */
export function liveTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/** Polls `idle` for up to `ms` (the wrap finishes its bookkeeping a few turns after it answers). */
export async function settle(idle: () => boolean, ms = 2000): Promise<boolean> {
  for (let waited = 0; !idle() && waited < ms; waited += 5) await sleep(5);
  return idle();
}
