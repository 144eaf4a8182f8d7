/**
 * The endpoint a `serve` process says it serves at (its `serving … at <url>` line on stderr), once
 * it says so; rejects if it exits first, or (with `boundMs`) once that passed, killing it then.
 * `log()` gives what it has said on stderr so far.
 */
import type { ChildProcess } from 'node:child_process';

export interface Serving {
  readonly url: Promise<string>;
  log(): string;
}

export function servingUrl(child: ChildProcess, boundMs?: number): Serving {
  let log = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const url = new Promise<string>((resolveUrl, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      log += c.toString();
      const m = /serving .* at (http:\/\/[^\s"]+)/.exec(log);
      if (m) resolveUrl(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${log}`)));
    if (boundMs !== undefined) {
      timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`it did not say where it serves within ${boundMs / 1000} s: ${log}`));
      }, boundMs);
    }
  }).finally(() => clearTimeout(timer));
  return { url, log: () => log };
}
