import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineEntity } from './entity';

const notes = defineEntity({
  name: 'note',
  token: 'NOTE',
  schema: z.object({ id: z.string(), author: z.string(), title: z.string() }),
  partition: (note: { author: string }) => [note.author],
  sortPrefix: 'NOTE#',
  sort: (note: { id: string }) => note.id,
  indexes: { byTitle: { index: 'gsi1', sort: (note) => `${note.title}#${note.id}` } },
  guards: { title: { token: 'NOTE_TITLE', value: (note) => note.title, holds: (note) => ({ id: note.id }) } },
  erase: async () => undefined,
});

describe('defineEntity', () => {
  it('builds keys under the organization and the token, the organization first', () => {
    expect(notes.key('acme', { author: 'ada', id: 'n1' })).toEqual({ pk: 'ORG#acme#NOTE#ada', sk: 'NOTE#n1' });
  });

  it('writes the entity attribute and the declared index attributes with the record', () => {
    const item = notes.item('acme', { id: 'n1', author: 'ada', title: 'Hello' });
    expect(item).toEqual({
      pk: 'ORG#acme#NOTE#ada',
      sk: 'NOTE#n1',
      entity: 'note',
      id: 'n1',
      author: 'ada',
      title: 'Hello',
      gsi1pk: 'ORG#acme#NOTE',
      gsi1sk: 'Hello#n1',
    });
    expect(notes.parse(item)).toEqual({ id: 'n1', author: 'ada', title: 'Hello' });
  });

  it('claims a guarded value with a conditional put of its own item', () => {
    expect(notes.guardPut('acme', 'title', { id: 'n1', author: 'ada', title: 'Hello' })).toEqual({
      Put: {
        Item: { pk: 'ORG#acme#NOTE_TITLE', sk: 'Hello', entity: 'note-title', id: 'n1' },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
  });

  it('keeps queries of a partition within the entity’s sort key prefix', () => {
    expect(notes.query('acme', { author: 'ada' }, { between: ['a', 'b'], forward: false })).toEqual({
      partition: 'ORG#acme#NOTE#ada',
      sortBetween: ['NOTE#a', 'NOTE#b'],
      forward: false,
    });
    expect(notes.queryIndex('acme', 'byTitle', {}, { prefix: 'Hel' })).toEqual({
      index: 'gsi1',
      partition: 'ORG#acme#NOTE',
      sortPrefix: 'Hel',
      forward: undefined,
    });
  });
});
