import { describe, expect, it } from 'vitest';
import { BuildError, describeInputErrors, inputValidator } from './project';

describe('inputValidator', () => {
  it("runs the schema's patterns in linear time, catastrophic ones included", async () => {
    // Prepare
    const validate = await inputValidator({
      type: 'object',
      properties: { code: { type: 'string', pattern: '^(a+)+$' } },
      patternProperties: { '^(x|xx)+$': { type: 'number' } },
    });

    // Act / Assess
    expect(validate({ code: `${'a'.repeat(5_000)}!` })).toBe(false);
    expect(await describeInputErrors(validate)).toContain('must match pattern');
    expect(validate({ code: 'aaa', [`${'x'.repeat(5_000)}!`]: 'any' })).toBe(true);
    expect(validate({ code: 'aaa', xxxx: 'not a number' })).toBe(false);
  });

  it('fails the build of a schema whose pattern needs backtracking', async () => {
    await expect(
      inputValidator({ type: 'object', properties: { code: { type: 'string', pattern: '^(?!admin)' } } }),
    ).rejects.toBeInstanceOf(BuildError);
  });

  it('compiles a schema with an $id again, as every invocation of its tool does', async () => {
    // Prepare
    const schema = () => ({ $id: 'https://example.com/tool-input', type: 'object', required: ['city'] });

    // Act
    const first = await inputValidator(schema());
    const second = await inputValidator({ ...schema(), required: ['country'] });

    // Assess
    expect(first({ city: 'Lyon' })).toBe(true);
    expect(second({ city: 'Lyon' })).toBe(false);
    expect(await inputValidator(schema())).toBe(first);
  });
});
