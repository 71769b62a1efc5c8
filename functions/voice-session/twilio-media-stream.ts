import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { z } from 'zod';
import { config } from '#shared/kernel/config';
import { DomainError } from '#shared/kernel/errors';
import type { PhoneNumberRecord } from '#shared/phone-number/index';
import { acceptTwilioMediaStream, callConversationTarget, verifyPhoneCall } from '#shared/phone-number/twilio-calls';
import { pcmBytes, resample } from '#shared/speech/audio';
import { decodeMulaw, encodeMulaw } from '#shared/speech/mulaw';
import { refreshCaller } from '#shared/user/current-caller';
import { type CloseCode, closeCodes, type VoiceSessionEvent } from '#shared/voice/codecs/realtime';
import { openVoiceSession, type VoiceSession } from '#shared/voice/session';
import { maxFrameBytes, type VoiceSessionServer } from './server';
import { meteredSink } from './session-metrics';
import { decodedSegment, refuseUpgrade, refuseUpgradeFor } from './upgrades';

/**
 * The phone transport of the live voice session: Twilio's Media Streams protocol, as Twilio
 * documents it, on `wss://…/v1/{organization}/phone_number/{phone_number_id}/twilio/media-stream`,
 * the URL the voice webhook's TwiML `<Connect><Stream>`s the call to.
 *
 * - The upgrade request must carry Twilio's signature of the URL it opened (`X-Twilio-Signature`,
 *   keyed by the number's auth token), checked as the webhook's; the `start` message must carry
 *   the call token the webhook handed Twilio, for this number and this call.
 * - From Twilio: `connected`, `start`, `media` (μ-law 8 kHz, base64), `mark`, `dtmf` (ignored),
 *   `stop`; to Twilio: `media`, `mark` (after each piece of the agent's audio, so its playback is
 *   known) and `clear` (a barge-in: what Twilio holds unplayed is dropped, and the stored agent
 *   message is cut to what was played).
 * - The call runs on the same engine as the browser socket (`openVoiceSession`), as the caller's
 *   user; `stop` (the caller hung up) finishes the conversation.
 * - Bad input (a frame that is not one of Twilio's messages, audio in another format, a frame
 *   over 64 KB, a message for another stream) closes the socket with 1008 (1009 for size) and a
 *   reason: Twilio's protocol has no error message to send, and the call ends with its stream.
 */

export const twilioMediaStreamPathPattern = /^\/v1\/([^/]+)\/phone_number\/([^/]+)\/twilio\/media-stream\/?$/;

const streamSid = z.string().min(1).max(64);
const twilioMessage = z.discriminatedUnion('event', [
  z.object({ event: z.literal('connected'), protocol: z.string().optional(), version: z.string().optional() }),
  z.object({
    event: z.literal('start'),
    sequenceNumber: z.string().optional(),
    streamSid,
    start: z.object({
      streamSid,
      accountSid: z.string(),
      callSid: z.string(),
      tracks: z.array(z.string()).optional(),
      customParameters: z.record(z.string(), z.string()).optional(),
      mediaFormat: z.object({ encoding: z.string(), sampleRate: z.number(), channels: z.number() }),
    }),
  }),
  z.object({
    event: z.literal('media'),
    sequenceNumber: z.string().optional(),
    streamSid,
    media: z.object({
      track: z.string().optional(),
      chunk: z.string().optional(),
      timestamp: z.string().optional(),
      payload: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
    }),
  }),
  z.object({
    event: z.literal('mark'),
    sequenceNumber: z.string().optional(),
    streamSid,
    mark: z.object({ name: z.string() }),
  }),
  z.object({ event: z.literal('dtmf'), sequenceNumber: z.string().optional(), streamSid, dtmf: z.object({}).loose() }),
  z.object({ event: z.literal('stop'), sequenceNumber: z.string().optional(), streamSid, stop: z.object({}).loose() }),
]);
type TwilioMessage = z.infer<typeof twilioMessage>;

/**
 * Media that arrives while the session opens (Twilio streams from the moment the call connects):
 * the last 2 s of it are heard once the session is open, what came before is dropped.
 */
const maxEarlyFrames = 100;
/** The agent's audio is sent to Twilio in 20 ms frames of μ-law (160 bytes). */
const telephoneFrameBytes = 160;
const telephoneBytesPerMs = 8;

/** The URL Twilio opened, as it signed it: the configured session host, else the request's own (behind a proxy, as it says). */
const addressedSocketUrl = (request: IncomingMessage): string => {
  const path = request.url ?? '/';
  if (config.voiceSessionUrl) return `${config.voiceSessionUrl}${path}`;
  const first = (value: string | string[] | undefined) =>
    String(value ?? '')
      .split(',')[0]
      ?.trim() || undefined;
  const proto = first(request.headers['x-forwarded-proto']);
  const host = first(request.headers['x-forwarded-host']) ?? request.headers.host ?? 'localhost';
  return `${proto === 'https' || proto === 'wss' ? 'wss' : 'ws'}://${host}${path}`;
};

export const createTwilioMediaStreamServer = (options: { log?: (line: string) => void } = {}): VoiceSessionServer => {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, perMessageDeflate: false });

  const accept = async (request: IncomingMessage, socket: Duplex, head: Buffer, orgId: string, numberId: string) => {
    const number = await acceptTwilioMediaStream(orgId, numberId, {
      url: addressedSocketUrl(request),
      signature: String(request.headers['x-twilio-signature'] ?? '') || undefined,
    });
    sockets.handleUpgrade(request, socket, head, (ws) => serve(ws, number));
  };

  const serve = (ws: WebSocket, number: PhoneNumberRecord) => {
    let closing = false;
    let stream: string | undefined;
    let session: VoiceSession | undefined;
    let starting = false;
    const early: Buffer[] = [];
    /** The agent's audio sent and played, per agent message: marks name `<item_id>:<ms sent by then>`. */
    const sentMs = new Map<string, number>();
    const playedMs = new Map<string, number>();
    let speaking: string | undefined;

    const close = (code: CloseCode, reason: string) => {
      if (closing) return;
      closing = true;
      ws.close(code, Buffer.from(reason).subarray(0, 120).toString());
    };
    const sendToTwilio = (message: Record<string, unknown>) => {
      if (ws.readyState === ws.OPEN && stream) ws.send(JSON.stringify({ ...message, streamSid: stream }));
    };
    const speak = (event: Extract<VoiceSessionEvent, { type: 'response.output_audio.delta' }>) => {
      const samples = new Int16Array(event.audio.buffer, event.audio.byteOffset, Math.floor(event.audio.length / 2));
      const mulaw = encodeMulaw({ sampleRate: 16_000, samples: Int16Array.from(samples) });
      for (let offset = 0; offset < mulaw.length; offset += telephoneFrameBytes) {
        sendToTwilio({
          event: 'media',
          media: { payload: mulaw.subarray(offset, offset + telephoneFrameBytes).toString('base64') },
        });
      }
      const total = (sentMs.get(event.item_id) ?? 0) + Math.round(mulaw.length / telephoneBytesPerMs);
      sentMs.set(event.item_id, total);
      speaking = event.item_id;
      sendToTwilio({ event: 'mark', mark: { name: `${event.item_id}:${total}` } });
    };
    /** A barge-in: Twilio drops what it holds unplayed, and the stored message keeps what was played. */
    const bargeIn = () => {
      const itemId = speaking;
      if (!itemId) return;
      speaking = undefined;
      const played = playedMs.get(itemId) ?? 0;
      if (played >= (sentMs.get(itemId) ?? 0)) return;
      sendToTwilio({ event: 'clear' });
      // The marks Twilio sends back for what it dropped are not played audio.
      sentMs.delete(itemId);
      void session?.truncate(itemId, played).catch((error: unknown) => {
        options.log?.(`twilio media stream truncate: ${(error as Error).message}`);
      });
    };
    const sink = meteredSink(
      {
        send: (event) => {
          if (event.type === 'response.output_audio.delta') speak(event);
          else if (event.type === 'input_audio_buffer.speech_started') bargeIn();
        },
        close,
      },
      'twilio',
    );

    const hear = (payload: string) => {
      const pcm = pcmBytes(resample(decodeMulaw(Buffer.from(payload, 'base64')), 16_000));
      if (session) return session.appendAudio(pcm);
      early.push(pcm);
      if (early.length > maxEarlyFrames) early.shift();
    };

    const start = async (message: Extract<TwilioMessage, { event: 'start' }>) => {
      const format = message.start.mediaFormat;
      if (format.encoding !== 'audio/x-mulaw' || format.sampleRate !== 8000 || format.channels !== 1) {
        return close(closeCodes.policy, 'Only μ-law audio at 8 kHz, mono, is taken.');
      }
      if (message.start.accountSid !== number.twilio_account_sid) return close(closeCodes.policy, 'Another account.');
      const call = await verifyPhoneCall(number, {
        callSid: message.start.callSid,
        callToken: message.start.customParameters?.call_token,
      });
      const caller = await refreshCaller({
        homeOrgId: call.orgId,
        orgId: call.orgId,
        userId: call.userId,
        tokenType: 'Bearer',
      });
      if (!caller) return close(closeCodes.policy, 'The caller may no longer call.');
      const opened = await openVoiceSession(call.orgId, caller, await callConversationTarget(call), sink);
      session = opened;
      if (closing) return void opened.close();
      for (const pcm of early.splice(0)) opened.appendAudio(pcm);
    };

    const handle = (message: TwilioMessage) => {
      if (message.event === 'connected') return;
      if (message.event === 'start') {
        if (stream) return close(closeCodes.policy, 'The stream started twice.');
        stream = message.streamSid;
        starting = true;
        start(message).catch((error: unknown) => {
          const status = error instanceof DomainError ? error.statusCode : 500;
          if (status >= 500) options.log?.(`twilio media stream: ${(error as Error).stack ?? String(error)}`);
          close(status >= 500 ? closeCodes.serverError : closeCodes.policy, 'The call could not start.');
        });
        return;
      }
      if (!starting || message.streamSid !== stream) return close(closeCodes.policy, 'A message for another stream.');
      switch (message.event) {
        case 'media':
          if ((message.media.track ?? 'inbound') === 'inbound') hear(message.media.payload);
          return;
        case 'mark': {
          const [itemId, ms] = message.mark.name.split(':');
          if (itemId && sentMs.has(itemId)) playedMs.set(itemId, Number(ms));
          return;
        }
        case 'stop':
          closing = true;
          void (session ? session.hangUp() : Promise.resolve()).finally(() =>
            ws.close(closeCodes.normal, 'Call ended.'),
          );
          return;
        case 'dtmf':
          return;
      }
    };

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (closing) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (bytes.length > maxFrameBytes)
        return close(closeCodes.tooBig, `A frame holds at most ${maxFrameBytes} bytes.`);
      if (isBinary) return close(closeCodes.policy, "Twilio's messages are JSON text frames.");
      let parsed: unknown;
      try {
        parsed = JSON.parse(bytes.toString('utf8'));
      } catch {
        return close(closeCodes.policy, 'The frame is not JSON.');
      }
      const message = twilioMessage.safeParse(parsed);
      if (!message.success) return close(closeCodes.policy, 'Not a Media Streams message.');
      handle(message.data);
    });
    ws.on('error', (error) => options.log?.(`twilio media stream socket: ${error.message}`));
    ws.on('close', () => {
      closing = true;
      void session?.close();
    });
  };

  return {
    handleUpgrade: (request, socket, head, url) => {
      const match = twilioMediaStreamPathPattern.exec(url.pathname);
      if (!match) return false;
      const orgId = decodedSegment(match[1] as string);
      if (orgId === undefined) {
        refuseUpgrade(socket, 400, "The path's percent-encoding is malformed.");
        return true;
      }
      accept(request, socket, head, orgId, match[2] as string).catch((error: unknown) =>
        refuseUpgradeFor(socket, error, options.log),
      );
      return true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of sockets.clients) client.close(closeCodes.normal, 'The server is stopping.');
        sockets.close(() => resolve());
      }),
  };
};
