import { describe, expect, it } from 'vitest';
import { sampleConversationRecord } from '../conversation/fixtures';
import { derivedFromConversation } from './derived-from';

describe('derivedFromConversation', () => {
  it('protects a record made from a real conversation as that conversation, naming only what grant conditions read of each message', () => {
    // Prepare
    const conversation = sampleConversationRecord('org-1', { user_id: 'vip', tags: { tier: 'gold' } });
    const messages = [
      { id: 'm1', message_type: 'user-message', message: 'My card number is …' },
      { id: 'm2', message_type: 'agent-message', message: 'Thank you.' },
    ];

    // Act
    const derived = derivedFromConversation(conversation, { messages, userModels: true });

    // Assess
    expect(derived).toEqual({
      conversation_id: conversation.id,
      user_id: 'vip',
      service_id: conversation.service_id,
      tags: { tier: 'gold' },
      messages: [
        { id: 'm1', message_type: 'user-message' },
        { id: 'm2', message_type: 'agent-message' },
      ],
      user_models: true,
    });
  });

  it('protects a record made from a copy (a simulated conversation) as the real conversation the copy came from', () => {
    // Prepare
    const copy = sampleConversationRecord('org-1', {
      user_id: 'synthetic',
      derived_from: { id: 'real', user_id: 'vip', service_id: 's1', tags: { tier: 'gold' } },
    });

    // Act
    const derived = derivedFromConversation(copy, { messages: [], userModels: false });

    // Assess
    expect(derived).toMatchObject({ conversation_id: 'real', user_id: 'vip', tags: { tier: 'gold' }, messages: [] });
  });
});
