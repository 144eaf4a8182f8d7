/**
 * What examples/start.mjs (`npm start`) decides before it loads anything else: whether its
 * arguments name a command, and whether the checkout's build is fresh enough to run.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The newest modification time of the files under `dir` whose names end with `suffix`. */
function newest(dir, suffix) {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) time = Math.max(time, newest(path, suffix));
    else if (entry.name.endsWith(suffix)) time = Math.max(time, statSync(path).mtimeMs);
  }
  return time;
}

/** `compiled` when `root` holds a build newer than every source file, else `source`. */
export function startTarget(root) {
  const built = resolve(root, 'dist/cli/main.js');
  if (!existsSync(built)) return 'source';
  return newest(resolve(root, 'dist'), '.js') >= newest(resolve(root, 'lib'), '.ts') ? 'compiled' : 'source';
}

/** Whether `args` name a command (or ask for the help or version) rather than options of the example. */
export function namesCommand(args) {
  const first = args[0];
  return first !== undefined && (!first.startsWith('-') || ['--help', '-h', '--version', '-v'].includes(first));
}
