import { afterEach, describe, expect, it, vi } from 'vitest';
import { withProductionTime } from './fragment-times';

const piece = {
  type: 'new-message' as const,
  message: 'Hello',
  transcript_alignment: null,
  stop: false,
  sequence_number: 0,
  message_id: 'a'.repeat(24),
};

describe('withProductionTime', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('leaves events exactly as they are by default', () => {
    // Act
    const event = withProductionTime(piece);

    // Assess
    expect(event).toBe(piece);
  });

  it('stamps message pieces with the epoch milliseconds they were produced at when DIAGNOSTIC_FRAGMENT_TIMES=true', () => {
    // Prepare
    vi.stubEnv('DIAGNOSTIC_FRAGMENT_TIMES', 'true');
    const before = Date.now();

    // Act
    const event = withProductionTime(piece) as typeof piece & { diagnostic_produced_at: number };

    // Assess
    expect(event).toMatchObject(piece);
    expect(event.diagnostic_produced_at).toBeGreaterThanOrEqual(before - 1);
    expect(event.diagnostic_produced_at).toBeLessThanOrEqual(Date.now() + 1);
  });

  it('stamps nothing but message pieces', () => {
    // Prepare
    vi.stubEnv('DIAGNOSTIC_FRAGMENT_TIMES', 'true');
    const created = { type: 'conversation-created' as const, conversation_id: 'b'.repeat(24) };

    // Act
    const event = withProductionTime(created);

    // Assess
    expect(event).toBe(created);
  });
});
