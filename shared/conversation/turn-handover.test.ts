import { describe, expect, it } from 'vitest';
import type { Caller } from '../kernel/caller';
import { sampleStateMachineVersion } from '../state-machine/fixtures';
import type { ActionState } from '../state-machine/schemas';
import type { TurnOutcome } from './engine/contracts';
import { withHandover } from './turn-handover';

const greet = sampleStateMachineVersion().states[0] as ActionState;

const outcomeWith = (fields: Partial<TurnOutcome>): TurnOutcome => ({
  state: greet,
  action: 'Greet the user warmly and ask how you can help today.',
  agentMessageId: 'message-1',
  agentMessage: 'Let me put you through to a colleague.',
  transitions: [],
  innerThoughts: [],
  workingMemory: [],
  reflections: [],
  triggeredDynamicBehavior: null,
  engageUserToolCallLogs: [],
  selectNextActionToolCallLogs: [],
  completed: false,
  escalation: null,
  transfer: null,
  ...fields,
});

const callerAt = (email: string) => ({ email }) as Caller;
const phoneCaller = callerAt('+14155550199@phone.invalid');
const chatUser = callerAt('ada@example.com');
const transfer = { phone_to: '+14155550100', mode: 'warm' as const, summary: 'A billing dispute.' };

describe('withHandover', () => {
  it('completes a phone call’s conversation as transferred, with what the person is told and where the agent was', () => {
    // Act
    const { outcome, handover } = withHandover(
      outcomeWith({ transfer, escalation: { reason: 'Needs a person' } }),
      phoneCaller,
      'interaction-1',
    );

    // Assess
    expect(outcome).toMatchObject({ completed: true, escalation: null });
    expect(handover).toEqual({
      phone_to: '+14155550100',
      mode: 'warm',
      summary: 'A billing dispute.',
      interaction_id: 'interaction-1',
      state_name: 'greet',
    });
  });

  it('escalates a conversation outside a call to an operator, naming the person asked for, and goes on', () => {
    // Act
    const { outcome, handover } = withHandover(outcomeWith({ transfer }), chatUser, 'interaction-1');

    // Assess
    expect(handover).toBeNull();
    expect(outcome.completed).toBe(false);
    expect(outcome.escalation?.reason).toBe(
      'The agent hands the user to a person: +14155550100 (warm transfer). A billing dispute.',
    );
  });

  it("keeps the state's own escalation reason outside a call, and leaves a turn without a transfer as it was", () => {
    // Prepare
    const escalating = outcomeWith({ transfer, escalation: { reason: 'Needs a person' } });
    const plain = outcomeWith({});

    // Act
    const escalated = withHandover(escalating, chatUser, 'interaction-1');
    const untouched = withHandover(plain, phoneCaller, 'interaction-1');

    // Assess
    expect(escalated.outcome.escalation).toEqual({ reason: 'Needs a person' });
    expect(untouched).toEqual({ outcome: plain, handover: null });
  });
});
