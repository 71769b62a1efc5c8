import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors';
import {
  matchesTags,
  parseCreatorFilters,
  parseSortBy,
  parseTagFilters,
  parseVersionFilter,
  sortableValue,
} from './list-params';

describe('parseSortBy', () => {
  it('reads +field, -field and bare field entries in order', () => {
    expect(parseSortBy(['-name', '+is_active', 'id'], ['name', 'is_active', 'id'])).toEqual([
      { field: 'name', direction: 'desc' },
      { field: 'is_active', direction: 'asc' },
      { field: 'id', direction: 'asc' },
    ]);
  });

  it('rejects a field that cannot be sorted on with a 422 naming the entry', () => {
    try {
      parseSortBy(['+name', '-secret'], ['name']);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues[0]?.loc).toEqual(['query', 'sort_by', 1]);
    }
  });
});

describe('tag filters', () => {
  it('matches key:value pairs, key:* for any value and key: for records whose value is none', () => {
    const tags = { team: 'core', tier: null };
    expect(matchesTags(tags, parseTagFilters(['team:core']))).toBe(true);
    expect(matchesTags(tags, parseTagFilters(['team:other']))).toBe(false);
    expect(matchesTags(tags, parseTagFilters(['team:*']))).toBe(true);
    expect(matchesTags(tags, parseTagFilters(['tier:']))).toBe(true);
    expect(matchesTags(tags, parseTagFilters(['missing:*']))).toBe(false);
    expect(matchesTags(tags, parseTagFilters(['team:core', 'tier:']))).toBe(true);
  });

  it('rejects an entry without a key', () => {
    expect(() => parseTagFilters([':x'])).toThrow(ValidationError);
  });
});

describe('parseCreatorFilters', () => {
  it('reads org_id,user_id pairs and rejects anything else', () => {
    expect(parseCreatorFilters(['acme,abc'])).toEqual([{ orgId: 'acme', userId: 'abc' }]);
    expect(() => parseCreatorFilters(['acme'])).toThrow(ValidationError);
  });
});

describe('parseVersionFilter', () => {
  it('reads a number, latest and an inclusive range', () => {
    expect(parseVersionFilter('3')).toEqual({ kind: 'range', low: 3, high: 3 });
    expect(parseVersionFilter('latest')).toEqual({ kind: 'latest' });
    expect(parseVersionFilter('2-5')).toEqual({ kind: 'range', low: 2, high: 5 });
    expect(parseVersionFilter(undefined)).toBeUndefined();
  });

  it('rejects an empty range and text', () => {
    expect(() => parseVersionFilter('5-2')).toThrow(ValidationError);
    expect(() => parseVersionFilter('newest')).toThrow(ValidationError);
  });
});

describe('sortableValue', () => {
  it('encodes numbers so that text order is numeric order', () => {
    expect(sortableValue(9) < sortableValue(10)).toBe(true);
    expect(sortableValue(false) < sortableValue(true)).toBe(true);
  });
});
