import { durationMs, encodeWav, parseWav } from './audio';
import {
  bufferedTranscription,
  proportionalAlignment,
  type SpeechProvider,
  SpeechUnavailableError,
  type SynthesisRequest,
  type TranscriptionRequest,
} from './provider';

/**
 * An OpenAI-compatible server's `/audio/speech` (asked for WAV) and `/audio/transcriptions`.
 * The speech endpoint gives no timings, so the alignment is spread over the audio.
 */
export interface OpenAiSpeechOptions {
  baseUrl: string;
  apiKey?: string;
  speechModel: string;
  transcriptionModel: string;
}

export const createOpenAiCompatibleSpeech = (options: OpenAiSpeechOptions): SpeechProvider => {
  const url = (path: string) => `${options.baseUrl.replace(/\/+$/, '')}${path}`;
  const authorization: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
  const checked = async (response: Response, what: string): Promise<Response> => {
    if (!response.ok) {
      // The body may echo the request; only the status is kept.
      throw new SpeechUnavailableError(
        `The speech server's ${what} answered ${response.status}.`,
        response.status >= 500 || response.status === 429,
      );
    }
    return response;
  };

  const synthesize = async (request: SynthesisRequest) => {
    const response = await checked(
      await fetch(url('/audio/speech'), {
        method: 'POST',
        headers: { ...authorization, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: options.speechModel,
          voice: request.voice.openai,
          input: request.text,
          response_format: 'wav',
        }),
        signal: request.signal,
      }),
      '/audio/speech',
    );
    const audio = parseWav(Buffer.from(await response.arrayBuffer()));
    return { audio, alignment: proportionalAlignment(request.text, durationMs(audio)) };
  };

  const transcribe = async (request: TranscriptionRequest) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(encodeWav(request.audio))], { type: 'audio/wav' }), 'speech.wav');
    form.append('model', options.transcriptionModel);
    form.append('language', request.language.iso6391);
    form.append('response_format', 'json');
    // Whisper-style servers take a prompt that biases spelling: the keyterms are that prompt.
    if (request.keyterms.length > 0) form.append('prompt', request.keyterms.join(', '));
    const response = await checked(
      await fetch(url('/audio/transcriptions'), {
        method: 'POST',
        headers: authorization,
        body: form,
        signal: request.signal,
      }),
      '/audio/transcriptions',
    );
    const body = (await response.json()) as { text?: unknown };
    return typeof body.text === 'string' ? body.text.trim() : '';
  };

  return {
    name: 'openai',
    synthesize,
    transcribe,
    transcribeStream: (request) => bufferedTranscription(transcribe, request),
  };
};
