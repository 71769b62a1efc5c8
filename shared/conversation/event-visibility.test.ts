import { describe, expect, it } from 'vitest';
import { type ConversationEvent, conversationEvent } from '../../events/stream-events';
import type { Caller, PermissionGrant } from '../kernel/caller';
import { shownEvent, visibilityOf, withheldFailure } from './event-visibility';
import { interruptedError } from './interruptions';

const conversation = { id: 'c'.repeat(24), user_id: 'owner', service_id: 's'.repeat(24), tags: {} };
const interactionId = 'a'.repeat(24);
const id = (n: number) => `${interactionId}-${String(n).padStart(6, '0')}`;

const callerWith = (grants: Omit<PermissionGrant, 'action'>[], userId = 'reader'): Caller => ({
  userId,
  homeOrgId: 'acme',
  orgId: 'acme',
  roleId: 'role',
  roleName: 'Role',
  grants: grants.map((grant) => ({ action: 'Allow', ...grant })),
  email: 'reader@example.com',
  isVerified: true,
  tokenType: 'Bearer',
});

/** One turn's events, as the stream stores them. */
const turn: ConversationEvent[] = [
  { type: 'user-message-available', message_id: 'user-1', user_message: 'My printer jams', event_id: id(0) },
  {
    type: 'current-agent-action',
    action: { type: 'navigate-state-machine-reflection-state-reflection-generated', reflection: 'They are upset' },
    event_id: id(1),
  },
  {
    type: 'new-message',
    message: 'UklGRg==',
    transcript_alignment: [[0, 'C']],
    stop: true,
    sequence_number: 0,
    message_id: 'agent-1',
    event_id: id(2),
  },
  {
    type: 'interaction-complete',
    message_id: 'agent-1',
    interaction_id: interactionId,
    full_message: 'Clean the rollers.',
    conversation_completed: false,
    timings: { total_ms: 5, model_first_token_ms: 1, model_total_ms: 3, tool_calls: [{ name: 'lookup', ms: 1 }] },
    usage: { model_calls: [], input_tokens: 1, output_tokens: 2, cost_usd: 0 },
    event_id: id(3),
  },
  { type: 'error', http_error_code: 503, error_description: 'Retry.', event_id: id(4) },
];

const shownTo = (caller: Caller, insights: boolean, messageType?: 'user-message' | 'external-event') => {
  const rule = visibilityOf(caller, conversation, { insights, agentActionType: /.*/ });
  return Promise.all(turn.map((event) => shownEvent(rule, event, async () => messageType))).then((events) =>
    events.filter((event) => event !== undefined),
  );
};

const byType = (events: ConversationEvent[], type: ConversationEvent['type']) =>
  events.find((event) => event.type === type) as Record<string, unknown>;

describe('visibilityOf', () => {
  it('empties message text and audio, and leaves out agent actions, timings and usage, for a caller who reads only the conversation', async () => {
    // Act
    const shown = await shownTo(
      callerWith([{ permission_name: 'Conversation:GetConversation', conditions: {} }]),
      false,
    );

    // Assess
    expect(shown.map((event) => event.type)).toEqual([
      'user-message-available',
      'new-message',
      'interaction-complete',
      'error',
    ]);
    expect(byType(shown, 'user-message-available').user_message).toBe('');
    expect(byType(shown, 'new-message')).toMatchObject({ message: '', transcript_alignment: null, stop: true });
    const complete = byType(shown, 'interaction-complete');
    expect(complete.full_message).toBe('');
    expect(complete).not.toHaveProperty('timings');
    expect(complete).not.toHaveProperty('usage');
    // Every event stays valid for the reference's clients: required fields are present, emptied.
    for (const event of shown) expect(conversationEvent.parse(event)).toEqual(event);
  });

  it("sends the conversation's own user its messages, without timings, usage or agent actions", async () => {
    // Act
    const shown = await shownTo(callerWith([], 'owner'), false);

    // Assess
    expect(byType(shown, 'user-message-available').user_message).toBe('My printer jams');
    expect(byType(shown, 'new-message').message).toBe('UklGRg==');
    expect(byType(shown, 'interaction-complete')).toMatchObject({ full_message: 'Clean the rollers.' });
    expect(byType(shown, 'interaction-complete')).not.toHaveProperty('usage');
    expect(byType(shown, 'current-agent-action')).toBeUndefined();
  });

  it('shows each message by its type when GetMessage is conditioned on message_type', async () => {
    // Prepare
    const agentOnly = callerWith([
      {
        permission_name: 'Conversation:GetMessage',
        conditions: { message_type: { type: 'Equals', value: 'agent-message' } },
      },
    ]);
    const eventsOnly = callerWith([
      {
        permission_name: 'Conversation:GetMessage',
        conditions: { message_type: { type: 'In', values: ['external-event'] } },
      },
    ]);

    // Act
    const agentView = await shownTo(agentOnly, false, 'user-message');
    const asUserMessage = await shownTo(eventsOnly, false, 'user-message');
    const asExternalEvent = await shownTo(eventsOnly, false, 'external-event');
    const typeUnknown = await shownTo(eventsOnly, false, undefined);

    // Assess
    expect(byType(agentView, 'user-message-available').user_message).toBe('');
    expect(byType(agentView, 'new-message').message).toBe('UklGRg==');
    expect(byType(agentView, 'interaction-complete').full_message).toBe('Clean the rollers.');
    expect(byType(asUserMessage, 'user-message-available').user_message).toBe('');
    expect(byType(asExternalEvent, 'user-message-available').user_message).toBe('My printer jams');
    expect(byType(asExternalEvent, 'new-message').message).toBe('');
    expect(byType(typeUnknown, 'user-message-available').user_message).toBe('');
  });

  it('shows timings, usage and agent actions with the insights permissions, and a reflection only with its inner thought', async () => {
    // Prepare
    const insightOnly = callerWith([{ permission_name: 'Conversation:*', conditions: {} }]);
    const noThoughts = callerWith([
      { permission_name: 'Conversation:*', conditions: {} },
      {
        permission_name: 'Conversation:GetMessage',
        conditions: { message_type: { type: 'Equals', value: 'agent-inner-thought' } },
        action: 'Deny',
      } as PermissionGrant,
    ]);

    // Act
    const full = await shownTo(insightOnly, true);
    const withoutThoughts = await shownTo(noThoughts, true);

    // Assess
    expect(byType(full, 'interaction-complete')).toEqual(turn[3]);
    expect(byType(full, 'current-agent-action')).toEqual(turn[1]);
    expect((byType(withoutThoughts, 'current-agent-action').action as { reflection: string }).reflection).toBe('');
  });

  it("tells a caller without the insights permissions a failure's generic code and description, never the state or tool it names", async () => {
    // Prepare
    const failed: ConversationEvent = {
      type: 'error',
      http_error_code: 409,
      error_description: "State 'triage' uses tool 0123, which has no deployed version matching '>=1'.",
      event_id: id(5),
    };
    const interrupted: ConversationEvent = { ...interruptedError, event_id: id(6) };
    const reader = callerWith([{ permission_name: 'Conversation:*', conditions: {} }]);
    const shown = async (insights: boolean, event: ConversationEvent) =>
      shownEvent(visibilityOf(reader, conversation, { insights, agentActionType: /.*/ }), event, async () => undefined);

    // Act
    const withInsights = await shown(true, failed);
    const without = await shown(false, failed);
    const plainWithout = await shown(false, interrupted);
    const ownUser = await shownEvent(
      visibilityOf(callerWith([], 'owner'), conversation, { insights: false, agentActionType: /.*/ }),
      failed,
      async () => undefined,
    );

    // Assess
    expect(withInsights).toEqual(failed);
    expect(without).toEqual({ type: 'error', event_id: id(5), ...withheldFailure });
    expect(ownUser).toEqual(without);
    expect(JSON.stringify(without)).not.toMatch(/triage|0123|tool/);
    expect(plainWithout).toEqual(interrupted);
  });

  it('looks a user message up only when the caller grants tell user messages and external events apart', async () => {
    // Prepare
    const looked: string[] = [];
    const lookup = async (messageId: string) => {
      looked.push(messageId);
      return 'user-message' as const;
    };
    const plain = visibilityOf(
      callerWith([{ permission_name: 'Conversation:GetMessage', conditions: {} }]),
      conversation,
      {
        insights: false,
        agentActionType: /.*/,
      },
    );
    const typed = visibilityOf(
      callerWith([
        {
          permission_name: 'Conversation:GetMessage',
          conditions: { message_type: { type: 'Equals', value: 'user-message' } },
        },
      ]),
      conversation,
      { insights: false, agentActionType: /.*/ },
    );

    // Act
    const plainShown = await shownEvent(plain, turn[0] as ConversationEvent, lookup);
    const typedShown = await shownEvent(typed, turn[0] as ConversationEvent, lookup);

    // Assess
    expect(plainShown).toEqual(turn[0]);
    expect(typedShown).toEqual(turn[0]);
    expect(looked).toEqual(['user-1']);
  });
});
