/**
 * A function of this code base as a script the browser runs: its source, called with `args` (each
 * a function's source too). Run under tsx (`npm start`), esbuild keeps function names by wrapping
 * them in its `__name` helper, which the browser lacks: the script brings a stand-in that keeps the
 * function as it is.
 */
export const browserScript = (
  main: (...args: never[]) => unknown,
  ...args: ((...args: never[]) => unknown)[]
): string =>
  `"use strict";var __name=(target)=>target;(${main.toString()})(${args.map((arg) => arg.toString()).join(',')});\n`;
