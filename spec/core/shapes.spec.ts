/**
 * The direct shape checks that spare the request path a schema run must never accept what the
 * schema refuses: for every value here, `quick(value)` ⇒ the schema accepts it. And they must
 * accept what clients and servers actually send (else they spare nothing).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { LEGACY_RESULT_SCHEMAS, LEGACY_RESULT_SHAPES, type LegacyResultMethod } from '../../lib/core/legacy/results.ts';
import { isPlainClientCapabilities, ModernClientCapabilitiesSchema } from '../../lib/core/modern/capabilities.ts';
import { ImplementationSchema, isPlainImplementation } from '../../lib/core/primitives.ts';

/** Values of every JSON kind, nested a little, to put in any member. */
const ATOMS: unknown[] = [undefined, null, true, 0, 1.5, '', 'x', [], [1], ['a'], [{}], {}, { a: 1 }, { a: {} }, { a: [] }, { a: 'x' }];

/** A seeded generator, so a failure names a case that can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function pick<T>(r: () => number, from: readonly T[]): T {
  return from[Math.floor(r() * from.length)]!;
}

/** Random objects with some of `keys` (and a stranger) set to atoms or to objects of atoms. */
function objects(keys: readonly string[], count: number, seed: number): unknown[] {
  const r = rng(seed);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const o: Record<string, unknown> = {};
    for (const k of [...keys, 'other']) {
      const roll = r();
      if (roll < 0.3) continue;
      if (roll < 0.6) o[k] = pick(r, ATOMS);
      else {
        const inner: Record<string, unknown> = {};
        for (const ik of ['a', 'b', 'context', 'tools', 'form', 'url']) if (r() < 0.4) inner[ik] = pick(r, ATOMS);
        o[k] = r() < 0.2 ? [inner] : inner;
      }
    }
    out.push(o);
  }
  return [...out, ...ATOMS];
}

/** Each typical value with one member (top-level or one level down) replaced by each atom. */
function mutations(typical: unknown[], keys: readonly string[]): unknown[] {
  const out: unknown[] = [];
  for (const t of typical) {
    if (typeof t !== 'object' || t === null) continue;
    const base = t as Record<string, unknown>;
    for (const key of new Set([...Object.keys(base), ...keys, 'other'])) {
      for (const atom of ATOMS) out.push({ ...base, [key]: atom });
      const inner = base[key];
      if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
        for (const ik of [...Object.keys(inner), 'other']) for (const atom of ATOMS) out.push({ ...base, [key]: { ...inner, [ik]: atom } });
      }
      if (Array.isArray(inner) && typeof inner[0] === 'object' && inner[0] !== null) {
        for (const ik of [...Object.keys(inner[0]), 'other'])
          for (const atom of ATOMS) out.push({ ...base, [key]: [{ ...inner[0], [ik]: atom }] });
      }
    }
  }
  return out;
}

function agree(
  name: string,
  quick: (value: never) => boolean,
  schema: v.GenericSchema,
  random: unknown[],
  typical: unknown[],
  keys: readonly string[],
): void {
  let spared = 0;
  for (const value of [...random, ...mutations(typical, keys)]) {
    if (!quick(value as never)) continue;
    spared++;
    assert.ok(v.safeParse(schema, value).success, `${name}: the quick check accepts what the schema refuses: ${JSON.stringify(value)}`);
  }
  assert.ok(spared > 0, `${name}: the quick check accepted nothing`);
  for (const value of typical) assert.ok(quick(value as never), `${name}: the quick check should accept ${JSON.stringify(value)}`);
}

const shapes = suite('quick shape checks');

shapes('should accept client capabilities only when the schema does, and the ones clients send', () => {
  agree(
    'capabilities',
    isPlainClientCapabilities,
    ModernClientCapabilitiesSchema,
    objects(['experimental', 'roots', 'sampling', 'elicitation', 'extensions'], 4000, 1),
    [
      {},
      { elicitation: { form: {} }, sampling: {} },
      { roots: {}, sampling: { context: {}, tools: {} }, elicitation: { form: {}, url: {} } },
      { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    ],
    ['experimental', 'roots', 'sampling', 'elicitation', 'extensions'],
  );
});

shapes('should accept client info only when the schema does, and the ones clients send', () => {
  agree(
    'clientInfo',
    isPlainImplementation,
    ImplementationSchema,
    objects(['name', 'version', 'title', 'description', 'websiteUrl', 'icons'], 4000, 2),
    [
      { name: 'c', version: '1' },
      { name: 'c', version: '1', title: 'C', description: 'a client', websiteUrl: 'https://example.com' },
    ],
    ['name', 'version', 'title', 'description', 'websiteUrl', 'icons'],
  );
});

shapes('should accept each legacy result only when its schema does, and the ones servers send', () => {
  const typical: Record<LegacyResultMethod, unknown> = {
    'tools/list': { tools: [{ name: 'echo', inputSchema: { type: 'object' } }], nextCursor: 'n' },
    'tools/call': { content: [{ type: 'text', text: 'hi' }], structuredContent: { a: 1 }, isError: false },
    'prompts/list': { prompts: [{ name: 'p' }] },
    'prompts/get': { messages: [{ role: 'user', content: { type: 'text', text: 'x' } }], description: 'd' },
    'resources/list': { resources: [{ uri: 'file:///a', name: 'a' }] },
    'resources/templates/list': { resourceTemplates: [{ uriTemplate: 'file:///{x}', name: 'x' }] },
    'resources/read': { contents: [{ uri: 'file:///a', text: 'x' }] },
    'completion/complete': { completion: { values: ['a', 'b'], total: 2 } },
  };
  const members = [
    'tools',
    'content',
    'isError',
    'structuredContent',
    'prompts',
    'messages',
    'description',
    'resources',
    'resourceTemplates',
    'contents',
    'completion',
    'nextCursor',
    'values',
    'name',
    'inputSchema',
  ];
  const values = objects(members, 6000, 3);
  // Arrays of candidate items too, since most members are lists.
  const r = rng(4);
  for (let i = 0; i < 3000; i++) {
    const o: Record<string, unknown> = {};
    for (const k of members)
      if (r() < 0.5)
        o[k] = Array.from({ length: Math.floor(r() * 3) }, () =>
          r() < 0.5 ? pick(r, ATOMS) : { name: pick(r, ATOMS), inputSchema: pick(r, ATOMS), values: pick(r, ATOMS) },
        );
    if (r() < 0.3) o['completion'] = { values: r() < 0.5 ? ['a'] : pick(r, ATOMS) };
    values.push(o);
  }
  for (const method of Object.keys(LEGACY_RESULT_SCHEMAS) as LegacyResultMethod[]) {
    agree(
      method,
      (x: Record<string, unknown>) => typeof x === 'object' && x !== null && LEGACY_RESULT_SHAPES[method](x),
      LEGACY_RESULT_SCHEMAS[method],
      values,
      [typical[method]],
      members,
    );
  }
});

shapes.run();
