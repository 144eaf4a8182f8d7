/**
 * Every codemod output fixture type-checks against the real SDK it targets: wrap-mode outputs
 * against the v1 SDK (@modelcontextprotocol/sdk) and this package's sources, native-mode outputs
 * against the v2 SDK (@modelcontextprotocol/server), with strict user settings; JavaScript outputs
 * are checked too (checkJs). Express ships no types in this checkout: a declaration of the part
 * the fixtures use stands in for @types/express (its Request is an IncomingMessage, its Response a
 * ServerResponse, as there), so handing Express's req and res to the wrap is checked too.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type * as TS from 'typescript';
import { ts } from '../../lib/codemod/typescript.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../helpers/everything.ts';

const FIXTURES = resolve(ROOT, 'fixtures/codemod');
const UNTYPED = join(FIXTURES, '__express__.d.ts');
const EXPRESS = `
declare module 'express' {
  import type { IncomingMessage, Server, ServerResponse } from 'node:http';
  namespace express {
    interface Request extends IncomingMessage { body?: any; query: Record<string, unknown>; params: Record<string, string> }
    interface Response extends ServerResponse { status(code: number): Response; json(body: unknown): Response; send(body?: unknown): Response }
    type Handler = (req: Request, res: Response, next: (error?: unknown) => void) => unknown;
    interface Application {
      (req: IncomingMessage, res: ServerResponse): void;
      use(...handlers: unknown[]): Application;
      get(path: string, ...handlers: Handler[]): Application;
      post(path: string, ...handlers: Handler[]): Application;
      delete(path: string, ...handlers: Handler[]): Application;
      all(path: string, ...handlers: Handler[]): Application;
      listen(port?: number | string, callback?: () => void): Server;
    }
    function json(): Handler;
  }
  function express(): express.Application;
  export = express;
}
declare module 'cors' {
  function cors(options?: Record<string, unknown>): (req: unknown, res: unknown, next: () => void) => void;
  export = cors;
}
`;

const outputs = readdirSync(FIXTURES)
  .filter((name) => /\.output\.\w+$/.test(name))
  .map((name) => join(FIXTURES, name));

const options: TS.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  skipLibCheck: true,
  noEmit: true,
  allowJs: true,
  checkJs: true,
  types: ['node'],
  // This package as a user gets it, from its sources (its own files use .ts specifiers).
  allowImportingTsExtensions: true,
  baseUrl: ROOT,
  paths: { 'mcp-dual-era': ['lib/index.ts'], 'mcp-dual-era/*': ['lib/*.ts'] },
};

const t = suite('codemod outputs type-check');

t('should find output fixtures of both modes, TypeScript and JavaScript', () => {
  assert.ok(outputs.some((o) => /\/wrap-[^/]+\.ts$/.test(o)));
  assert.ok(outputs.some((o) => /\/native-[^/]+\.ts$/.test(o)));
  assert.ok(outputs.some((o) => /\.(c?js)$/.test(o)));
});

t('should type-check every output against the SDK it targets, without a diagnostic', () => {
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, onError, create) =>
    name === UNTYPED ? ts.createSourceFile(name, EXPRESS, version) : getSourceFile(name, version, onError, create);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === UNTYPED || fileExists(name);
  const program = ts.createProgram({ rootNames: [...outputs, UNTYPED], options, host });
  // The outputs' own diagnostics (this package's sources are checked by `npm run typecheck`).
  const diagnostics = outputs.flatMap((file) => {
    const sf = program.getSourceFile(file)!;
    return [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
  });
  const text = diagnostics.map((d) => {
    const { line, character } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
    return `${d.file!.fileName.slice(FIXTURES.length + 1)}:${line + 1}:${character + 1} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  assert.equal(text, []);
});

t.run();
