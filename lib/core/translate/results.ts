/**
 * Results both ways (translation table rows 4, 21, 22, 34): `resultType`, server info in result
 * `_meta`, `ttlMs`/`cacheScope` on cacheable methods, tools with invalid `x-mcp-header` annotations,
 * and `structuredContent` that a legacy client cannot read. `input_required` and task results are
 * not plain results: `inputRequests.ts` and `tasks.ts` handle them.
 */
import * as v from 'valibot';
import { MetaKey } from '../era.ts';
import { internalError, type WireError } from '../errors.ts';
import { describe } from '../jsonrpc.ts';
import { LEGACY_RESULT_SCHEMAS, LEGACY_RESULT_SHAPES, type LegacyResultMethod } from '../legacy/results.ts';
import { isCacheableMethod } from '../modern/methods.ts';
import { extend, isRecord, omitKeys, setMember, shown, type JsonObject } from '../primitives.ts';
import { fail, ok, type Outcome } from '../outcome.ts';
import { cachePolicyFor, NO_CACHING, type ToModernOptions } from './context.ts';
import { paramHeaders } from './headers.ts';
import { stampServerInfo } from './meta.ts';
import { toolToModern } from './tasks.ts';

function checkBody(method: string, result: JsonObject, side: string): WireError | undefined {
  if (!Object.hasOwn(LEGACY_RESULT_SCHEMAS, method)) return undefined;
  if (LEGACY_RESULT_SHAPES[method as LegacyResultMethod](result)) return undefined;
  const parsed = v.safeParse(LEGACY_RESULT_SCHEMAS[method as LegacyResultMethod], result);
  return parsed.success ? undefined : internalError(`${side} ${method} result: ${describe(parsed.issues)}`);
}

/** A tool whose `x-mcp-header` annotations are invalid, with the reason. */
export interface InvalidToolAnnotation {
  readonly tool: string;
  readonly reason: string;
}

function stripHeaderAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripHeaderAnnotations);
  if (!isRecord(node)) return node;
  const out: JsonObject = {};
  for (const k in node) if (k !== 'x-mcp-header') setMember(out, k, stripHeaderAnnotations(node[k]));
  return out;
}

/**
 * A legacy result → modern: `resultType: "complete"`, server info in `_meta`, and for cacheable
 * methods `ttlMs`/`cacheScope` (none for retries: MRTR retries must not be cached). A legacy tool
 * whose `x-mcp-header` annotations break the 2026-07-28 rules keeps working with the annotations
 * removed (a modern HTTP client would drop the whole tool); `invalidTools` reports them. Legacy
 * `execution.taskSupport` is removed.
 */
export function resultToModern(
  method: string,
  result: JsonObject,
  options: ToModernOptions & { retry?: boolean } = {},
): Outcome<{ result: JsonObject; invalidTools: readonly InvalidToolAnnotation[] }> {
  const broken = checkBody(method, result, 'upstream');
  if (broken) return fail(broken);
  const out = extend(result, { resultType: 'complete' });
  const invalidTools: InvalidToolAnnotation[] = [];
  if (method === 'tools/list') {
    out['tools'] = (result['tools'] as JsonObject[]).map((original) => {
      const tool = toolToModern(original);
      const check = paramHeaders(tool['inputSchema']);
      if (check.ok) return tool;
      invalidTools.push({ tool: String(tool['name']), reason: check.error });
      return extend(tool, { inputSchema: stripHeaderAnnotations(tool['inputSchema']) });
    });
  }
  const meta = stampServerInfo(result['_meta'], options.serverInfo);
  if (meta) out['_meta'] = meta;
  if (isCacheableMethod(method)) {
    const policy = options.retry ? NO_CACHING : cachePolicyFor(method, options.cache);
    out['ttlMs'] = policy.ttlMs;
    out['cacheScope'] = policy.cacheScope;
  }
  return ok({ result: out, invalidTools });
}

/** Result types this library understands without an extension. */
const PLAIN = new Set(['complete', undefined]);

/**
 * A modern complete result → legacy: `resultType`, `ttlMs`, `cacheScope` and the server info are
 * removed; tools with invalid `x-mcp-header` annotations are dropped (2026-07-28 §5.1);
 * `structuredContent` that is not an object (legal only in 2026-07-28) is removed, since legacy
 * clients require an object, and so is a tool's non-object `outputSchema`. `input_required`, `task`
 * and unknown result types are refused.
 */
export function resultToLegacy(
  method: string,
  result: JsonObject,
): Outcome<{ result: JsonObject; droppedTools: readonly InvalidToolAnnotation[] }> {
  const type = result['resultType'];
  if (!PLAIN.has(type as string | undefined)) {
    return fail(internalError(`a ${shown(type)} result has no plain legacy form (method ${method})`));
  }
  const out = omitKeys(result, ['resultType', 'ttlMs', 'cacheScope', '_meta']);
  if (isRecord(result['_meta'])) {
    const meta = omitKeys(result['_meta'], [MetaKey.serverInfo]);
    if (Object.keys(meta).length > 0) out['_meta'] = meta;
  }
  const broken = checkBody(method, out, 'upstream');
  if (broken) return fail(broken);
  const droppedTools: InvalidToolAnnotation[] = [];
  if (method === 'tools/list') {
    const kept: JsonObject[] = [];
    for (const tool of out['tools'] as JsonObject[]) {
      const check = paramHeaders(tool['inputSchema']);
      if (!check.ok) {
        droppedTools.push({ tool: String(tool['name']), reason: check.error });
        continue;
      }
      // Legacy revisions require an object `outputSchema`; 2026-07-28 allows any schema.
      const output = tool['outputSchema'];
      kept.push(output !== undefined && !(isRecord(output) && output['type'] === 'object') ? omitKeys(tool, ['outputSchema']) : tool);
    }
    out['tools'] = kept;
  }
  if (method === 'tools/call' && 'structuredContent' in out && !isRecord(out['structuredContent'])) delete out['structuredContent'];
  return ok({ result: out, droppedTools });
}
