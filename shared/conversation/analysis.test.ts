import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../user/schemas';
import { mergeUserModels } from './analysis';

const memory = (id: string, content: string): MemoryRecord => ({
  id,
  user_id: 'u1',
  created_at: '2025-01-01T00:00:00.000Z',
  conversation_id: 'c1',
  service_id: 's1',
  references: ['m1'],
  content,
  context: 'In reply to the agent.',
});

const role = { description: 'Role in the company', tags: ['engineer', 'manager'] };
const hobby = { description: 'Hobbies', tags: ['sport'] };

describe('mergeUserModels', () => {
  it('adds each memory to the model of its dimension, creating models as needed', () => {
    // Prepare
    const previous = [{ content: '- Works as an engineer', insight_ids: ['old'], dimensions: [role] }];

    // Act
    const merged = mergeUserModels(previous, [memory('a', 'Leads a team'), memory('b', 'Plays tennis')], [role, hobby]);

    // Assess
    expect(merged).toEqual([
      { content: '- Works as an engineer\n- Leads a team', insight_ids: ['old', 'a'], dimensions: [role] },
      { content: '- Plays tennis', insight_ids: ['b'], dimensions: [hobby] },
    ]);
    expect(previous[0]?.insight_ids).toEqual(['old']);
  });

  it('keeps one untagged model when the organization has no user dimensions, without repeating lines', () => {
    // Act
    const merged = mergeUserModels([], [memory('a', 'Likes tea'), memory('b', 'Likes tea')], [null, null]);

    // Assess
    expect(merged).toEqual([{ content: '- Likes tea', insight_ids: ['a', 'b'], dimensions: [] }]);
  });
});
