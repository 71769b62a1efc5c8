import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../kernel/errors';
import { parseRequestPart } from './validation';

describe('parseRequestPart', () => {
  const body = z.object({ name: z.string().min(1), limit: z.number().int().max(20).optional() });

  it('returns the parsed value when valid', () => {
    expect(parseRequestPart(body, { name: 'x' }, 'body')).toEqual({ name: 'x' });
  });

  it('reports every problem with loc, msg and type in the FastAPI style', () => {
    try {
      parseRequestPart(body, { limit: 50 }, 'body');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([
        { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
        { loc: ['body', 'limit'], msg: expect.stringContaining('20'), type: 'less_than_equal' },
      ]);
    }
  });
});
