import {
  countBargeIn,
  countVoiceSession,
  recordEndOfSpeechToFirstAudio,
  type VoiceSessionTransport,
} from '#shared/aws/business-metrics';
import type { VoiceTap } from '#shared/voice/events';

/**
 * The voice session row of the dashboard, as a tap on the engine's events, whatever the
 * transport: a session per `session-opened`, the time from the end of speech to the next answer's
 * first audio, and a barge-in per `speech-started` over a response.
 */
export const metricsTap = (transport: VoiceSessionTransport): VoiceTap => {
  let speechEndedAt: number | undefined;
  return {
    told: (event) => {
      switch (event.type) {
        case 'session-opened':
          countVoiceSession(transport);
          break;
        case 'speech-stopped':
        case 'speech-committed':
          speechEndedAt = performance.now();
          break;
        case 'speech-started':
          if (event.bargeIn) countBargeIn(transport);
          break;
        case 'response-audio':
          if (speechEndedAt !== undefined) {
            recordEndOfSpeechToFirstAudio(performance.now() - speechEndedAt);
            speechEndedAt = undefined;
          }
          break;
      }
    },
  };
};
