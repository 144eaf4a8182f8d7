/**
 * mcp-dual-era: make the legacy (2024-11-05 … 2025-11-25) and modern (2026-07-28) eras of the
 * Model Context Protocol work together. This entry point is runtime-neutral; Node-only pieces are
 * subpath exports.
 */
export * from './core/index.ts';
