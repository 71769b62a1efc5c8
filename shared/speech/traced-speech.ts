import { genAi, platformAttributes } from '../telemetry/gen-ai';
import { captureMessageContent, inSpan, type SpanAttributes, startSpan, tracingOn } from '../telemetry/tracing';
import type { PcmAudio } from './audio';
import { type SpeechProvider, streamingSampleRate, type TranscriptionStream } from './provider';

/** Each adapter's `gen_ai.provider.name`. */
const conventionNames: Record<string, string> = { aws: 'aws', openai: 'openai', builtin: 'builtin' };

const audioMs = (audio: PcmAudio): number => Math.round((audio.samples.length / audio.sampleRate) * 1000);

/**
 * `provider` with the speech stages of voice turns as spans: `speech_synthesis {provider}` for
 * each piece spoken, `speech_recognition {provider}` for each utterance transcribed (whole, or
 * streamed from its first audio to its end). They carry the voice, the language and how much was
 * said, and the words only where the deployment captures message content. Off, the provider
 * itself.
 */
export const tracedSpeech = (provider: SpeechProvider): SpeechProvider => {
  if (!tracingOn) return provider;
  const providerName = conventionNames[provider.name] ?? provider.name;
  const stage = (operation: 'speech_synthesis' | 'speech_recognition', attributes: SpanAttributes) => ({
    kind: 'client' as const,
    attributes: { [genAi.operationName]: operation, [genAi.providerName]: providerName, ...attributes },
  });
  const recognized = (words: string): SpanAttributes =>
    captureMessageContent ? { [platformAttributes.speechText]: words } : {};

  return {
    name: provider.name,
    synthesize: (request) =>
      inSpan(
        `speech_synthesis ${provider.name}`,
        stage('speech_synthesis', {
          [platformAttributes.speechVoice]: request.voice.name,
          [platformAttributes.speechLanguage]: request.language.locale,
          [platformAttributes.speechCharacters]: request.text.length,
          ...recognized(request.text),
        }),
        async (span) => {
          const speech = await provider.synthesize(request);
          span.set({ [platformAttributes.speechAudioMs]: audioMs(speech.audio) });
          return speech;
        },
      ),
    transcribe: (request) =>
      inSpan(
        `speech_recognition ${provider.name}`,
        stage('speech_recognition', {
          [platformAttributes.speechLanguage]: request.language.locale,
          [platformAttributes.speechAudioMs]: audioMs(request.audio),
        }),
        async (span) => {
          const words = await provider.transcribe(request);
          span.set({ [platformAttributes.speechCharacters]: words.length, ...recognized(words) });
          return words;
        },
      ),
    transcribeStream: (request): TranscriptionStream => {
      const span = startSpan(
        `speech_recognition ${provider.name}`,
        stage('speech_recognition', { [platformAttributes.speechLanguage]: request.language.locale }),
      );
      const stream = span.run(() => provider.transcribeStream(request));
      let bytes = 0;
      return {
        write: (pcm) => {
          bytes += pcm.length;
          stream.write(pcm);
        },
        finish: async () => {
          // Mono 16-bit PCM: two bytes a sample.
          span.set({ [platformAttributes.speechAudioMs]: Math.round((bytes / 2 / streamingSampleRate) * 1000) });
          try {
            const words = await span.run(() => stream.finish());
            span.set({ [platformAttributes.speechCharacters]: words.length, ...recognized(words) });
            span.end();
            return words;
          } catch (error) {
            span.end(error);
            throw error;
          }
        },
        cancel: () => {
          stream.cancel();
          span.end();
        },
      };
    },
    ...(provider.prepareStream ? { prepareStream: () => provider.prepareStream?.() } : {}),
    ...(provider.reserveStream ? { reserveStream: () => provider.reserveStream?.() ?? (() => undefined) } : {}),
  };
};
