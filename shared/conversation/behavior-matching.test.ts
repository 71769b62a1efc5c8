import { describe, expect, it } from 'vitest';
import { normalized } from '../llm/embedding';
import { type MatchableBehavior, rankBehaviors } from './behavior-matching';

const behavior = (setId: string, vectors: number[][]): MatchableBehavior => ({
  setId,
  version: 1,
  triggers: vectors.map((_, index) => `trigger ${index}`),
  actions: [],
  vectors: vectors.map(normalized),
});

describe('rankBehaviors', () => {
  const message = normalized([1, 0, 0]);
  const behaviors = [
    behavior('a', [
      [0, 1, 0],
      [1, 1, 0],
    ]),
    behavior('b', [[1, 0.1, 0]]),
    behavior('c', [[0, 0, 1]]),
  ];

  it('ranks by the best trigger of each set and leaves out those under the threshold', () => {
    // Act
    const ranked = rankBehaviors(message, behaviors, { threshold: 0.5, limit: 5 });

    // Assess
    expect(ranked.map((candidate) => candidate.versionInfo[0])).toEqual(['b', 'a']);
    expect(ranked[1]?.relevance).toBeCloseTo(Math.SQRT1_2, 5);
  });

  it('keeps at most the limit, plus the previous selection whatever its score', () => {
    // Act
    const ranked = rankBehaviors(message, behaviors, { threshold: 0.5, limit: 1, previousSetId: 'c' });

    // Assess
    expect(ranked.map((candidate) => candidate.versionInfo[0])).toEqual(['b', 'c']);
  });
});
