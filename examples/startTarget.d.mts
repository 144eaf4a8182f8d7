/** The types of examples/startTarget.mjs (what `npm start` decides first), for the TypeScript that imports it. */

/** `compiled` when `root` holds a build newer than every source file, else `source`. */
export function startTarget(root: string): 'compiled' | 'source';

/** Whether `args` name a command (or ask for the help or version) rather than options of the example. */
export function namesCommand(args: readonly string[]): boolean;
