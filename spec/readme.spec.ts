/**
 * The README's TypeScript snippets that use this package type-check as a user would write them:
 * each ```ts block of README.md importing from `mcp-dual-era…` is compiled with tsc against the
 * real SDKs it names (v1 `@modelcontextprotocol/sdk`, v2 `@modelcontextprotocol/client`) and this
 * package's sources, strict, NodeNext, with `exactOptionalPropertyTypes` on and off, and must give
 * no diagnostic: no cast is needed to hand our transports to an SDK client. The blocks are read
 * from the README each run, so the README and this spec cannot drift. Not a check of the prose.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { packageSnippets } from './helpers/readme.ts';
import { typecheck } from './helpers/typecheck.ts';

/** What the snippets use without declaring: a user's own values, named as the README names them. */
const PRELUDE = `
declare const modernRequest: import('mcp-dual-era').JsonRpcRequest;
declare const legacyResult: Record<string, unknown>;
declare const serverInfo: { name: string; version: string };
declare function respond(message: import('mcp-dual-era').JsonRpcError, status?: number): void;
declare function send(message: import('mcp-dual-era').JsonRpcRequest): void;
declare const errorResponse: typeof import('mcp-dual-era/core').errorResponse;
`;

const snippets = packageSnippets();
/** Each snippet as a file named after its line in the README, beside the prelude. */
const files = Object.fromEntries([
  ['prelude.d.ts', PRELUDE],
  ...snippets.map((s) => [`${s.file.replace(/[/.]/g, '-')}-line-${s.line}.ts`, s.code]),
]);

const t = suite("the README's TypeScript snippets");

t('should find the snippets that hand our transports to the v1 and the v2 SDK client', () => {
  assert.ok(snippets.length >= 4, `${snippets.length} snippets`);
  assert.ok(
    snippets.some(
      (s) => s.code.includes("from '@modelcontextprotocol/sdk/client/index.js'") && /client\.connect\(wrapLegacyClient\(/.test(s.code),
    ),
    'wrapLegacyClient handed to a v1 Client',
  );
  assert.ok(
    snippets.some((s) => s.code.includes("from '@modelcontextprotocol/client'") && /client\.connect\(wrapModernClient\(/.test(s.code)),
    'wrapModernClient handed to a v2 Client',
  );
});

t('should type-check with exactOptionalPropertyTypes on, without a diagnostic', () => {
  assert.equal(typecheck(files, true), []);
});

t('should type-check with exactOptionalPropertyTypes off, without a diagnostic', () => {
  assert.equal(typecheck(files, false), []);
});

t.run();
