// Node's fs plus `globSync` for the `**/<name>` patterns the conformance suite uses (Node 20 has
// no fs.globSync). Other patterns are refused loudly rather than answered wrongly.
import fs from 'node:fs';
import { join, relative } from 'node:path';

export * from 'node:fs';
export default fs;

export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const m = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern);
  if (!m) throw new Error(`globSync stand-in: unsupported pattern ${pattern}`);
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === m[1]) out.push(relative(cwd, path));
    }
  };
  if (fs.existsSync(cwd)) walk(cwd);
  return out;
}
