import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { browserScript } from './browser-script';

describe('browserScript', () => {
  it("runs a function's source in the browser with its arguments, esbuild's kept names included", () => {
    // Prepare: source as tsx compiles it, naming a function through esbuild's helper.
    const main = new Function('double', 'globalThis.result = __name((value) => double(value), "twice")(21);') as (
      double: (value: number) => number,
    ) => void;
    const double = (value: number) => value * 2;
    const page: { result?: number } = {};

    // Act
    runInNewContext(browserScript(main, double), { globalThis: page });

    // Assess
    expect(page.result).toBe(42);
  });
});
