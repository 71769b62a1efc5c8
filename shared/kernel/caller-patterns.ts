import type { RE2JS } from 're2js';
import { ValidationError, type ValidationIssue } from './errors';
import { loadOnce } from './load-once';

/** What tells whether a text matches: one of the platform's own RegExps, or a caller's compiled pattern. */
export interface TextPattern {
  test(text: string): boolean;
}

/** The longest regular expression a caller may send, in characters. */
export const maxPatternLength = 500;
/**
 * The most instructions a caller's pattern may compile to (RE2's program size, which the cost of
 * a match grows with): `(.*a){20}` is 102, a pattern naming a few action types about 50.
 */
export const maxPatternProgramSize = 500;

/** A caller's pattern the engine does not run; the message completes "The pattern ...". */
export class PatternError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PatternError';
  }
}

/** Compiles a caller's pattern, or throws a {@link PatternError}; the result searches a text as `RegExp.test` does. */
export type PatternCompiler = (source: string) => TextPattern;

/**
 * The engine for patterns callers write: RE2 (re2js, a pure-JavaScript port), which matches in
 * time linear in the text for every pattern, so none backtracks for minutes as `^(.*.*)*X$`
 * does in a JavaScript RegExp. It reads JavaScript's syntax (and Python's `(?P<name>...)`,
 * `(?i)`) but has no backreferences or lookaround: a pattern using them is refused, as is one
 * longer than {@link maxPatternLength} or compiling to more than {@link maxPatternProgramSize}
 * instructions. Loaded on first use: most requests send the default pattern, which never needs it.
 */
export const loadPatternEngine: () => Promise<PatternCompiler> = loadOnce(() =>
  import('re2js').then(({ RE2JS }) => (source: string): TextPattern => {
    if (source.length > maxPatternLength) throw new PatternError(`is longer than ${maxPatternLength} characters`);
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(source));
    } catch (error) {
      throw new PatternError(
        `is not one a linear-time engine runs (no backreferences or lookaround): ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (compiled.programSize() > maxPatternProgramSize) {
      throw new PatternError(`compiles to more than ${maxPatternProgramSize} instructions`);
    }
    return compiled;
  }),
);

/**
 * Patterns every client sends (the reference's default, and the one that matches nothing),
 * answered by the platform's own RegExps without loading the engine. On these texts (type names,
 * one line each) they match as RE2 would.
 */
const commonPatterns: ReadonlyMap<string, TextPattern> = new Map([
  ['^.*$', /^.*$/],
  ['^$', /^$/],
]);

/** Patterns compiled lately, and refusals: each distinct pattern is compiled once while it stays here. */
const compiled = new Map<string, TextPattern | PatternError>();
const maxCompiled = 100;

/**
 * A pattern from a request, compiled by the linear-time engine (once per distinct pattern while
 * it is among the last {@link maxCompiled}); one the engine refuses is a 422 at `loc`.
 */
export const callerPattern = async (source: string, loc: ValidationIssue['loc']): Promise<TextPattern> => {
  let pattern = commonPatterns.get(source) ?? compiled.get(source);
  if (pattern === undefined) {
    const compile = await loadPatternEngine();
    try {
      pattern = compile(source);
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      pattern = error;
    }
    compiled.set(source, pattern);
    // The oldest goes first: a Map iterates in insertion order.
    if (compiled.size > maxCompiled) compiled.delete(compiled.keys().next().value as string);
  }
  if (pattern instanceof PatternError) {
    throw new ValidationError([{ loc, msg: `The pattern ${pattern.message}.`, type: 'value_error' }]);
  }
  return pattern;
};
