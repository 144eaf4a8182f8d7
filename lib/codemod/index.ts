/**
 * `mcp-dual-era/codemod` (Node): the migration codemod as a library. `migrate` runs it over files
 * and directories (what `mcp-dual-era migrate` does); `migrateSource` runs it on one file's text.
 */
export { migrate, type FileReport, type MigrateOptions, type MigrateReport } from './migrate.ts';
export {
  markerLines,
  migrateSource,
  type MarkerLine,
  type MigrateMode,
  type MigrateSourceOptions,
  type SourceOutcome,
} from './migrateSource.ts';
export { MARKER_TAG, MARKERS, type MarkerCode } from './markers.ts';
export { renderReport, reportJson } from './report.ts';
export type { Rewrite } from './fileRewrite.ts';
