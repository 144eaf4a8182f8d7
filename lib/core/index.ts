/**
 * The pure core of mcp-dual-era: the wire vocabulary of both MCP eras and the translator between
 * them. No I/O, clock, randomness or timers are reachable from here.
 */
export * from './era.ts';
export * from './errors.ts';
export * from './outcome.ts';
export * from './primitives.ts';
export * from './jsonrpc.ts';
export * from './legacy/capabilities.ts';
export * from './legacy/lifecycle.ts';
export * from './legacy/inputs.ts';
export * from './legacy/notifications.ts';
export * from './legacy/results.ts';
export * from './legacy/methods.ts';
export * from './legacy/tasks.ts';
export * from './modern/capabilities.ts';
export * from './modern/lifecycle.ts';
export * from './modern/inputs.ts';
export * from './modern/notifications.ts';
export * from './modern/results.ts';
export * from './modern/methods.ts';
export * from './modern/tasks.ts';
export * from './translate/index.ts';
