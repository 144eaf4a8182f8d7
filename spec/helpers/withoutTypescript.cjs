/**
 * A preload (`node --require`) that makes `typescript` impossible to find, as in an install where
 * the compiler is missing: for specs of what a command does when a dependency cannot be loaded.
 */
const Module = require('node:module');

const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'typescript') {
    const error = new Error("Cannot find module 'typescript'");
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolveFilename.call(this, request, ...rest);
};
