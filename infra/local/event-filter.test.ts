import { describe, expect, it } from 'vitest';
import { analyticsLakeStream } from '#shared/analytics/lake-feed';
import { passesFilters } from './event-filter';

const record = (eventName: string, images: { NewImage?: unknown; OldImage?: unknown }) => ({
  eventName,
  dynamodb: { Keys: { pk: { S: 'ORG#a#X' } }, ...images },
});
const entity = (name: string) => ({ entity: { S: name }, pk: { S: 'ORG#a#X' } });

describe('passesFilters', () => {
  it("passes the lake's entities' puts and removals and drops housekeeping, as the mapping's FilterCriteria does", () => {
    // Prepare
    const filters = analyticsLakeStream.filters;

    // Act
    const outcomes = {
      insert: passesFilters(record('INSERT', { NewImage: entity('message') }), filters),
      modify: passesFilters(
        record('MODIFY', { NewImage: entity('conversation'), OldImage: entity('conversation') }),
        filters,
      ),
      remove: passesFilters(record('REMOVE', { OldImage: entity('user') }), filters),
      bucket: passesFilters(record('MODIFY', { NewImage: entity('rate-limit-bucket') }), filters),
      lease: passesFilters(record('REMOVE', { OldImage: entity('conversation-lease') }), filters),
      untagged: passesFilters(record('INSERT', { NewImage: { pk: { S: 'ORG#a#X' } } }), filters),
    };

    // Assess
    expect(outcomes).toEqual({
      insert: true,
      modify: true,
      remove: true,
      bucket: false,
      lease: false,
      untagged: false,
    });
  });

  it('passes everything without filters, matches a list field by any element and refuses content filters', () => {
    expect(passesFilters({ a: 1 }, [])).toBe(true);
    expect(passesFilters({ tags: ['x', 'y'] }, [{ tags: ['y'] }])).toBe(true);
    expect(passesFilters({ tags: ['x'] }, [{ tags: ['y'] }])).toBe(false);
    expect(() => passesFilters({ a: 'abc' }, [{ a: [{ prefix: 'a' } as never] }])).toThrow(/only lists of values/);
  });
});
