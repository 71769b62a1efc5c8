import { z } from 'zod';
import { refused, type VoiceCodec, wireMessage } from '../codec';
import { engineAudio, type ResponseState, type SessionState, type VoiceError, type VoiceEvent } from '../events';

/**
 * The browser's wire: OpenAI Realtime's GA events, the subset served (docs/voice.md), mapped to
 * and from the engine's. The audio is 16 kHz mono PCM16, little-endian, base64 in the JSON.
 */

/** The one audio format of a session, both ways: OpenAI's `audio/pcm`, at the recognizers' 16 kHz. */
export const sessionAudioFormat = { type: 'audio/pcm', rate: engineAudio.sampleRate } as const;

const audioFormat = z.object({ type: z.string().max(32), rate: z.number().optional() });

const clientEventId = z.string().max(128).optional();

const turnDetectionUpdate = z.object({
  type: z.literal('server_vad').default('server_vad'),
  silence_duration_ms: z.number().int().min(100).max(5_000).optional(),
  prefix_padding_ms: z.number().int().min(0).max(1_000).optional(),
});

/** Fields a client may send that this server does not use (instructions, voice, tools...) are ignored. */
const sessionUpdate = z.object({
  type: z.literal('realtime').optional(),
  audio: z
    .object({
      input: z
        .object({ format: audioFormat.optional(), turn_detection: turnDetectionUpdate.nullable().optional() })
        .optional(),
      output: z.object({ format: audioFormat.optional() }).optional(),
    })
    .optional(),
});

const clientEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session.update'), event_id: clientEventId, session: sessionUpdate }),
  z.object({ type: z.literal('input_audio_buffer.append'), event_id: clientEventId, audio: z.string() }),
  z.object({ type: z.literal('input_audio_buffer.commit'), event_id: clientEventId }),
  z.object({
    type: z.literal('conversation.item.truncate'),
    event_id: clientEventId,
    item_id: z.string().min(1).max(128),
    content_index: z.number().int().min(0).default(0),
    audio_end_ms: z.number().int().min(0),
  }),
  z.object({ type: z.literal('response.cancel'), event_id: clientEventId }),
]);

/** The session as `session.created` and `session.updated` describe it. */
interface SessionDescription {
  id: string;
  object: 'realtime.session';
  type: 'realtime';
  /** This platform's: the conversation the session's turns are stored in. */
  conversation_id: string;
  output_modalities: ['audio'];
  audio: {
    input: {
      format: typeof sessionAudioFormat;
      turn_detection: { type: 'server_vad'; silence_duration_ms: number; prefix_padding_ms: number } | null;
    };
    output: { format: typeof sessionAudioFormat; voice: string };
  };
}

interface ResponseDescription {
  id: string;
  object: 'realtime.response';
  status: ResponseState['status'];
  status_details: { type: string; reason?: string } | null;
  output: {
    id: string;
    type: 'message';
    role: 'assistant';
    content: { type: 'output_audio'; transcript: string }[];
  }[];
  usage: { total_tokens: number; input_tokens: number; output_tokens: number } | null;
  /** This platform's: the turn's `timings` as stored (`first_audio_ms` from the end of the speech). */
  timings?: Record<string, unknown>;
}

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

const sessionDescription = (session: SessionState): SessionDescription => ({
  id: `sess_${session.conversationId}`,
  object: 'realtime.session',
  type: 'realtime',
  conversation_id: session.conversationId,
  output_modalities: ['audio'],
  audio: {
    input: {
      format: sessionAudioFormat,
      turn_detection: session.turnDetection && {
        type: 'server_vad',
        silence_duration_ms: session.turnDetection.silenceDurationMs,
        prefix_padding_ms: session.turnDetection.prefixPaddingMs,
      },
    },
    output: { format: sessionAudioFormat, voice: session.voice },
  },
});

const responseDescription = (response: ResponseState): ResponseDescription => ({
  id: response.id,
  object: 'realtime.response',
  status: response.status,
  status_details: response.cancelledBy
    ? { type: 'cancelled', reason: response.cancelledBy === 'client' ? 'client_cancelled' : 'turn_detected' }
    : null,
  output: response.itemId
    ? [
        {
          id: response.itemId,
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_audio', transcript: response.transcript }],
        },
      ]
    : [],
  usage: response.usage
    ? {
        total_tokens: response.usage.input_tokens + response.usage.output_tokens,
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
      }
    : null,
  ...(response.timings ? { timings: response.timings } : {}),
});

/** The wire's event for an engine event, without its `event_id`; undefined when the wire has none for it. */
const wireEvent = (event: VoiceEvent): Record<string, unknown> | undefined => {
  const at = (responseId: string, itemId: string) =>
    ({ response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 }) as const;
  switch (event.type) {
    case 'session-opened':
      return { type: 'session.created', session: sessionDescription(event.session) };
    case 'session-configured':
      return { type: 'session.updated', session: sessionDescription(event.session) };
    case 'speech-started':
      return { type: 'input_audio_buffer.speech_started', audio_start_ms: event.audioStartMs, item_id: event.itemId };
    case 'speech-stopped':
      return { type: 'input_audio_buffer.speech_stopped', audio_end_ms: event.audioEndMs, item_id: event.itemId };
    case 'speech-committed':
      return { type: 'input_audio_buffer.committed', item_id: event.itemId, previous_item_id: null };
    case 'transcript-delta':
      return {
        type: 'conversation.item.input_audio_transcription.delta',
        item_id: event.itemId,
        content_index: 0,
        delta: event.delta,
      };
    case 'transcript-completed':
      return {
        type: 'conversation.item.input_audio_transcription.completed',
        item_id: event.itemId,
        content_index: 0,
        transcript: event.transcript,
      };
    case 'response-started':
      return { type: 'response.created', response: responseDescription(event.response) };
    case 'response-done':
      return { type: 'response.done', response: responseDescription(event.response) };
    case 'response-text':
      return {
        type: 'response.output_audio_transcript.delta',
        ...at(event.responseId, event.itemId),
        delta: event.text,
      };
    case 'response-audio':
      return {
        type: 'response.output_audio.delta',
        ...at(event.responseId, event.itemId),
        delta: event.pcm.toString('base64'),
      };
    case 'response-truncated':
      return {
        type: 'conversation.item.truncated',
        item_id: event.itemId,
        content_index: 0,
        audio_end_ms: event.audioEndMs,
      };
    case 'error':
      return errorEvent(event.error);
    // The browser stops its own playback on `speech_started`; it has no keys to press.
    case 'playback-interrupted':
    case 'dtmf':
      return undefined;
  }
};

const errorEvent = (error: VoiceError) => ({
  type: 'error',
  error: {
    type: error.clientFault ? 'invalid_request_error' : 'server_error',
    code: error.code,
    message: error.message,
    param: error.param ?? null,
    event_id: error.eventId ?? null,
  },
});

/** The codec of one browser socket: it numbers the events it sends (`event_1`, ...). */
export const createRealtimeCodec = (): VoiceCodec => {
  let sequence = 0;
  const frame = (event: Record<string, unknown>) => {
    sequence += 1;
    return JSON.stringify({ ...event, event_id: `event_${sequence}` });
  };
  return {
    opensOn: 'upgrade',
    // Audio before the session exists has no turn to belong to (the opening is being spoken).
    earlyAudioMs: 0,
    reportsPlayback: false,
    decode: (text) => {
      const read = wireMessage(text, clientEvent, (error) =>
        `Not an event this server takes: ${z.prettifyError(error)}`.slice(0, 500),
      );
      if (!('message' in read)) return read;
      const event = read.message;
      switch (event.type) {
        case 'input_audio_buffer.append':
          if (event.audio.length % 4 !== 0 || !base64Pattern.test(event.audio)) {
            return refused('invalid_audio', 'The audio is not base64.', undefined, event.event_id);
          }
          return { type: 'input', input: { type: 'audio', pcm: Buffer.from(event.audio, 'base64') } };
        case 'session.update': {
          const { input, output } = event.session.audio ?? {};
          for (const given of [input?.format, output?.format]) {
            if (
              given &&
              (given.type !== sessionAudioFormat.type ||
                (given.rate ?? sessionAudioFormat.rate) !== sessionAudioFormat.rate)
            ) {
              return refused(
                'unsupported_audio_format',
                `Audio is ${sessionAudioFormat.type} at ${sessionAudioFormat.rate} Hz; ${given.type} at ${given.rate ?? 'its default rate'} is not served.`,
              );
            }
          }
          const detection = input?.turn_detection;
          return {
            type: 'input',
            input: {
              type: 'configure',
              turnDetection:
                detection === null
                  ? null
                  : detection && {
                      silenceDurationMs: detection.silence_duration_ms,
                      prefixPaddingMs: detection.prefix_padding_ms,
                    },
            },
          };
        }
        case 'input_audio_buffer.commit':
          return { type: 'input', input: { type: 'commit' } };
        case 'conversation.item.truncate':
          return { type: 'input', input: { type: 'truncate', itemId: event.item_id, audioEndMs: event.audio_end_ms } };
        case 'response.cancel':
          return { type: 'input', input: { type: 'cancel-response' } };
      }
    },
    encode: (event) => {
      const wire = wireEvent(event);
      return wire ? [frame(wire)] : [];
    },
    refusal: (error) => [frame(errorEvent(error))],
  };
};
