/**
 * `addDependency`: `mcp-dual-era` goes into `dependencies` in alphabetical place, laid out like
 * the file around it; nothing changes when any dependency list already has it.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { applyEdits } from '../../lib/codemod/edits.ts';
import { addDependency } from '../../lib/codemod/packageJson.ts';

const add = (text: string) => {
  const edit = addDependency(text, 'mcp-dual-era', '^0.1.0');
  return edit ? applyEdits(text, [edit]) : text;
};

const deps = suite('addDependency');

deps('should insert in alphabetical place, with the indentation of the list', () => {
  const text = '{\n    "name": "x",\n    "dependencies": {\n        "express": "^5.0.0",\n        "zod": "^4.0.0"\n    }\n}\n';
  assert.is(
    add(text),
    '{\n    "name": "x",\n    "dependencies": {\n        "express": "^5.0.0",\n        "mcp-dual-era": "^0.1.0",\n        "zod": "^4.0.0"\n    }\n}\n',
  );
});

deps('should insert first when every name sorts after it, on one line when the list is on one line', () => {
  assert.is(add('{ "dependencies": { "zod": "^4.0.0" } }'), '{ "dependencies": { "mcp-dual-era": "^0.1.0", "zod": "^4.0.0" } }');
});

deps('should fill an empty list and add a missing one', () => {
  assert.is(
    add('{\n  "name": "x",\n  "dependencies": {}\n}\n'),
    '{\n  "name": "x",\n  "dependencies": {\n    "mcp-dual-era": "^0.1.0"\n  }\n}\n',
  );
  assert.is(
    add('{\n  "name": "x",\n  "type": "module"\n}\n'),
    '{\n  "name": "x",\n  "type": "module",\n  "dependencies": {\n    "mcp-dual-era": "^0.1.0"\n  }\n}\n',
  );
  assert.is(add('{ "name": "x" }'), '{ "name": "x", "dependencies": { "mcp-dual-era": "^0.1.0" } }');
});

deps('should change nothing when the package already depends on it, is that package, or the text is not JSON', () => {
  assert.is(addDependency('{ "devDependencies": { "mcp-dual-era": "^0.1.0" } }', 'mcp-dual-era', '^0.1.0'), undefined);
  assert.is(addDependency('{ "name": "mcp-dual-era", "dependencies": {} }', 'mcp-dual-era', '^0.1.0'), undefined);
  assert.is(addDependency('{ "name": ', 'mcp-dual-era', '^0.1.0'), undefined);
});

deps.run();
