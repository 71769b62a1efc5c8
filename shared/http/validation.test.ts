import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../kernel/errors';
import { parseRecentRequestPart, parseRequestPart } from './validation';

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

describe('parseRecentRequestPart', () => {
  const query = z.object({
    limit: z.preprocess(Number, z.number().int().max(20)).prefault(10),
    id: z.array(z.string()).optional(),
  });

  it('answers a part sent again with the value parsed the first time, frozen, and parses a different one', () => {
    // Act
    const first = parseRecentRequestPart(query, { limit: '5', id: ['a'] }, 'query');
    const again = parseRecentRequestPart(query, { limit: '5', id: ['a'] }, 'query');
    const other = parseRecentRequestPart(query, { limit: '6' }, 'query');

    // Assess
    expect(first).toEqual({ limit: 5, id: ['a'] });
    expect(again).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.id)).toBe(true);
    expect(other).toEqual({ limit: 6 });
  });

  it('keeps nothing of an invalid part: each time it is sent, it is refused', () => {
    // Act
    const refusals = [1, 2].map(() => {
      try {
        parseRecentRequestPart(query, { limit: '50' }, 'query');
        return undefined;
      } catch (error) {
        return error;
      }
    });

    // Assess
    expect(refusals.every((error) => error instanceof ValidationError)).toBe(true);
  });
});
