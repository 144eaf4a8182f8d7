/**
 * The built command (`dist/cli/main.js`), for specs that time what a host sees of our start: an
 * installed copy runs compiled JavaScript, not the TypeScript loader. Built here when `dist/` is
 * missing or older than any source file (`npm ci` builds it once, through `prepare`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = resolve(ROOT, 'dist/cli/main.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    newest = Math.max(newest, stat.isDirectory() ? newestSource(path) : name.endsWith('.ts') ? stat.mtimeMs : 0);
  }
  return newest;
}

let checked = false;

/** The path of the compiled CLI, built first if it is missing or stale. */
export function builtCli(): string {
  if (checked) return CLI;
  const stale = !existsSync(CLI) || newestBuilt() < newestSource(resolve(ROOT, 'lib'));
  // The package's own build (npm run build), as an install runs it.
  if (stale) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  checked = true;
  return CLI;
}

/** The newest file the build wrote. */
function newestBuilt(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else if (name.endsWith('.js')) newest = Math.max(newest, stat.mtimeMs);
    }
  };
  walk(resolve(ROOT, 'dist'));
  return newest;
}
