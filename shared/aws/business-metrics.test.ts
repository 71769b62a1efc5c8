import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { countConversationStarted, countErrorResponse, recordTurnMetrics } from './business-metrics';

type EmfRecord = ReturnType<Metrics['serializeMetrics']>;

/** The EMF records the counts publish, instead of writing them to stdout. */
const capturePublished = (): EmfRecord[] => {
  const published: EmfRecord[] = [];
  vi.spyOn(Metrics.prototype, 'publishStoredMetrics').mockImplementation(function (this: Metrics) {
    published.push(this.serializeMetrics());
    this.clearMetrics();
    this.clearDimensions();
    return this;
  });
  return published;
};

const summary = (record: EmfRecord) => {
  const [directive] = record._aws.CloudWatchMetrics;
  const metricName = directive?.Metrics[0]?.Name ?? '';
  return { metricName, dimensions: directive?.Dimensions[0], value: record[metricName] };
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe('business metrics', () => {
  it('publishes each count at once, as a count of one with the service dimension', () => {
    // Prepare
    const published = capturePublished();

    // Act
    countConversationStarted();

    // Assess
    expect(published.map(summary)).toEqual([{ metricName: 'ConversationsStarted', dimensions: ['service'], value: 1 }]);
  });

  it("publishes a turn's timings, tokens and cost with the service id, leaving out what it did not measure", () => {
    // Prepare
    const published = capturePublished();

    // Act
    recordTurnMetrics('5f0c00000000000000000001', {
      timings: {
        total_ms: 120,
        model_first_token_ms: 8,
        model_total_ms: 40,
        tool_calls: [{ name: 'lookup_order', ms: 30 }],
        speech_synthesis_ms: 25,
        first_audio_ms: 60,
      },
      usage: { model_calls: [], input_tokens: 300, output_tokens: 20, cost_usd: 0 },
    });

    // Assess
    expect(published.map(summary)).toEqual(
      [
        ['TurnTotalMs', 120],
        ['ModelFirstTokenMs', 8],
        ['ModelTotalMs', 40],
        ['ToolCallMs', 30],
        ['SpeechSynthesisMs', 25],
        ['FirstAudioMs', 60],
        ['InputTokens', 300],
        ['OutputTokens', 20],
        ['TurnCost', 0],
      ].map(([metricName, value]) => ({ metricName, dimensions: ['service', 'service_id'], value })),
    );
    expect(published[0]).toMatchObject({ service_id: '5f0c00000000000000000001' });
  });

  it('counts an error response by error class and status', () => {
    // Prepare
    const published = capturePublished();

    // Act
    countErrorResponse('ConflictError', 409);

    // Assess
    expect(published.map(summary)).toEqual([
      { metricName: 'ErrorResponses', dimensions: ['service', 'error', 'status'], value: 1 },
    ]);
    expect(published[0]).toMatchObject({ error: 'ConflictError', status: '409' });
  });

  it('counts 5xx responses on their own as well', () => {
    // Prepare
    const published = capturePublished();

    // Act
    countErrorResponse('TypeError', 500);

    // Assess
    expect(published.map((record) => summary(record).metricName)).toEqual(['ErrorResponses', 'ServerErrorResponses']);
    expect(summary(published[1] as EmfRecord).dimensions).toEqual(['service']);
  });
});
