#!/usr/bin/env node
/**
 * What `npm start` runs in a checkout. With a command (`npm start -- connect …`, `npm start -- help`)
 * it is the `mcp-dual-era` command: the compiled one in `dist/` when the build is newer than every
 * source file (as fast to start as an installed copy: hosts that wait a second or two for a
 * server's first answer get it), else the TypeScript source through tsx's loader. With no
 * arguments, or options only (`npm start -- --port 3021`), it serves the built-in example
 * (examples/start.ts).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { namesCommand, startTarget } from './startTarget.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
if (namesCommand(args) && startTarget(root) === 'compiled') {
  await import(pathToFileURL(resolve(root, 'dist/cli/main.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(resolve(root, 'examples/start.ts')).href);
}
