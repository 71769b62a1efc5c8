import type { PollyClient } from '@aws-sdk/client-polly';
import type { TranscribeStreamingClient } from '@aws-sdk/client-transcribe-streaming';
import { describe, expect, it } from 'vitest';
import { createAwsSpeech, pollySampleRate } from './aws';
import { knownVoices, speechLanguageOf } from './voices';

/** The thin Polly and Transcribe adapter, against clients that record what they were sent. */
const voice = knownVoices[0];
const language = speechLanguageOf('eng');
if (!voice || !language) throw new Error('the catalogue lost its English voice');

interface Sent {
  input: Record<string, unknown>;
}

const pollyAnswering = (pcm: Buffer) => {
  const sent: Sent[] = [];
  const client = {
    send: async (command: Sent) => {
      sent.push(command);
      return { AudioStream: { transformToByteArray: async () => new Uint8Array(pcm) } };
    },
  } as unknown as Pick<PollyClient, 'send'>;
  return { sent, client };
};

const transcribeAnswering = (events: unknown[]) => {
  const sent: Sent[] = [];
  const streamed: Buffer[] = [];
  const client = {
    send: async (command: Sent) => {
      sent.push(command);
      // The service reads the whole audio stream before its last results, as it does.
      for await (const event of command.input.AudioStream as AsyncIterable<{
        AudioEvent: { AudioChunk: Uint8Array };
      }>) {
        streamed.push(Buffer.from(event.AudioEvent.AudioChunk));
      }
      return {
        TranscriptResultStream: (async function* () {
          yield* events;
        })(),
      };
    },
  } as unknown as Pick<TranscribeStreamingClient, 'send'>;
  return { sent, streamed, client };
};

const result = (transcript: string, isPartial: boolean) => ({
  TranscriptEvent: { Transcript: { Results: [{ IsPartial: isPartial, Alternatives: [{ Transcript: transcript }] }] } },
});

describe('createAwsSpeech', () => {
  it('synthesizes a piece with one neural PCM request and aligns the text over its audio', async () => {
    // Prepare
    const halfSecond = Buffer.alloc(pollySampleRate);
    const polly = pollyAnswering(halfSecond);
    const speech = createAwsSpeech({ polly: polly.client });

    // Act
    const spoken = await speech.synthesize({ text: 'Hi there,', voice, language });

    // Assess
    expect(polly.sent).toHaveLength(1);
    expect(polly.sent[0]?.input).toEqual({
      Text: 'Hi there,',
      VoiceId: voice.polly,
      LanguageCode: 'en-US',
      Engine: 'neural',
      OutputFormat: 'pcm',
      SampleRate: '16000',
    });
    expect(spoken.audio).toEqual({ sampleRate: 16_000, samples: new Int16Array(8_000) });
    expect(spoken.alignment.map(([, character]) => character).join('')).toBe('Hi there,');
    expect(spoken.alignment.at(-1)?.[0]).toBeLessThan(500);
  });

  it('asks for the standard engine when SPEECH_POLLY_ENGINE says so', async () => {
    // Prepare
    const polly = pollyAnswering(Buffer.alloc(pollySampleRate));
    const speech = createAwsSpeech({ polly: polly.client, engine: 'standard' });

    // Act
    await speech.synthesize({ text: 'Hi there,', voice, language });

    // Assess
    expect(polly.sent[0]?.input).toMatchObject({ Engine: 'standard' });
  });

  it('streams the whole utterance with stabilized partial results and keeps only the final results', async () => {
    // Prepare
    const transcribe = transcribeAnswering([
      result('I would', true),
      result('I would like a pizza', false),
      result('please', true),
      result('please', false),
    ]);
    const speech = createAwsSpeech({ transcribe: transcribe.client });
    const oneSecond = { sampleRate: 16_000, samples: new Int16Array(16_000).fill(7) };

    // Act
    const heard = await speech.transcribe({ audio: oneSecond, language, keyterms: [] });

    // Assess
    expect(heard).toBe('I would like a pizza please');
    expect(transcribe.sent[0]?.input).toMatchObject({
      LanguageCode: 'en-US',
      MediaEncoding: 'pcm',
      MediaSampleRateHertz: 16_000,
      EnablePartialResultsStabilization: true,
      PartialResultsStability: 'high',
    });
    // 100 ms events, the whole second of audio.
    expect(transcribe.streamed.map((chunk) => chunk.length)).toEqual(new Array(10).fill(3_200));
  });
});
