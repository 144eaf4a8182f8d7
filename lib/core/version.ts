/**
 * This package's name and version, as its package.json says, for the identity the adapter gives
 * peers (`clientInfo`, `serverInfo`) and `--version`. `npm version` rewrites this file from
 * package.json (its `version` script); spec/core/version.spec.ts fails when the two disagree.
 */

/** The package's name. */
export const PACKAGE_NAME = 'mcp-dual-era';

/** The package's version. */
export const PACKAGE_VERSION = '0.1.0';
