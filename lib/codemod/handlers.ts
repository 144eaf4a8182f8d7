/**
 * The request handlers native mode works in: tools, prompts and resources registered on an
 * `McpServer` (`registerTool`, `registerPrompt`, `registerResource`) and `setRequestHandler` for
 * `tools/call`, `prompts/get` and `resources/read`; where each takes its context (`ctx`), and the
 * edit that adds that parameter when a handler does not take it.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { propertyOf, stringValue, walk, type FileRewrite } from './fileRewrite.ts';
import { MRTR_METHODS, type MrtrMethod } from '../core/modern/methods.ts';

/** A handler, and where its context parameter is. */
export interface Handler {
  readonly fn: TS.FunctionLikeDeclaration;
  /** Index of the context parameter (`ctx`) in the handler's parameters. */
  readonly ctxIndex: number;
  /** Placeholder names for parameters before the context, if they must be added. */
  readonly before: readonly string[];
}

/** The SDK's request schema for each method that may carry MRTR (what `setRequestHandler` is given). */
const SDK_REQUEST_SCHEMAS: Readonly<Record<MrtrMethod, string>> = {
  'tools/call': 'CallToolRequestSchema',
  'prompts/get': 'GetPromptRequestSchema',
  'resources/read': 'ReadResourceRequestSchema',
};

/** A handler is registered for an MRTR method by its name (`registerTool`…) or by the SDK's schema. */
const MRTR_REQUESTS = new Set<string>([...MRTR_METHODS, ...MRTR_METHODS.map((m) => SDK_REQUEST_SCHEMAS[m])]);

/** The function a registration call was given as its handler (inline, or declared in this file). */
function handlerFunction(f: FileRewrite, arg: TS.Expression | undefined): TS.FunctionLikeDeclaration | undefined {
  if (!arg) return undefined;
  if (ts.isArrowFunction(arg) || ts.isFunctionExpression(arg)) return arg;
  if (!ts.isIdentifier(arg)) return undefined;
  const decl = f.declarationOf(arg);
  if (decl && ts.isFunctionDeclaration(decl)) return decl;
  if (
    decl &&
    ts.isVariableDeclaration(decl) &&
    decl.initializer &&
    (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer))
  )
    return decl.initializer;
  return undefined;
}

/** The request method a `setRequestHandler` call names (a method string or a v1 schema name). */
export function requestMethodOf(arg: TS.Expression | undefined): string | undefined {
  if (!arg) return undefined;
  return stringValue(arg) ?? (ts.isIdentifier(arg) ? arg.text : ts.isPropertyAccessExpression(arg) ? arg.name.text : undefined);
}

/** Every tool, prompt and resource handler in the file, with where its context parameter goes. */
export function findHandlers(f: FileRewrite): Handler[] {
  const out: Handler[] = [];
  walk(f.sf, (node) => {
    if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return;
    const method = node.expression.name.text;
    const args = node.arguments;
    const last = args[args.length - 1];
    const fn = handlerFunction(f, last);
    if (method === 'setRequestHandler') {
      const requested = requestMethodOf(args[0]);
      if (requested && MRTR_REQUESTS.has(requested) && fn) out.push({ fn, ctxIndex: 1, before: ['_request'] });
      return;
    }
    if (!fn) return;
    const config = args[1];
    if (method === 'registerTool' || method === 'registerPrompt') {
      if (args.length !== 3) return;
      const schema = method === 'registerTool' ? 'inputSchema' : 'argsSchema';
      const withArgs =
        config && ts.isObjectLiteralExpression(config) ? propertyOf(config, schema) !== undefined : fn.parameters.length >= 2;
      out.push({ fn, ctxIndex: withArgs ? 1 : 0, before: withArgs ? ['_args'] : [] });
    } else if (method === 'registerResource' && args.length === 4) {
      const template =
        ts.isNewExpression(args[1]!) && ts.isIdentifier(args[1].expression) && args[1].expression.text === 'ResourceTemplate';
      out.push({ fn, ctxIndex: template ? 2 : 1, before: template ? ['_uri', '_variables'] : ['_uri'] });
    }
  });
  return out;
}

/** The handler's context parameter, added when the handler does not take it; null when it cannot be named. */
export function ensureContext(f: FileRewrite, h: Handler): string | null {
  const params = h.fn.parameters;
  const existing = params[h.ctxIndex];
  if (existing) return ts.isIdentifier(existing.name) ? existing.name.text : null;
  const taken = new Set<string>();
  walk(h.fn, (n) => {
    if (ts.isIdentifier(n)) taken.add(n.text);
  });
  const name = ['ctx', 'context', 'mcpCtx'].find((n) => !taken.has(n)) ?? 'mcpContext';
  const added = [...h.before.slice(params.length), name];
  const open = h.fn.getChildren(f.sf).find((c) => c.kind === ts.SyntaxKind.OpenParenToken);
  if (!open) {
    // `x => …`: a single parameter without parentheses.
    const only = params[0]!;
    f.replace(only, `(${only.getText(f.sf)}, ${added.join(', ')})`);
  } else if (params.length === 0) f.edit(open.getEnd(), open.getEnd(), added.join(', '));
  else f.edit(params[params.length - 1]!.getEnd(), params[params.length - 1]!.getEnd(), `, ${added.join(', ')}`);
  return name;
}
