/**
 * Starting MRTR measurements: each in a fresh `node --expose-gc` running bench/mrtr/child.ts
 * (compiled by the shared build step, or under the tsx loader), with a deadline; what it wrote
 * comes back as a value, a failure as a message. The parent's side only.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_DIR, transpile } from '../shared/build.ts';

const root = join(import.meta.dirname, '..', '..');
const CHILD_SOURCE = join('bench', 'mrtr', 'child.ts');

/** What a child gave back. */
export interface Spawned<T> {
  readonly ok: boolean;
  readonly result?: T;
  readonly error?: string;
}

/** Where the library under measurement is: a folder and the extension of its modules. */
export interface LibLocation {
  readonly dir: string;
  readonly ext: string;
}

let childSeq = 0;

/** The child script as JavaScript (and what it imports), built once per run. */
export function buildChild(): string {
  return transpile(CHILD_SOURCE);
}

/** Runs one measurement (`args`: the child's own options) and returns what it wrote. */
export function child<T>(args: readonly string[], options: { tsx?: boolean; timeoutMs: number; lib: LibLocation }): Promise<Spawned<T>> {
  mkdirSync(BUILD_DIR, { recursive: true });
  const out = join(BUILD_DIR, `mrtr-child-${process.pid}-${++childSeq}.json`);
  const script = options.tsx ? join(root, CHILD_SOURCE) : buildChild();
  const nodeArgs = [
    '--expose-gc',
    ...(options.tsx ? ['--import', 'tsx'] : []),
    script,
    ...args,
    `--libdir=${options.lib.dir}`,
    `--ext=${options.lib.ext}`,
    `--out=${out}`,
    `--loader=${options.tsx ? 'tsx' : 'node'}`,
  ];
  return new Promise((done) => {
    const proc = spawn(process.execPath, nodeArgs, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      try {
        if (code !== 0) throw new Error(signal ? `killed by ${signal}` : `exit code ${code}`);
        done({ ok: true, result: JSON.parse(readFileSync(out, 'utf8')) as T });
      } catch (e) {
        done({ ok: false, error: `${args.join(' ')}: ${e instanceof Error ? e.message : String(e)}` });
      } finally {
        rmSync(out, { force: true });
      }
    });
  });
}
