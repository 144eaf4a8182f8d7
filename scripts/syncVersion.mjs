// Writes package.json's version into lib/core/version.ts; run by `npm version` (package.json's `version` script).
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const file = new URL('lib/core/version.ts', root);
const text = readFileSync(file, 'utf8');
const next = text.replace(/export const PACKAGE_VERSION = '[^']*';/, `export const PACKAGE_VERSION = '${version}';`);
if (next === text && !text.includes(`'${version}'`)) throw new Error('lib/core/version.ts has no PACKAGE_VERSION line');
writeFileSync(file, next);
