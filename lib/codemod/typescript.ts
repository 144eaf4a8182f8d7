/**
 * The TypeScript compiler, which only `migrate` (and the codemod entry point) uses: an optional
 * peer dependency, so that `serve` and `connect` users do not install it. Found where the
 * project has it (a TypeScript project does), loaded with `require`: importing it as an ES module
 * makes Node scan its 9 MB of CommonJS for named exports first, about a second of CPU on every run.
 */
import { createRequire } from 'node:module';
import type * as TS from 'typescript';

/** What to do when the compiler is not installed, said where `migrate` is run. */
export const TYPESCRIPT_MISSING =
  'the migration reads code with the TypeScript compiler, which is not installed here: add it to the project (npm install --save-dev typescript), or run it beside this command (npx -p typescript -p mcp-dual-era mcp-dual-era migrate …)';

function load(): typeof TS {
  try {
    return createRequire(import.meta.url)('typescript') as typeof TS;
  } catch (e) {
    if ((e as { code?: unknown }).code === 'MODULE_NOT_FOUND') throw new Error(TYPESCRIPT_MISSING);
    throw e;
  }
}

export const ts: typeof TS = load();
