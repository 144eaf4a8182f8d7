/**
 * Native mode: push-style server code rewritten into the 2026-07-28 idiom of the v2 SDK
 * (`@modelcontextprotocol/server`). A single awaited push in a tool, prompt or resource handler
 * becomes an `inputRequired(…)` return on the first pass and a read of `ctx.mcpReq.inputResponses`
 * on re-entry; `getClientCapabilities()` reads the request's envelope first; `sendLoggingMessage`
 * becomes the request's `ctx.mcpReq.log`. What cannot be rewritten safely is marked.
 */
import type * as TS from 'typescript';
import { ts } from './typescript.ts';
import { propertyValue, stringValue, walk, within, type FileRewrite } from './fileRewrite.ts';
import { ensureContext, findHandlers, requestMethodOf, type Handler } from './handlers.ts';
import { pushOf, rewritePush, V2_SERVER, type Push } from './pushRewrite.ts';
import { importedClass } from './wiring.ts';

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

/** Functions assigned to `….oninitialized`. */
function onInitialized(f: FileRewrite): TS.Node[] {
  const out: TS.Node[] = [];
  walk(f.sf, (n) => {
    if (
      ts.isBinaryExpression(n) &&
      n.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(n.left) &&
      n.left.name.text === 'oninitialized'
    )
      out.push(n.right);
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
      for (const p of real)
        f.mark(
          p.call,
          p.kind === 'roots' && initializers.some((i) => within(p.call, i)) ? 'roots-in-oninitialized' : 'push-outside-request',
        );
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
      if (name === 'setRequestHandler') {
        const requested = requestMethodOf(n.arguments[0]);
        if (requested && SET_LEVEL.has(requested)) f.mark(n, 'set-logging-level');
        if (requested && SUBSCRIBE.has(requested)) f.mark(n, 'subscribe-resource');
      }
      // A client's requests that 2026-07-28 removed.
      if (name === 'setLoggingLevel') f.mark(n, 'set-logging-level');
      if (name === 'subscribeResource' || name === 'unsubscribeResource') f.mark(n, 'subscribe-resource');
    }
    if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name)) {
      if (n.name.text === 'sessionIdGenerator' && !(ts.isIdentifier(n.initializer) && n.initializer.text === 'undefined'))
        f.mark(n, 'session-state');
      if (n.name.text === 'eventStore') f.mark(n, 'event-store');
    }
    if (ts.isShorthandPropertyAssignment(n) && n.name.text === 'eventStore') f.mark(n, 'event-store');
    if (ts.isClassDeclaration(n) && n.members.some((m) => m.name && ts.isIdentifier(m.name) && m.name.text === 'replayEventsAfter'))
      f.mark(n, 'event-store');
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

function capabilities(f: FileRewrite, call: TS.CallExpression, h: Handler, ctxOf: (h: Handler) => string | null): void {
  const parent = call.parent;
  // Already reads the envelope first (`envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities()`).
  if (
    ts.isBinaryExpression(parent) &&
    parent.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken &&
    parent.right === call &&
    parent.left.getText(f.sf).includes('CLIENT_CAPABILITIES_META_KEY')
  )
    return;
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
  else if (
    (callee.name.text === 'notify' || callee.name.text === 'sendNotification') &&
    first &&
    ts.isObjectLiteralExpression(first) &&
    stringValue(propertyValue(first, 'method')) === 'notifications/message'
  )
    params = propertyValue(first, 'params');
  if (!params || !ts.isObjectLiteralExpression(params)) return undefined;
  const level = propertyValue(params, 'level');
  const data = propertyValue(params, 'data');
  const logger = propertyValue(params, 'logger');
  const known = params.properties.every(
    (p) =>
      (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) &&
      ts.isIdentifier(p.name) &&
      ['level', 'data', 'logger'].includes(p.name.text),
  );
  if (!level || !data || !known) return undefined;
  return { level, data, ...(logger ? { logger } : {}) };
}

function logging(
  f: FileRewrite,
  call: TS.CallExpression,
  log: { level: TS.Expression; data: TS.Expression; logger?: TS.Expression },
  h: Handler,
  ctxOf: (h: Handler) => string | null,
): void {
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
