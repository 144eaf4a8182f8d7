/**
 * Native mode: push-style server code rewritten into the 2026-07-28 idiom of the v2 SDK
 * (`@modelcontextprotocol/server`). A single awaited push in a tool, prompt or resource handler
 * becomes an `inputRequired(…)` return on the first pass and a read of `ctx.mcpReq.inputResponses`
 * on re-entry; `getClientCapabilities()` reads the request's envelope first; `sendLoggingMessage`
 * becomes the request's `ctx.mcpReq.log`. What cannot be rewritten safely is marked.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { indentAt, indentUnit, lineStart, newlineOf, quoteOf } from './edits.ts';
import { propertyOf, propertyValue, rootIdentifier, stringValue, walk, within, type FileRewrite } from './fileRewrite.ts';
import { isPureStatement } from './purity.ts';
import { importedClass } from './wiring.ts';

export const V2_SERVER = '@modelcontextprotocol/server';

type PushKind = 'elicit' | 'sampling' | 'roots' | 'ping';

interface Push {
  readonly call: TS.CallExpression;
  readonly kind: PushKind;
  /** The request's params expression, when the push has one. */
  readonly params?: TS.Expression;
}

interface Handler {
  readonly fn: TS.FunctionLikeDeclaration;
  /** Index of the context parameter (`ctx`) in the handler's parameters. */
  readonly ctxIndex: number;
  /** Placeholder names for parameters before the context, if they must be added. */
  readonly before: readonly string[];
}

const INPUT_METHODS: Record<string, PushKind> = { 'elicitation/create': 'elicit', 'sampling/createMessage': 'sampling', 'roots/list': 'roots', ping: 'ping' };
const MRTR_REQUESTS = new Set(['tools/call', 'prompts/get', 'resources/read', 'CallToolRequestSchema', 'GetPromptRequestSchema', 'ReadResourceRequestSchema']);
const SET_LEVEL = new Set(['logging/setLevel', 'SetLevelRequestSchema']);
const SUBSCRIBE = new Set(['resources/subscribe', 'resources/unsubscribe', 'SubscribeRequestSchema', 'UnsubscribeRequestSchema']);

const V2_PACKAGES = [V2_SERVER, '@modelcontextprotocol/client'];

/** Which SDK a file is written against. */
function sdkOf(f: FileRewrite): 'v2' | 'v1' | undefined {
  const modules = [...f.imported.values()].map((i) => i.module);
  if (modules.some((m) => V2_PACKAGES.some((p) => m === p || m.startsWith(`${p}/`)))) return 'v2';
  if (modules.some((m) => m === '@modelcontextprotocol/sdk' || m.startsWith('@modelcontextprotocol/sdk/'))) return 'v1';
  return undefined;
}

/** An object literal given directly, or through a `const` declared with one. */
function literalOf(f: FileRewrite, arg: TS.Expression | undefined): TS.ObjectLiteralExpression | undefined {
  if (arg && ts.isObjectLiteralExpression(arg)) return arg;
  if (!arg || !ts.isIdentifier(arg)) return undefined;
  const decl = f.declarationOf(arg);
  return decl && ts.isVariableDeclaration(decl) && decl.initializer && ts.isObjectLiteralExpression(decl.initializer) ? decl.initializer : undefined;
}

/** The push a call makes, if it is one. */
function pushOf(f: FileRewrite, call: TS.CallExpression): Push | undefined {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee)) return undefined;
  const root = rootIdentifier(callee.expression);
  if (root?.text === 'inputRequired') return undefined;
  const name = callee.name.text;
  const [first] = call.arguments;
  switch (name) {
    case 'elicitInput':
      return { call, kind: 'elicit', ...(first ? { params: first } : {}) };
    case 'createMessage':
    case 'requestSampling':
      return { call, kind: 'sampling', ...(first ? { params: first } : {}) };
    case 'listRoots':
      return { call, kind: 'roots' };
    case 'ping':
      return call.arguments.length === 0 ? { call, kind: 'ping' } : undefined;
    case 'send':
    case 'sendRequest': {
      const request = literalOf(f, first);
      if (!request) return undefined;
      const method = stringValue(propertyValue(request, 'method'));
      const kind = method ? INPUT_METHODS[method] : undefined;
      if (!kind) return undefined;
      // Params inside a request built beforehand cannot be moved with the call.
      const params = request === first ? propertyValue(request, 'params') : undefined;
      return { call, kind, ...(params ? { params } : {}) };
    }
    default:
      return undefined;
  }
}

/** The function a registration call was given as its handler (inline, or declared in this file). */
function handlerFunction(f: FileRewrite, arg: TS.Expression | undefined): TS.FunctionLikeDeclaration | undefined {
  if (!arg) return undefined;
  if (ts.isArrowFunction(arg) || ts.isFunctionExpression(arg)) return arg;
  if (!ts.isIdentifier(arg)) return undefined;
  const decl = f.declarationOf(arg);
  if (decl && ts.isFunctionDeclaration(decl)) return decl;
  if (decl && ts.isVariableDeclaration(decl) && decl.initializer && (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer))) return decl.initializer;
  return undefined;
}

/** The request method a `setRequestHandler` call names (a method string or a v1 schema name). */
function requestMethodOf(arg: TS.Expression | undefined): string | undefined {
  if (!arg) return undefined;
  return stringValue(arg) ?? (ts.isIdentifier(arg) ? arg.text : ts.isPropertyAccessExpression(arg) ? arg.name.text : undefined);
}

/** Every tool, prompt and resource handler in the file, with where its context parameter goes. */
function findHandlers(f: FileRewrite): Handler[] {
  const out: Handler[] = [];
  walk(f.sf, (node) => {
    if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return;
    const method = node.expression.name.text;
    const args = node.arguments;
    const last = args[args.length - 1];
    const fn = handlerFunction(f, last);
    if (method === 'setRequestHandler') {
      const requested = requestMethodOf(args[0]);
      if (requested && SET_LEVEL.has(requested)) f.mark(node, 'set-logging-level');
      else if (requested && SUBSCRIBE.has(requested)) f.mark(node, 'subscribe-resource');
      else if (requested && MRTR_REQUESTS.has(requested) && fn) out.push({ fn, ctxIndex: 1, before: ['_request'] });
      return;
    }
    if (!fn) return;
    const config = args[1];
    if (method === 'registerTool' || method === 'registerPrompt') {
      if (args.length !== 3) return;
      const schema = method === 'registerTool' ? 'inputSchema' : 'argsSchema';
      const withArgs = config && ts.isObjectLiteralExpression(config) ? propertyOf(config, schema) !== undefined : fn.parameters.length >= 2;
      out.push({ fn, ctxIndex: withArgs ? 1 : 0, before: withArgs ? ['_args'] : [] });
    } else if (method === 'registerResource' && args.length === 4) {
      const template = ts.isNewExpression(args[1]!) && ts.isIdentifier(args[1].expression) && args[1].expression.text === 'ResourceTemplate';
      out.push({ fn, ctxIndex: template ? 2 : 1, before: template ? ['_uri', '_variables'] : ['_uri'] });
    }
  });
  return out;
}

/** Functions assigned to `….oninitialized`. */
function onInitialized(f: FileRewrite): TS.Node[] {
  const out: TS.Node[] = [];
  walk(f.sf, (n) => {
    if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(n.left) && n.left.name.text === 'oninitialized') out.push(n.right);
  });
  return out;
}

/** Applies native mode to a file. */
export function nativeRewrite(f: FileRewrite): void {
  const sdk = sdkOf(f);
  if (!sdk) return;
  const handlers = findHandlers(f);
  const inHandler = (node: TS.Node) => handlers.find((h) => within(node, h.fn));
  const initializers = onInitialized(f);
  const ctxNames = new Map<Handler, string | null>();
  const ctxOf = (h: Handler): string | null => {
    if (!ctxNames.has(h)) ctxNames.set(h, ensureContext(f, h));
    return ctxNames.get(h)!;
  };

  // Pushes, by handler.
  const pushes = new Map<Handler | undefined, Push[]>();
  walk(f.sf, (n) => {
    if (!ts.isCallExpression(n)) return;
    const push = pushOf(f, n);
    if (!push) return;
    const h = inHandler(n);
    pushes.set(h, [...(pushes.get(h) ?? []), push]);
  });
  for (const [h, list] of pushes) {
    for (const p of list.filter((p) => p.kind === 'ping')) f.mark(p.call, 'ping');
    const real = list.filter((p) => p.kind !== 'ping');
    if (real.length === 0) continue;
    if (!h) {
      for (const p of real) f.mark(p.call, p.kind === 'roots' && initializers.some((i) => within(p.call, i)) ? 'roots-in-oninitialized' : 'push-outside-request');
    } else if (sdk === 'v1') for (const p of real) f.mark(p.call, 'needs-v2');
    else if (real.length > 1) for (const p of real) f.mark(p.call, 'sequential-pushes');
    else rewritePush(f, h, real[0]!, ctxOf);
  }

  walk(f.sf, (n) => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      const name = n.expression.name.text;
      const h = inHandler(n);
      if (name === 'getClientCapabilities' && n.arguments.length === 0) {
        if (!h) f.mark(n, 'tools-by-capabilities');
        else if (sdk === 'v2') capabilities(f, n, h, ctxOf);
      }
      const log = logOf(n);
      if (log) {
        if (!h) f.mark(n, 'log-outside-request');
        else if (sdk === 'v2') logging(f, n, log, h, ctxOf);
      }
      if (name === 'connect' && sdk === 'v2' && n.arguments.length === 1) serving(f, n);
      // A client's requests that 2026-07-28 removed.
      if (name === 'setLoggingLevel') f.mark(n, 'set-logging-level');
      if (name === 'subscribeResource' || name === 'unsubscribeResource') f.mark(n, 'subscribe-resource');
    }
    if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name)) {
      if (n.name.text === 'sessionIdGenerator' && !(ts.isIdentifier(n.initializer) && n.initializer.text === 'undefined')) f.mark(n, 'session-state');
      if (n.name.text === 'eventStore') f.mark(n, 'event-store');
    }
    if (ts.isShorthandPropertyAssignment(n) && n.name.text === 'eventStore') f.mark(n, 'event-store');
    if (ts.isClassDeclaration(n) && n.members.some((m) => m.name && ts.isIdentifier(m.name) && m.name.text === 'replayEventsAfter')) f.mark(n, 'event-store');
    if (ts.isPropertyAccessExpression(n) && n.name.text === 'sessionId' && ts.isIdentifier(n.expression)) {
      const h = inHandler(n);
      const param = h?.fn.parameters[h.ctxIndex];
      if (param && ts.isIdentifier(param.name) && param.name.text === n.expression.text) f.mark(n, 'session-state');
    }
  });

  for (const init of initializers) {
    let registers = false;
    walk(init, (n) => {
      if (ts.isCallExpression(n)) {
        const callee = n.expression;
        const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
        if (/^register/.test(name) || name === 'tool') {
          registers = true;
          f.mark(n, 'tools-by-capabilities');
        }
      }
    });
    let pushesRoots = false;
    walk(init, (n) => {
      if (ts.isCallExpression(n) && pushOf(f, n)?.kind === 'roots') pushesRoots = true;
    });
    if (!registers && !pushesRoots) f.mark(init, 'oninitialized');
  }
}

/** The handler's context parameter, added when the handler does not take it; null when it cannot be named. */
function ensureContext(f: FileRewrite, h: Handler): string | null {
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

/** The statement of the handler's body that holds a node, and whether the way there is unconditional. */
function topStatement(node: TS.Node, body: TS.Block): { statement: TS.Statement; block: TS.Block; unconditional: boolean } | undefined {
  let unconditional = true;
  let n: TS.Node = node;
  while (n.parent && n.parent !== body) {
    const p = n.parent;
    if (ts.isBlock(p) && ts.isTryStatement(p.parent) && p.parent.tryBlock === p && p.parent.parent === body) return { statement: n as TS.Statement, block: p, unconditional };
    const fine =
      ts.isVariableDeclaration(p) || ts.isVariableDeclarationList(p) || ts.isVariableStatement(p) || ts.isExpressionStatement(p) || ts.isReturnStatement(p) ||
      ts.isParenthesizedExpression(p) || ts.isPropertyAccessExpression(p) || (ts.isElementAccessExpression(p) && p.expression === n) || ts.isAsExpression(p) ||
      ts.isNonNullExpression(p) || ts.isSatisfiesExpression(p) || ts.isTemplateSpan(p) || ts.isTemplateExpression(p) || ts.isPropertyAssignment(p) ||
      ts.isObjectLiteralExpression(p) || ts.isArrayLiteralExpression(p) || ts.isSpreadElement(p) || ts.isCallExpression(p) || ts.isAwaitExpression(p) ||
      (ts.isBinaryExpression(p) && ![ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.CommaToken].includes(p.operatorToken.kind));
    if (!fine) unconditional = false;
    n = p;
  }
  return n.parent === body ? { statement: n as TS.Statement, block: body, unconditional } : undefined;
}

/** Re-indents the lines after the first of a moved text. */
function reindent(text: string, from: string, to: string): string {
  return text
    .split('\n')
    .map((line, i) => (i > 0 && line.startsWith(from) ? to + line.slice(from.length) : line))
    .join('\n');
}

const RESULT_TYPE: Record<Exclude<PushKind, 'ping'>, string> = { elicit: 'ElicitResult', sampling: 'CreateMessageResult', roots: 'ListRootsResult' };
const DEFAULT_KEY: Record<Exclude<PushKind, 'ping'>, string> = { elicit: 'elicitation', sampling: 'sampling', roots: 'roots' };

function rewritePush(f: FileRewrite, h: Handler, push: Push, ctxOf: (h: Handler) => string | null): void {
  const kind = push.kind as Exclude<PushKind, 'ping'>;
  const body = h.fn.body;
  const awaited = push.call.parent;
  if (!body || !ts.isBlock(body) || !ts.isAwaitExpression(awaited) || awaited.expression !== push.call) {
    f.mark(push.call, 'push-conditional');
    return;
  }
  const top = topStatement(awaited, body);
  if (!top || !top.unconditional) {
    f.mark(push.call, 'push-conditional');
    return;
  }
  const outer = top.block === body ? top.statement : (top.block.parent as TS.TryStatement);
  const before = [...body.statements.slice(0, body.statements.indexOf(outer as TS.Statement)), ...(top.block === body ? [] : top.block.statements.slice(0, top.block.statements.indexOf(top.statement)))];
  const effect = before.find((s) => !isPureStatement(s));
  if (effect) {
    const text = effect.getText(f.sf).split('\n')[0]!.trim().replace(/;$/, '');
    f.mark(push.call, 'side-effects-before-push', `first: ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`);
    return;
  }
  // The request to return: its params must be a literal that does not depend on the push's own statement.
  let builder: string;
  const params = push.params;
  if (kind === 'roots') builder = 'inputRequired.listRoots()';
  else {
    const local = params ? [params, ...descendants(params)].some((n) => isReference(n) && ((d) => d !== undefined && within(d, top.statement))(f.declarationOf(n))) : false;
    if (!params || local || (kind === 'elicit' && !ts.isObjectLiteralExpression(params))) {
      f.mark(push.call, 'push-params');
      return;
    }
    const from = indentAt(f.text, params.getStart(f.sf));
    const to = indentAt(f.text, top.statement.getStart(f.sf)) + indentUnit(f.text).repeat(3);
    if (kind === 'sampling') builder = `inputRequired.createMessage(${reindent(params.getText(f.sf), from, to)})`;
    else {
      const literal = params as TS.ObjectLiteralExpression;
      const mode = propertyValue(literal, 'mode');
      const modeText = mode ? stringValue(mode) : 'form';
      if (modeText === 'form') builder = `inputRequired.elicit(${reindent(params.getText(f.sf), from, to)})`;
      else if (modeText === 'url') {
        const kept = literal.properties.filter((p) => !(p.name && ts.isIdentifier(p.name) && ['mode', 'elicitationId'].includes(p.name.text)));
        builder = `inputRequired.elicitUrl({ ${kept.map((p) => p.getText(f.sf)).join(', ')} })`;
      } else {
        f.mark(push.call, 'push-params');
        return;
      }
    }
  }
  const ctx = ctxOf(h);
  if (ctx === null) {
    f.mark(push.call, 'handler-shape');
    return;
  }
  const declared = ts.isVariableStatement(top.statement) && top.statement.declarationList.declarations.length === 1 ? top.statement.declarationList.declarations[0]! : undefined;
  const key = declared && ts.isIdentifier(declared.name) && unparen(declared.initializer) === awaited ? declared.name.text : DEFAULT_KEY[kind];
  const nl = newlineOf(f.text);
  const indent = indentAt(f.text, top.statement.getStart(f.sf));
  const unit = indentUnit(f.text);
  const semi = top.statement.getText(f.sf).trimEnd().endsWith(';') ? ';' : '';
  const quote = quoteOf(f.text);
  const keyLiteral = `${quote}${key}${quote}`;
  const ret = builder.includes('\n')
    ? [`return inputRequired({`, `${unit}inputRequests: {`, `${unit}${unit}${key}: ${builder},`, `${unit}},`, `})${semi}`]
    : [`return inputRequired({ inputRequests: { ${key}: ${builder} } })${semi}`];
  const guard = [`if (inputResponse(${ctx}.mcpReq.inputResponses, ${keyLiteral}).kind !== ${quote}${kind === 'elicit' ? 'elicit' : kind}${quote}) {`, ...ret.map((l) => `${unit}${l}`), '}'].join(`${nl}${indent}`);
  const at = lineStart(f.text, top.statement.getStart(f.sf));
  f.edit(at, at, `${indent}${guard}${nl}`);
  const response = `${ctx}.mcpReq.inputResponses?.[${keyLiteral}]`;
  // The answer keeps the type the push had: `as` in TypeScript, a JSDoc cast in JavaScript.
  const read = f.model.typescript ? `${response} as ${RESULT_TYPE[kind]}` : `/** @type {import(${quote}${V2_SERVER}${quote}).${RESULT_TYPE[kind]}} */ (${response})`;
  if (ts.isExpressionStatement(top.statement) && unparen(top.statement.expression) === awaited) {
    f.remove([top.statement]);
  } else {
    const parent = awaited.parent;
    const bare = !f.model.typescript || ts.isVariableDeclaration(parent) || ts.isParenthesizedExpression(parent) || ts.isReturnStatement(parent);
    f.replace(awaited, bare ? read : `(${read})`);
  }
  f.need(V2_SERVER, 'inputRequired');
  f.need(V2_SERVER, 'inputResponse');
  if (f.model.typescript) f.need(V2_SERVER, RESULT_TYPE[kind], true);
  const what = { elicit: 'elicitation', sampling: 'sampling', roots: 'roots' }[kind];
  f.rewrote(push.call, `${what} push → inputRequired({ inputRequests: { ${key} } }) on the first pass, ctx.mcpReq.inputResponses.${key} on re-entry`);
}

function unparen(e: TS.Expression | undefined): TS.Expression | undefined {
  while (e && ts.isParenthesizedExpression(e)) e = e.expression;
  return e;
}

/** An identifier that names a value (not a property name in `a.name` or `{ name: … }`). */
function isReference(node: TS.Node): node is TS.Identifier {
  if (!ts.isIdentifier(node)) return false;
  const p = node.parent;
  if (ts.isPropertyAccessExpression(p) && p.name === node) return false;
  if ((ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p) || ts.isPropertySignature(p)) && p.name === node) return false;
  return true;
}

function descendants(node: TS.Node): TS.Node[] {
  const out: TS.Node[] = [];
  walk(node, (n) => out.push(n));
  return out;
}

function capabilities(f: FileRewrite, call: TS.CallExpression, h: Handler, ctxOf: (h: Handler) => string | null): void {
  const parent = call.parent;
  // Already reads the envelope first (`envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities()`).
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken && parent.right === call && parent.left.getText(f.sf).includes('CLIENT_CAPABILITIES_META_KEY')) return;
  const ctx = ctxOf(h);
  if (ctx === null) {
    f.mark(call, 'handler-shape');
    return;
  }
  const envelope = f.model.typescript
    ? `(${ctx}.mcpReq.envelope as { [CLIENT_CAPABILITIES_META_KEY]?: ClientCapabilities } | undefined)?.[CLIENT_CAPABILITIES_META_KEY]`
    : `${ctx}.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY]`;
  const text = `${envelope} ?? ${call.getText(f.sf)}`;
  f.replace(call, ts.isVariableDeclaration(parent) && parent.initializer === call ? text : `(${text})`);
  f.need(V2_SERVER, 'CLIENT_CAPABILITIES_META_KEY');
  if (f.model.typescript) f.need(V2_SERVER, 'ClientCapabilities', true);
  f.rewrote(call, "getClientCapabilities() → the request's envelope (ctx.mcpReq.envelope), then the initialize-time value");
}

/** The level, data and logger of a log sent as `sendLoggingMessage({…})` or a `notifications/message` notification. */
function logOf(call: TS.CallExpression): { level: TS.Expression; data: TS.Expression; logger?: TS.Expression } | undefined {
  const callee = call.expression as TS.PropertyAccessExpression;
  const [first] = call.arguments;
  let params: TS.Expression | undefined;
  if (callee.name.text === 'sendLoggingMessage') params = first;
  else if ((callee.name.text === 'notify' || callee.name.text === 'sendNotification') && first && ts.isObjectLiteralExpression(first) && stringValue(propertyValue(first, 'method')) === 'notifications/message') params = propertyValue(first, 'params');
  if (!params || !ts.isObjectLiteralExpression(params)) return undefined;
  const level = propertyValue(params, 'level');
  const data = propertyValue(params, 'data');
  const logger = propertyValue(params, 'logger');
  const known = params.properties.every((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && ts.isIdentifier(p.name) && ['level', 'data', 'logger'].includes(p.name.text));
  if (!level || !data || !known) return undefined;
  return { level, data, ...(logger ? { logger } : {}) };
}

function logging(f: FileRewrite, call: TS.CallExpression, log: { level: TS.Expression; data: TS.Expression; logger?: TS.Expression }, h: Handler, ctxOf: (h: Handler) => string | null): void {
  const ctx = ctxOf(h);
  if (ctx === null) {
    f.mark(call, 'handler-shape');
    return;
  }
  const args = [log.level, log.data, ...(log.logger ? [log.logger] : [])].map((e) => e.getText(f.sf));
  f.replace(call, `${ctx}.mcpReq.log(${args.join(', ')})`);
  f.rewrote(call, "log → the request's logger (ctx.mcpReq.log)");
}

/** `server.connect(new StdioServerTransport())` on the v2 SDK serves the 2025 protocol only. */
function serving(f: FileRewrite, call: TS.CallExpression): void {
  if (!(ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === 'connect')) return;
  let arg: TS.Expression = call.arguments[0]!;
  if (ts.isIdentifier(arg)) {
    const decl = f.declarationOf(arg);
    if (!decl || !ts.isVariableDeclaration(decl) || !decl.initializer) return;
    arg = decl.initializer;
  }
  if (!ts.isNewExpression(arg)) return;
  const name = importedClass(f, arg.expression, (m) => m.startsWith('@modelcontextprotocol/'));
  if (name && /ServerTransport$/.test(name)) f.mark(call, 'serve-2026');
}
