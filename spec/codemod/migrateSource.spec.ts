/**
 * `migrateSource` against the fixture corpus in fixtures/codemod: every `<case>.input.<ext>`
 * becomes exactly `<case>.output.<ext>` (wrap mode for `wrap-*`, native mode for `native-*`), a
 * second run changes nothing, every `<case>.unchanged.<ext>` comes back byte for byte in both
 * modes, and no file is left unpaired. Also the safety net: files that do not parse, and rewrites
 * that would not, leave the text as it was.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkedRewrite, migrateSource, type MigrateMode } from '../../lib/codemod/migrateSource.ts';
import { ROOT } from '../helpers/everything.ts';

const FIXTURES = resolve(ROOT, 'fixtures/codemod');
const names = readdirSync(FIXTURES).sort();
const read = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const modeOf = (name: string): MigrateMode => (name.startsWith('native-') ? 'native' : 'wrap');
const run = (name: string, text: string, mode = modeOf(name)) =>
  migrateSource(text, { fileName: join(FIXTURES, name), mode, packageType: 'module' });

const pairs = suite('migrateSource: fixture pairs');

pairs('should pair every input with an output, and name every file as a case', () => {
  for (const name of names) {
    const m = /^(wrap|native|leave)-[a-z0-9-]+\.(input|output|unchanged)\.(ts|js|cjs|mjs)$/.exec(name);
    assert.ok(m, `${name} is named <wrap|native|leave>-<case>.<input|output|unchanged>.<ext>`);
    if (m![2] === 'input') assert.ok(names.includes(name.replace('.input.', '.output.')), `${name} has an output`);
    if (m![2] === 'output') assert.ok(names.includes(name.replace('.output.', '.input.')), `${name} has an input`);
  }
});

for (const name of names.filter((n) => n.includes('.input.'))) {
  const expected = name.replace('.input.', '.output.');
  pairs(`should rewrite ${name} into ${expected}, and change nothing on a second run`, () => {
    const first = run(name, read(name));
    assert.is(first.error, undefined);
    assert.fixture(first.text, read(expected));
    const again = run(expected, first.text, modeOf(name));
    assert.is(again.error, undefined);
    assert.is(again.text, first.text, 'idempotent');
    assert.is(again.markersAdded, 0);
    assert.equal(again.rewrites, []);
  });
}

for (const name of names.filter((n) => n.includes('.unchanged.'))) {
  pairs(`should leave ${name} as it is in both modes`, () => {
    for (const mode of ['wrap', 'native'] as const) {
      const outcome = run(name, read(name), mode);
      assert.is(outcome.text, read(name), mode);
      assert.equal(outcome.rewrites, [], mode);
      assert.is(outcome.markers.length, 0, mode);
    }
  });
}

pairs.run();

const report = suite('migrateSource: what it reports');

report('should list each rewrite with its line in the original', () => {
  const outcome = run('wrap-stdio-server.input.ts', read('wrap-stdio-server.input.ts'));
  assert.equal(outcome.rewrites, [
    { line: 26, what: 'stdio: server.connect(new StdioServerTransport()) → serveStdio(wrapLegacyServer({ upstream }))' },
  ]);
  assert.equal(outcome.imports, ['mcp-dual-era/server']);
});

report('should list each marker with its line in the result', () => {
  const outcome = run('native-sequential.input.ts', read('native-sequential.input.ts'));
  assert.equal(
    outcome.markers.map((m) => [m.line, m.code]),
    [
      [7, 'sequential-pushes'],
      [9, 'sequential-pushes'],
    ],
  );
  assert.is(outcome.markersAdded, 2);
  assert.ok(outcome.text.split('\n')[6]!.trim().startsWith('// @mcp-dual-era sequential-pushes:'));
});

report.run();

const safety = suite('migrateSource: safety');

safety('should leave a file that does not parse as it is, saying where', () => {
  const text =
    "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';\nawait server.connect(new StdioServerTransport(;\n";
  const outcome = migrateSource(text, { fileName: '/x/broken.ts', mode: 'wrap' });
  assert.is(outcome.text, text);
  assert.match(outcome.error!, /^does not parse \(2:\d+ /);
});

safety('should refuse a rewrite that would not parse, keeping the original', () => {
  const original = 'const a = 1;\n';
  const refused = checkedRewrite('/x/a.ts', original, 'const a = ;\n');
  assert.match(refused.error!, /^left unchanged: the rewrite would not parse \(1:\d+ /);
  assert.equal(checkedRewrite('/x/a.ts', original, 'const a = 2;\n'), {});
});

safety('should rewrite JavaScript without TypeScript syntax', () => {
  const outcome = run('native-javascript.input.js', read('native-javascript.input.js'));
  assert.not.match(outcome.text, / as [A-Z]/);
  assert.match(outcome.text, /\/\*\* @type \{import\('@modelcontextprotocol\/server'\)\.ElicitResult\} \*\//);
});

safety.run();
