/**
 * The TypeScript compiler, loaded with `require`: importing it as an ES module makes Node scan its
 * 9 MB of CommonJS for named exports first, which costs about a second of CPU on every run.
 */
import { createRequire } from 'node:module';
import type * as TS from 'typescript';

export const ts: typeof TS = createRequire(import.meta.url)('typescript');
