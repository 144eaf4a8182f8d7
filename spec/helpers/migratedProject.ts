/**
 * A throwaway project folder for running migrated code for real: it resolves `mcp-dual-era` (and
 * its subpaths) to this checkout's sources, and every other package from this checkout's
 * node_modules. Also the `migrate` command as a user runs it, and a program of the folder started
 * under tsx on a loopback port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { listeningPort, LOOPBACK_PRELOAD, ROOT } from './everything.ts';

export interface Project {
  readonly dir: string;
  /** Writes a file of the project (folders made as needed). */
  write(path: string, text: string): void;
  /** Copies a file or folder into the project. */
  copy(from: string, to: string): void;
  /** Removes the folder and stops every process started in it. */
  close(): void;
}

/** A new project folder with a package.json (`type: module` unless given). */
export function createProject(packageJson: Record<string, unknown> = { name: 'migrated', version: '1.0.0', type: 'module' }): Project {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-dual-era-migrate-'));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(packageJson, null, 2)}\n`);
  const modules = join(dir, 'node_modules');
  mkdirSync(modules);
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name !== 'mcp-dual-era') symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
  }
  // mcp-dual-era from this checkout's sources (run under tsx).
  const own = join(modules, 'mcp-dual-era');
  mkdirSync(own);
  symlinkSync(join(ROOT, 'lib'), join(own, 'lib'));
  const exports = {
    '.': './lib/index.ts',
    './server': './lib/server.ts',
    './client': './lib/client.ts',
    './core': './lib/core/index.ts',
    './codemod': './lib/codemod/index.ts',
  };
  writeFileSync(join(own, 'package.json'), JSON.stringify({ name: 'mcp-dual-era', type: 'module', exports }));
  return {
    dir,
    write(path, text) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    },
    copy(from, to) {
      cpSync(from, join(dir, to), { recursive: true });
    },
    close() {
      for (const child of started.get(dir) ?? []) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      started.delete(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const started = new Map<string, ChildProcess[]>();

/** What a finished command printed. */
export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node --import tsx <args>` in a folder until it exits (killed after `timeoutMs`). */
export function runTsx(args: readonly string[], cwd: string, timeoutMs = 30_000, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** `mcp-dual-era migrate <args>`, the command itself, run from `cwd`. */
export function migrateCli(args: readonly string[], cwd: string): Promise<Ran> {
  return runTsx([resolve(ROOT, 'lib/cli/main.ts'), 'migrate', ...args], cwd);
}

/**
 * Starts a program of the project that listens on `PORT` (given 0; bound to 127.0.0.1 by the
 * loopback preload) and resolves with its port once it listens.
 */
export async function startListening(project: Project, args: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, ['--import', LOOPBACK_PRELOAD, '--import', 'tsx', ...args], {
    cwd: project.dir,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.set(project.dir, [...(started.get(project.dir) ?? []), child]);
  return listeningPort(child, args.join(' '));
}
