import { describe, expect, it } from 'vitest';
import { conversationClock } from './session';

describe('conversationClock', () => {
  it('runs from the scenario start as long as the conversation has lasted, else on the real clock', () => {
    // Prepare
    const createdAt = '2026-11-25T10:00:00.000Z';
    const now = Date.parse('2026-11-25T10:05:30.000Z');

    // Act
    const simulated = conversationClock({ created_at: createdAt, clock_starts_at: '2031-02-03T09:30:00.000Z' }, now);
    const real = conversationClock({ created_at: createdAt }, now);

    // Assess
    expect(simulated).toBe('2031-02-03T09:35:30.000Z');
    expect(real).toBe('2026-11-25T10:05:30.000Z');
  });
});
