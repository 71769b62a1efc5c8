import { describe, expect, it } from 'vitest';
import { callerPattern, loadPatternEngine, maxPatternLength, PatternError } from './caller-patterns';
import { ValidationError } from './errors';

const loc = ['query', 'current_agent_action_type'];

/** Patterns that backtrack exponentially in a JavaScript RegExp on a text that almost matches. */
const catastrophic = ['^(.*.*)*X$', '(a+)+$', '(a|aa)+$', '(.*a){20}$', '^(\\w+\\s?)+$', '(x+x+)+y'];

const refusal = async (source: string): Promise<ValidationError> => {
  const error = await callerPattern(source, loc).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(ValidationError);
  return error as ValidationError;
};

describe('callerPattern', () => {
  it('runs the catastrophic patterns to an answer on long texts', async () => {
    // Prepare
    const text = `${'a'.repeat(5_000)}!`;

    // Act
    const answers = await Promise.all(
      catastrophic.map(async (source) => (await callerPattern(source, loc)).test(text)),
    );

    // Assess
    expect(answers).toEqual([false, false, false, false, false, false]);
    expect((await callerPattern('(a|aa)+$', loc)).test('aaaa')).toBe(true);
  });

  it('searches a text as RegExp.test does, in JavaScript and Python syntax', async () => {
    expect((await callerPattern('tool', loc)).test('call-tool-now')).toBe(true);
    expect((await callerPattern('^tool$', loc)).test('call-tool-now')).toBe(false);
    expect((await callerPattern('(?i)^TOOL', loc)).test('tool-call')).toBe(true);
    expect((await callerPattern('^(?P<kind>tool|dynamic)-', loc)).test('dynamic-behavior-triggered')).toBe(true);
    expect((await callerPattern('^(?<kind>tool)-\\u0063', loc)).test('tool-call')).toBe(true);
  });

  it('answers the patterns clients send by default, and compiles each other pattern once', async () => {
    // Act
    const all = await callerPattern('^.*$', loc);
    const none = await callerPattern('^$', loc);
    const first = await callerPattern('^tool-call$', loc);
    const again = await callerPattern('^tool-call$', loc);

    // Assess
    expect([all.test('tool-call'), none.test('tool-call')]).toEqual([true, false]);
    expect(again).toBe(first);
  });

  it('refuses backreferences and lookaround with a 422 naming the parameter', async () => {
    for (const source of ['(a)\\1', '(?=a)a', '(?!a)b', '(?<=a)b', '(?<!a)b', '(']) {
      const error = await refusal(source);
      expect(error.statusCode).toBe(422);
      expect(error.issues).toEqual([{ loc, msg: expect.stringMatching(/^The pattern /), type: 'value_error' }]);
    }
  });

  it('refuses a pattern longer than its bound or compiling to too large a program', async () => {
    expect((await refusal('a'.repeat(maxPatternLength + 1))).issues[0]?.msg).toContain('longer than');
    expect((await refusal('(.*a){1000}')).issues[0]?.msg).toContain('instructions');
    expect((await refusal('((a{100}){100}){100}')).issues[0]?.msg).toContain('repeat');
  });
});

describe('loadPatternEngine', () => {
  it('throws a PatternError for a pattern it does not run', async () => {
    const compile = await loadPatternEngine();
    expect(() => compile('(?=x)')).toThrow(PatternError);
    expect(compile('^x{3}$').test('xxx')).toBe(true);
  });
});
