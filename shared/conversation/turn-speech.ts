import type { NewMessageEvent, StreamEvent } from '../../events/stream-events';
import { getAgentVersion } from '../agent/index';
import { BadRequestError, DomainError, UnsupportedMediaTypeError } from '../kernel/errors';
import {
  concatAudio,
  encodeWav,
  isMp3,
  isWav,
  type PcmAudio,
  parseWav,
  pcmBytes,
  pcmFromFrames,
  resample,
  UnsupportedAudioError,
} from '../speech/audio';
import { decodeMp3, encodeMp3 } from '../speech/mp3';
import { type SpeechProvider, SpeechUnavailableError } from '../speech/provider';
import { speechProvider } from '../speech/registry';
import { type SpeechLanguage, speechLanguageOf, type Voice, voiceFor } from '../speech/voices';
import { getUser } from '../user/index';
import type { EngineDependencies } from './engine/contracts';
import { clauseTimer } from './fragment-times';
import { type MessageAudio, storeMessageAudio } from './message-audio';
import type { ConversationRecord, UserMessageAudioConfig } from './schemas';
import type { TurnMeter } from './turn-meter';

/**
 * Voice in and out of a conversation turn, around the text engine: the user's audio becomes
 * the user message (its transcript), and the agent's message pieces become audio pieces as
 * whole sentences arrive. The raw audio of both is kept as the messages' source.
 */

export type ResponseAudioFormat = 'mp3' | 'pcm';

/** Voice output is 16 kHz mono 16-bit: the reference's PCM16, and a rate MP3 can carry. */
export const voiceOutputSampleRate = 16_000;

/**
 * Speech a live session recognized while it was spoken (`voice-session.ts`): the turn takes its
 * transcript as the user message, under the id the session announced, and measures itself from
 * the end of the speech. The session starts the turn when the speech ends, while its last words
 * are decoded: the turn's first reads overlap the decoding, and it waits for the words before it
 * writes anything.
 */
export interface HeardSpeech {
  /** The final words, and how long they took from the end of the speech. */
  recognized: Promise<{ transcript: string; recognitionMs: number }>;
  audio: PcmAudio;
  messageId: string;
  /** When the speech ended (`performance.now()`): the turn's timings start there. */
  endedAt: number;
}

/** What a client asked for in voice: audio to transcribe (or already heard), a voice answer, or both. */
export interface VoiceRequest {
  input?: { body: Buffer; contentType?: string; config?: UserMessageAudioConfig | null };
  heard?: HeardSpeech;
  /** How the conversation speaks and listens, when the caller knows it (a live session read it when it opened): not read again. */
  known?: ConversationVoice;
  /**
   * `silence` stops the answer (a barge-in): nothing more is synthesized, and the model's message
   * ends there (`hushedAnswer`); the message keeps what was written by then.
   */
  output?: { audioFormat: ResponseAudioFormat; silence?: AbortSignal };
}

/** A turn's voice, once checked: the transcript and audio heard, and how to speak the answer. */
export interface VoiceTurn {
  provider: SpeechProvider;
  heard?: { transcript: string; audio: MessageAudio; messageId?: string };
  speaking?: { voice: Voice; language: SpeechLanguage; audioFormat: ResponseAudioFormat; silence?: AbortSignal };
}

/** The voice format's parameter checks, before anything is read: create needs an audio format. */
export const requireAudioFormat = (
  responseFormat: 'text' | 'voice',
  audioFormat: ResponseAudioFormat | null | undefined,
): ResponseAudioFormat | undefined => {
  if (responseFormat === 'text') return undefined;
  if (!audioFormat) throw new BadRequestError('audio_format is required when response_format is voice.');
  return audioFormat;
};

const wavTypes = ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave'];
const mp3Types = ['audio/mpeg', 'audio/mp3', 'audio/mpeg3'];
/** Bodies sent without a meaningful type (the TypeScript SDK's bytes and streams): told by their first bytes. */
const untypedTypes = ['', 'application/octet-stream', 'audio/*'];

const mediaTypeOf = (contentType: string | undefined): string => contentType?.split(';')[0]?.trim().toLowerCase() ?? '';

/** The `recorded_message` file part of a multipart voice body (the Python SDK's form). */
const recordedMessagePart = async (
  body: Buffer,
  contentType: string,
): Promise<{ bytes: Buffer; contentType: string }> => {
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw new BadRequestError(`Malformed multipart body: ${(error as Error).message}`);
  }
  const parts = form.getAll('recorded_message');
  const [part] = parts;
  if (parts.length !== 1 || part === undefined || typeof part === 'string') {
    throw new BadRequestError(
      'A multipart voice message needs exactly one recorded_message file part holding the audio.',
    );
  }
  return { bytes: Buffer.from(await part.arrayBuffer()), contentType: part.type };
};

/**
 * Decodes a voice body to PCM and says what to keep as its source: WAV and MP3 as sent, raw PCM
 * wrapped in a WAV header (the same samples, playable). Anything else is 415.
 */
export const decodeVoiceInput = async (input: NonNullable<VoiceRequest['input']>) => {
  let { body } = input;
  let mediaType = mediaTypeOf(input.contentType);
  if (mediaType.startsWith('multipart/form-data')) {
    const part = await recordedMessagePart(body, input.contentType ?? '');
    body = part.bytes;
    mediaType = mediaTypeOf(part.contentType);
  }
  if (body.length === 0) throw new BadRequestError('The user message is empty: the voice body holds no audio.');
  const wav = wavTypes.includes(mediaType) || (untypedTypes.includes(mediaType) && isWav(body));
  const mp3 = mp3Types.includes(mediaType) || (untypedTypes.includes(mediaType) && isMp3(body));
  const pcm = input.config?.type === 'pcm' ? input.config : undefined;
  try {
    if (wav || (input.config?.type === 'mp3' && isWav(body))) {
      return { audio: parseWav(body), source: { bytes: body, contentType: 'audio/wav' as const } };
    }
    if (mp3 || input.config?.type === 'mp3') {
      return { audio: await decodeMp3(body), source: { bytes: body, contentType: 'audio/mpeg' as const } };
    }
    if (pcm && (untypedTypes.includes(mediaType) || mediaType === 'audio/pcm' || mediaType === 'audio/l16')) {
      const audio = pcmFromFrames(body, { sampleRate: pcm.frame_rate, channels: 1, sampleWidth: pcm.sample_width });
      return { audio, source: { bytes: encodeWav(audio), contentType: 'audio/wav' as const } };
    }
  } catch (error) {
    if (error instanceof UnsupportedAudioError) throw new UnsupportedMediaTypeError(error.message);
    throw error;
  }
  throw new UnsupportedMediaTypeError(
    `Audio of type ${mediaType || 'unknown'} is not supported: send audio/wav (PCM), audio/mpeg, or raw PCM described by request_audio_config.`,
  );
};

/** 503 when the speech server failed (retrying may help); 400 when this deployment cannot do it at all. */
const unavailable = (error: SpeechUnavailableError): DomainError =>
  error.retryable ? new DomainError(503, error.message, { cause: error }) : new BadRequestError(error.message);

export const withSpeechErrors = async <T>(work: () => Promise<T>): Promise<T> => {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SpeechUnavailableError) throw unavailable(error);
    throw error;
  }
};

/**
 * How a conversation speaks and listens: the user's preferred language, else the agent's, its
 * voice, and the user's terms easy to get wrong. 400 when the language has no voice.
 */
export interface ConversationVoice {
  language: SpeechLanguage;
  voice: Voice;
  keyterms: string[];
}

export const conversationVoice = async (conversation: ConversationRecord): Promise<ConversationVoice> => {
  const [agentId, agentVersion] = conversation.version_set_info.agent_version_info;
  const [agent, user] = await Promise.all([
    getAgentVersion(conversation.org_id, agentId, agentVersion),
    getUser(conversation.org_id, conversation.user_id),
  ]);
  const languageCode = user?.preferences.preferred_language ?? agent?.identity.default_spoken_language ?? '';
  const language = speechLanguageOf(languageCode);
  const voice = voiceFor(languageCode, agent?.voice_config?.voice_id);
  if (!language || !voice) {
    throw new BadRequestError(`The language ${languageCode} does not support voice transcription or response.`);
  }
  return { language, voice, keyterms: user?.preferences.audio_keyterms ?? [] };
};

/**
 * Checks a voice request against the conversation's agent and user, transcribes the input (timed
 * by the turn's meter) and
 * settles the voice of the answer. 415 for audio it cannot read; 400 when the language (the
 * user's preferred language, else the agent's) has no voice, or nothing was heard.
 */
export const prepareVoiceTurn = async (
  conversation: ConversationRecord,
  request: VoiceRequest,
  meter: TurnMeter,
): Promise<VoiceTurn> => {
  const decoded = request.input ? await decodeVoiceInput(request.input) : undefined;
  const { language, voice, keyterms } = request.known ?? (await conversationVoice(conversation));
  const provider = await speechProvider();
  const turn: VoiceTurn = {
    provider,
    speaking: request.output
      ? { voice, language, audioFormat: request.output.audioFormat, silence: request.output.silence }
      : undefined,
  };
  if (request.heard) {
    const { transcript, recognitionMs } = await request.heard.recognized;
    meter.recognized(recognitionMs);
    const audio = { bytes: encodeWav(request.heard.audio), contentType: 'audio/wav' as const };
    return { ...turn, heard: { transcript, audio, messageId: request.heard.messageId } };
  }
  if (!decoded) return turn;
  const transcript = await meter.speech('recognition', () =>
    withSpeechErrors(() => provider.transcribe({ audio: decoded.audio, language, keyterms })),
  );
  if (transcript.trim() === '') throw new BadRequestError('The user message is empty: no speech was recognized.');
  return { ...turn, heard: { transcript, audio: decoded.source } };
};

/** Stores the heard audio as the source of the user message it became. */
export const storeHeardAudio = (
  conversation: ConversationRecord,
  messageId: string,
  heard: NonNullable<VoiceTurn['heard']>,
): Promise<void> => storeMessageAudio(conversation, messageId, heard.audio);

/**
 * The engine's dependencies for an answer a barge-in stops (`silence`): the agent's message ends
 * where the user spoke over it. Nobody hears the rest (the truncate cuts the stored message to
 * what was played), and the user's turn, which waits for this one to be stored, comes sooner.
 */
export const hushedAnswer = (deps: EngineDependencies, silence: AbortSignal): EngineDependencies => ({
  ...deps,
  model: (purpose) => {
    const model = deps.model(purpose);
    if (purpose !== 'engage_user') return model;
    const { provider } = model;
    return {
      ...model,
      provider: {
        name: provider.name,
        async *streamText(request) {
          for await (const fragment of provider.streamText(request)) {
            if (silence.aborted) return;
            yield fragment;
          }
        },
        chooseOption: (request) => provider.chooseOption(request),
        callTools: (request) => provider.callTools(request),
        generateObject: (request) => provider.generateObject(request),
      },
    };
  },
});

/** Words the first piece of a message needs before a comma may end it: one or two words sound choppy. */
const firstClauseWords = 3;
const sentenceEnd = /[.!?;:]["')\]]*\s/g;
const clauseEnd = /(?:[.!?;:,]["')\]]*|\s[-\u2013\u2014])\s/g;

/**
 * How much of the text to speak now. The first piece of a message is its first clause (up to a
 * comma, a dash or a sentence end, once it has `firstClauseWords` words): the user hears the
 * answer start as soon as the model has written that much. Later pieces run to the last sentence
 * end, or a space once the text grows long: the audio already playing covers their synthesis,
 * and whole sentences keep eSpeak's intonation.
 */
export const speakableEnd = (text: string, firstPiece: boolean): number => {
  if (firstPiece) {
    for (const clause of text.matchAll(clauseEnd)) {
      const end = clause.index + clause[0].length;
      if (text.slice(0, end).trim().split(/\s+/).length >= firstClauseWords) return end;
    }
  }
  const lastSentence = [...text.matchAll(sentenceEnd)].at(-1);
  if (lastSentence) return lastSentence.index + lastSentence[0].length;
  if (text.length < 160) return 0;
  const lastSpace = text.lastIndexOf(' ');
  return lastSpace > 0 ? lastSpace + 1 : 0;
};

const encodePiece = async (audio: PcmAudio, format: ResponseAudioFormat): Promise<Buffer> =>
  format === 'mp3' ? encodeMp3(audio) : pcmBytes(audio);

/**
 * Turns the engine's text pieces into audio pieces, the first clause first and then whole
 * sentences (each synthesis timed by the turn's meter, and the first audio's moment), and passes
 * every other event through. Once the engine is done, the message's audio is stored as its
 * source (MP3 for an MP3 answer, else WAV), before the turn is committed.
 */
export async function* speakTurn<R>(
  conversation: ConversationRecord,
  engine: AsyncGenerator<StreamEvent, R>,
  voice: VoiceTurn,
  meter: TurnMeter,
): AsyncGenerator<StreamEvent, R> {
  const speaking = voice.speaking;
  if (!speaking) return yield* engine;
  const synthesize = (text: string) =>
    meter.speech('synthesis', () =>
      withSpeechErrors(() => voice.provider.synthesize({ text, voice: speaking.voice, language: speaking.language })),
    );
  let pending = '';
  let sequence = 0;
  const spoken: PcmAudio[] = [];
  const speak = async (text: string, event: NewMessageEvent, stop: boolean): Promise<NewMessageEvent> => {
    const stampClause = clauseTimer();
    const piece = { ...event, stop, sequence_number: sequence };
    sequence += 1;
    // Once the user barged in, the rest of the message is written but not spoken.
    if (text.trim() === '' || speaking.silence?.aborted) return { ...piece, message: '', transcript_alignment: [] };
    meter.firstClause();
    const speech = await synthesize(text);
    const audio = resample(speech.audio, voiceOutputSampleRate);
    spoken.push(audio);
    const bytes = await encodePiece(audio, speaking.audioFormat);
    meter.firstAudio();
    return stampClause({ ...piece, message: bytes.toString('base64'), transcript_alignment: speech.alignment });
  };
  // The reference's fillers are 16 kHz mono 16-bit WAV, whatever the answer's format.
  const spokenFiller = async (text: string): Promise<string> => {
    const speech = await synthesize(text);
    return encodeWav(resample(speech.audio, voiceOutputSampleRate)).toString('base64');
  };
  let messageId: string | undefined;
  let step = await engine.next();
  while (!step.done) {
    const event = step.value;
    if (event.type === 'current-agent-action' && event.action.type === 'action-too-long') {
      yield { ...event, action: { ...event.action, filler: await spokenFiller(event.action.filler) } };
    } else if (event.type !== 'new-message') {
      yield event;
    } else {
      messageId = event.message_id;
      pending += event.message;
      // The first clause, then what is whole after it, each its own piece; the last piece says stop.
      for (;;) {
        const end = speakableEnd(pending, spoken.length === 0);
        if (end === 0 || (end === pending.length && event.stop)) break;
        const text = pending.slice(0, end);
        pending = pending.slice(end);
        yield await speak(text, event, false);
      }
      if (event.stop) {
        const text = pending;
        pending = '';
        yield await speak(text, event, true);
      }
    }
    step = await engine.next();
  }
  if (messageId) {
    const whole = concatAudio(spoken, voiceOutputSampleRate);
    await storeMessageAudio(
      conversation,
      messageId,
      speaking.audioFormat === 'mp3'
        ? { bytes: await encodeMp3(whole), contentType: 'audio/mpeg' }
        : { bytes: encodeWav(whole), contentType: 'audio/wav' },
    );
  }
  return step.value;
}
