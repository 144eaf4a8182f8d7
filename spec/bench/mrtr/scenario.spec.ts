import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadLib } from '../../../bench/mrtr/scenario.ts';

/** A folder of stand-in modules at `paths`, each exporting `name`. */
function fakeLib(modules: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mrtr-lib-'));
  for (const [path, name] of Object.entries(modules)) {
    const file = join(dir, `${path}.js`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `export const ${name} = '${path}';\n`);
  }
  return dir;
}

const load = suite('loadLib');
load('should load the current layout of lib/', async () => {
  const dir = fakeLib({
    'wrap/legacyServer/wrapLegacyServer': 'wrapLegacyServer',
    'wrap/mrtr/suspend': 'MrtrBroker',
    'transport/memory': 'createMemoryPair',
    'transport/nodeHttp': 'serveNodeHttp',
  });
  try {
    const lib = (await loadLib(dir, '.js')) as unknown as Record<string, string>;
    assert.is(lib['wrapLegacyServer'], 'wrap/legacyServer/wrapLegacyServer');
    assert.is(lib['MrtrBroker'], 'wrap/mrtr/suspend');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
load('should load the layout before it, where the wrap and the broker were single files', async () => {
  const dir = fakeLib({
    'wrap/wrapLegacyServer': 'wrapLegacyServer',
    'wrap/mrtr': 'MrtrBroker',
    'transport/memory': 'createMemoryPair',
    'transport/nodeHttp': 'serveNodeHttp',
  });
  try {
    const lib = (await loadLib(dir, '.js')) as unknown as Record<string, string>;
    assert.is(lib['wrapLegacyServer'], 'wrap/wrapLegacyServer');
    assert.is(lib['MrtrBroker'], 'wrap/mrtr');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
load('should say which module it could not find', async () => {
  const dir = fakeLib({ 'transport/memory': 'createMemoryPair' });
  try {
    await loadLib(dir, '.js').then(
      () => assert.unreachable('loaded'),
      (e: Error) => assert.match(e.message, 'wrap/legacyServer/wrapLegacyServer.js'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
load.run();
