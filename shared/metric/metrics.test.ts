import { describe, expect, it } from 'vitest';
import { relevance } from './metrics';

describe('relevance', () => {
  it('ranks the whole query in the name over name words over description words, and 0 for no match', () => {
    // Prepare
    const metric = (name: string, description: string) => ({ name, description });

    // Act
    const scores = [
      relevance('refund rate', metric('Refund rate', 'Share of refunds.')),
      relevance('refund rate', metric('Refund speed', 'How fast the rate of refunds is.')),
      relevance('refund rate', metric('Refunds given', 'Whether a refund was given.')),
      relevance('refund rate', metric('Politeness', 'Whether the refund was polite.')),
      relevance('refund rate', metric('Politeness', 'Whether the agent was polite.')),
    ];

    // Assess
    expect(scores).toEqual([11, 4, 2, 1, 0]);
  });
});
