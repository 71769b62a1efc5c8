import { z } from 'zod';

/**
 * The live voice session's events, in OpenAI Realtime's GA names and shapes for the subset served
 * (docs/voice.md): what a client sends, parsed here, and what the session sends back. The audio is
 * 16 kHz mono PCM16, little-endian, base64 in the JSON.
 */

/** The one audio format of a session, both ways: OpenAI's `audio/pcm`, at the recognizers' 16 kHz. */
export const sessionAudioFormat = { type: 'audio/pcm', rate: 16_000 } as const;

const audioFormat = z.object({ type: z.string().max(32), rate: z.number().optional() });

const clientEventId = z.string().max(128).optional();

const turnDetectionUpdate = z.object({
  type: z.literal('server_vad').default('server_vad'),
  silence_duration_ms: z.number().int().min(100).max(5_000).optional(),
  prefix_padding_ms: z.number().int().min(0).max(1_000).optional(),
});

/** Fields a client may send that this server does not use (instructions, voice, tools...) are ignored. */
export const sessionUpdate = z.object({
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
export type SessionUpdate = z.infer<typeof sessionUpdate>;

export const clientEvent = z.discriminatedUnion('type', [
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
export type ClientEvent = z.infer<typeof clientEvent>;

/** The session as `session.created` and `session.updated` describe it. */
export interface SessionDescription {
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

export interface ResponseDescription {
  id: string;
  object: 'realtime.response';
  status: 'in_progress' | 'completed' | 'cancelled' | 'failed';
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

/** Where an error came from, as OpenAI's `error.type` says. */
export type ErrorType = 'invalid_request_error' | 'server_error';

/**
 * What a session sends, without `event_id` (the transport numbers them). `response.output_audio.delta`
 * carries its audio as PCM (`audio`); the browser protocol sends it base64 as `delta`.
 */
export type VoiceSessionEvent =
  | { type: 'session.created' | 'session.updated'; session: SessionDescription }
  | { type: 'input_audio_buffer.speech_started'; audio_start_ms: number; item_id: string }
  | { type: 'input_audio_buffer.speech_stopped'; audio_end_ms: number; item_id: string }
  | { type: 'input_audio_buffer.committed'; item_id: string; previous_item_id: null }
  | { type: 'conversation.item.input_audio_transcription.delta'; item_id: string; content_index: 0; delta: string }
  | {
      type: 'conversation.item.input_audio_transcription.completed';
      item_id: string;
      content_index: 0;
      transcript: string;
    }
  | { type: 'response.created' | 'response.done'; response: ResponseDescription }
  | {
      type: 'response.output_audio.delta';
      response_id: string;
      item_id: string;
      output_index: 0;
      content_index: 0;
      audio: Buffer;
    }
  | {
      type: 'response.output_audio_transcript.delta';
      response_id: string;
      item_id: string;
      output_index: 0;
      content_index: 0;
      delta: string;
    }
  | { type: 'conversation.item.truncated'; item_id: string; content_index: number; audio_end_ms: number }
  | {
      type: 'error';
      error: { type: ErrorType; code: string; message: string; param: string | null; event_id: string | null };
    };

/** WebSocket close codes the session ends with (RFC 6455 §7.4.1). */
export const closeCodes = {
  normal: 1000,
  /** Bad input: a malformed event, audio in another format, a flood, an idle socket, over quota. */
  policy: 1008,
  tooBig: 1009,
  serverError: 1011,
} as const;
export type CloseCode = (typeof closeCodes)[keyof typeof closeCodes];
