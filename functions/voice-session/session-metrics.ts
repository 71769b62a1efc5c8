import {
  countBargeIn,
  countVoiceSession,
  recordEndOfSpeechToFirstAudio,
  type VoiceSessionTransport,
} from '#shared/aws/business-metrics';
import type { VoiceSessionSink } from '#shared/voice/session';

/**
 * A transport's sink that also publishes the voice session row of the dashboard, from the events
 * the engine sends whatever the transport: a session per `session.created`, the time from
 * `speech_stopped` to the next answer's first audio, and a barge-in per `speech_started` while an
 * answer is being produced.
 */
export const meteredSink = (sink: VoiceSessionSink, transport: VoiceSessionTransport): VoiceSessionSink => {
  let speechStoppedAt: number | undefined;
  let answering = false;
  return {
    send: (event) => {
      switch (event.type) {
        case 'session.created':
          countVoiceSession(transport);
          break;
        case 'input_audio_buffer.speech_stopped':
          speechStoppedAt = performance.now();
          break;
        case 'input_audio_buffer.speech_started':
          if (answering) countBargeIn(transport);
          break;
        case 'response.created':
          answering = true;
          break;
        case 'response.done':
          answering = false;
          break;
        case 'response.output_audio.delta':
          if (speechStoppedAt !== undefined) {
            recordEndOfSpeechToFirstAudio(performance.now() - speechStoppedAt);
            speechStoppedAt = undefined;
          }
          break;
      }
      sink.send(event);
    },
    close: (code, reason) => sink.close(code, reason),
  };
};
