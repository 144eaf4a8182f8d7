import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADAPTER_INFO } from '../../lib/core/translate/context.ts';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../../lib/core/version.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
};

const version = suite('the package version');

version('should be what package.json says, in the identity the adapter gives peers', () => {
  assert.is(PACKAGE_NAME, pkg.name);
  assert.is(PACKAGE_VERSION, pkg.version);
  assert.equal(ADAPTER_INFO, { name: pkg.name, version: pkg.version });
});

version('should be rewritten by `npm version`', () => {
  assert.match(pkg.scripts['version'] ?? '', /scripts\/syncVersion\.mjs/);
});

version.run();
