import { describe, expect, it } from 'vitest';
import {
  analysisQueueMessage,
  postProcessingEventId,
  simulationQueueMessage,
  toolBuildQueueMessage,
  webhookQueueMessage,
} from './queue-messages';
import {
  sampleAnalysisMessage,
  sampleBacktestReplayMessage,
  sampleCreateConversationStream,
  sampleErrorEvent,
  sampleIds,
  sampleInteractStream,
  sampleSimulationMessage,
  sampleToolBuildMessage,
  sampleWebhookMessage,
  sampleWebhookMessages,
} from './samples';
import { createConversationEvent, interactEvent, newMessageEvent } from './stream-events';

describe('stream events', () => {
  it('accepts every sample event of both streams', () => {
    // Act / Assess
    for (const event of sampleCreateConversationStream) expect(createConversationEvent.parse(event)).toEqual(event);
    for (const event of [...sampleInteractStream, sampleErrorEvent]) expect(interactEvent.parse(event)).toEqual(event);
  });

  it('keeps the reference field names of a new-message piece', () => {
    // Act
    const parsed = newMessageEvent.parse(sampleCreateConversationStream[2]);

    // Assess
    expect(Object.keys(parsed).sort()).toEqual(
      ['message', 'message_id', 'sequence_number', 'stop', 'transcript_alignment', 'type'].sort(),
    );
  });

  it('rejects an event type that the stream does not carry', () => {
    // Act / Assess
    expect(createConversationEvent.safeParse({ type: 'end-session' }).success).toBe(false);
    expect(interactEvent.safeParse({ type: 'end-session' }).success).toBe(false);
  });
});

describe('queue messages', () => {
  it('accepts the sample analysis, webhook, tool-build and simulation messages', () => {
    // Act / Assess
    expect(analysisQueueMessage.parse(sampleAnalysisMessage)).toEqual(sampleAnalysisMessage);
    expect(webhookQueueMessage.parse(sampleWebhookMessage)).toEqual(sampleWebhookMessage);
    for (const message of sampleWebhookMessages) expect(webhookQueueMessage.parse(message)).toEqual(message);
    expect(toolBuildQueueMessage.parse(sampleToolBuildMessage)).toEqual(sampleToolBuildMessage);
    expect(simulationQueueMessage.parse(sampleSimulationMessage)).toEqual(sampleSimulationMessage);
    expect(simulationQueueMessage.parse(sampleBacktestReplayMessage)).toEqual(sampleBacktestReplayMessage);
  });

  it('derives the same 24-hex event id for the same completion and another for another type', () => {
    // Act
    const first = postProcessingEventId(sampleIds.org, sampleIds.conversation, 'extract-memories');
    const again = postProcessingEventId(sampleIds.org, sampleIds.conversation, 'extract-memories');
    const other = postProcessingEventId(sampleIds.org, sampleIds.conversation, 'generate-user-models');

    // Assess
    expect(first).toMatch(/^[a-f0-9]{24}$/);
    expect(again).toBe(first);
    expect(other).not.toBe(first);
  });
});
