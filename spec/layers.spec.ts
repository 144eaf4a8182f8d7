/**
 * The arrows of lib/ point inward only: cli and codemod → wrap → fleet → fronts → probe, session, state →
 * transport → util → core, with observe and auth beside transport. This
 * reads every import of every source and fails on one that points outward or sideways.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const LIB = resolve(import.meta.dirname, '../lib');

/** Each folder's layer; a file may import its own folder and any lower layer. */
const LAYER: Readonly<Record<string, number>> = {
  core: 0,
  util: 0.5,
  observe: 1,
  transport: 2,
  auth: 2,
  session: 3,
  state: 3,
  probe: 3,
  fronts: 4,
  fleet: 4.5,
  wrap: 5,
  cli: 6,
  codemod: 6,
  'index.ts': 7,
  'server.ts': 7,
  'serverAdvanced.ts': 7,
  'client.ts': 7,
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

/** The top folder (or top-level file) of a path under lib/. */
function areaOf(path: string): string {
  return relative(LIB, path).split(/[\\/]/)[0]!;
}

const layers = suite('the layers of lib/');

layers('should place every top folder and file of lib/ in a layer', () => {
  const areas = new Set(sources(LIB).map(areaOf));
  assert.ok(areas.size > 10);
  for (const area of areas) assert.ok(area in LAYER, `${area} has no layer`);
});

layers('should import only its own folder and lower layers', () => {
  const outward: string[] = [];
  let imports = 0;
  for (const file of sources(LIB)) {
    const from = areaOf(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/from\s+['"](\.[^'"]+)['"]/g)) {
      imports++;
      const to = areaOf(resolve(dirname(file), m[1]!));
      if (to !== from && LAYER[to]! >= LAYER[from]!) outward.push(`${relative(LIB, file)} → ${m[1]}`);
    }
  }
  assert.ok(imports > 300, `read ${imports} imports`);
  assert.equal(outward, []);
});

layers('should have no circle of imports among its files', () => {
  const files = sources(LIB);
  const arrows = new Map(
    files.map((f) => [f, [...readFileSync(f, 'utf8').matchAll(/from\s+['"](\.[^'"]+)['"]/g)].map((m) => resolve(dirname(f), m[1]!))]),
  );
  const circles: string[] = [];
  // Depth-first, colouring each file: grey while its imports are being followed, black once done.
  const colour = new Map<string, 'grey' | 'black'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    colour.set(file, 'grey');
    path.push(file);
    for (const to of arrows.get(file) ?? []) {
      if (colour.get(to) === 'grey') circles.push([...path.slice(path.indexOf(to)), to].map((f) => relative(LIB, f)).join(' → '));
      else if (!colour.has(to) && arrows.has(to)) visit(to);
    }
    path.pop();
    colour.set(file, 'black');
  };
  for (const file of files) if (!colour.has(file)) visit(file);
  assert.equal(circles, []);
});

layers('should have no circle among the folders within a layer (wrap/mrtr imports nothing from wrap/legacyServer)', () => {
  const folderOf = (path: string): string => dirname(relative(LIB, path));
  const arrows = new Map<string, Set<string>>();
  // A barrel (index.ts) re-exports its folder's insides: it is the folder's door, not an arrow out of it.
  for (const file of sources(LIB).filter((f) => !f.endsWith('/index.ts'))) {
    const from = folderOf(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/from\s+['"](\.[^'"]+)['"]/g)) {
      const to = folderOf(resolve(dirname(file), m[1]!));
      if (to !== from && areaOf(resolve(LIB, to, 'x')) === areaOf(file))
        (arrows.get(from) ?? arrows.set(from, new Set()).get(from)!).add(to);
    }
  }
  assert.ok(arrows.get('wrap/legacyServer')?.has('wrap/mrtr'), 'the wrap of a legacy server uses the MRTR broker');
  assert.not.ok(arrows.get('wrap/mrtr')?.has('wrap/legacyServer'), 'the MRTR broker is a seam of its own');
  const circles: string[] = [];
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    [...(arrows.get(from) ?? [])].some((n) => n === to || (!seen.has(n) && (seen.add(n), reaches(n, to, seen))));
  for (const [from, tos] of arrows) for (const to of tos) if (reaches(to, from)) circles.push(`${from} → ${to}`);
  assert.equal(circles, []);
});

layers.run();
