/**
 * Reads two V8 heap snapshots (before and with N calls parked) and says what each parked call
 * added to the heap, by kind of object: closures by what they capture, plain objects and contexts
 * by their first members. For `npm run bench:mrtr -- --profile`; not a general snapshot reader.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** One kind of object: bytes and count per parked call. */
export interface HeapGain {
  readonly what: string;
  readonly bytes: number;
  readonly count: number;
}

/** Per parked call, what the heap gained between the `baseline` and `parked` snapshot files, largest first. */
export function heapDiff(baseline: string, parked: string, n: number): HeapGain[] {
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const before = read(baseline);
  const nfBefore = before.snapshot.meta.node_fields.length;
  const known = new Set<number>();
  for (let i = 0; i < before.nodes.length; i += nfBefore) known.add(before.nodes[i + 2]!);
  const s = read(parked);
  const meta = s.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const edgeCount = meta.node_fields.indexOf('edge_count');
  const firstEdge: number[] = [];
  for (let i = 0, e = 0; i < s.nodes.length / nf; i++) {
    firstEdge.push(e);
    e += s.nodes[i * nf + edgeCount]!;
  }
  const named = (node: number, kinds: readonly string[]) => {
    const names: string[] = [];
    const count = s.nodes[node * nf + edgeCount]!;
    for (let k = 0; k < count; k++) {
      const e = (firstEdge[node]! + k) * ef;
      const kind = edgeTypes[s.edges[e]!]!;
      if (kinds.includes(kind)) names.push(`${kind === 'internal' ? '@' : ''}${s.strings[s.edges[e + 1]!]!}`);
    }
    return names;
  };
  const edgeTo = (node: number, name: string) => {
    const count = s.nodes[node * nf + edgeCount]!;
    for (let k = 0; k < count; k++) {
      const e = (firstEdge[node]! + k) * ef;
      if (edgeTypes[s.edges[e]!] === 'internal' && s.strings[s.edges[e + 1]!] === name) return s.edges[e + 2]! / nf;
    }
    return undefined;
  };
  const groups = new Map<string, { bytes: number; count: number }>();
  for (let i = 0; i < s.nodes.length / nf; i++) {
    if (known.has(s.nodes[i * nf + 2]!)) continue;
    const type = nodeTypes[s.nodes[i * nf]!]!;
    const name = s.strings[s.nodes[i * nf + 1]!]!;
    let what = `${type} ${name}`;
    if (type === 'closure') {
      const context = edgeTo(i, 'context');
      what = `closure ${name || '(anonymous)'} capturing [${context === undefined ? '' : named(context, ['context']).join(', ')}]`;
    } else if (type === 'object' && (name === 'Object' || name === 'system / Context')) {
      what = `${name === 'Object' ? 'object' : 'context'} {${named(i, ['property', 'context'])
        .filter((p) => p !== '__proto__')
        .slice(0, 12)
        .join(', ')}}`;
    } else if (type.includes('string') || type === 'number') what = type;
    const g = groups.get(what) ?? { bytes: 0, count: 0 };
    g.bytes += s.nodes[i * nf + 3]!;
    g.count++;
    groups.set(what, g);
  }
  return [...groups].map(([what, g]) => ({ what, bytes: g.bytes / n, count: g.count / n })).sort((a, b) => b.bytes - a.bytes);
}
