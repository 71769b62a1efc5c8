import { browserScript } from './browser-script';
import { resampleToPcm16 } from './pcm-resampler';

/*
 * The few browser APIs the talk mode uses, declared here: the project compiles against Node's
 * types, and the DOM library's globals would clash with them.
 */
interface TalkElement {
  className: string;
  textContent: string | null;
  hidden: boolean;
  dataset: Record<string, string | undefined>;
  append(child: TalkElement): void;
  setAttribute(name: string, value: string): void;
  addEventListener(type: 'click', listener: () => void): void;
}
interface TalkAudioBuffer {
  getChannelData(channel: number): Float32Array;
}
interface TalkSource {
  buffer: TalkAudioBuffer | null;
  onended: (() => void) | null;
  connect(destination: unknown): void;
  start(when: number): void;
  stop(): void;
}
interface TalkCapture {
  onaudioprocess: ((event: { inputBuffer: { getChannelData(channel: number): Float32Array } }) => void) | null;
  connect(destination: unknown): void;
  disconnect(): void;
}
interface TalkAudioContext {
  sampleRate: number;
  currentTime: number;
  destination: unknown;
  createMediaStreamSource(stream: unknown): { connect(destination: unknown): void; disconnect(): void };
  createScriptProcessor(bufferSize: number, inputs: number, outputs: number): TalkCapture;
  createBuffer(channels: number, length: number, sampleRate: number): TalkAudioBuffer;
  createBufferSource(): TalkSource;
  close(): Promise<void>;
}
interface TalkSocket {
  readyState: number;
  onmessage: ((event: { data: string }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onopen: (() => void) | null;
  send(data: string): void;
  close(): void;
}
declare const document: {
  getElementById(id: string): TalkElement | null;
  createElement(tag: 'li'): TalkElement;
};
declare const window: {
  location: { protocol: string; host: string };
  navigator: {
    mediaDevices?: {
      getUserMedia(constraints: {
        audio: { echoCancellation: boolean; noiseSuppression: boolean; channelCount: number };
      }): Promise<{ getTracks(): { stop(): void }[] }>;
    };
  };
};
declare const AudioContext: new () => TalkAudioContext;
declare const WebSocket: (new (url: string, protocols: string[]) => TalkSocket) | undefined;
declare const atob: (data: string) => string;
declare const btoa: (data: string) => string;

/**
 * The chat page's talk mode: a live voice session over the platform's socket (docs/voice.md).
 * The microphone (`getUserMedia`, echo cancellation on) is resampled to 16 kHz PCM16 (`resample`) and streamed
 * as `input_audio_buffer.append`; the agent's audio deltas are played as they come, one after
 * another; when the platform hears the user start speaking (`speech_started`) while a reply plays,
 * the playback stops and the page tells how much of the reply was heard
 * (`conversation.item.truncate`). Transcripts appear in the chat as bubbles. Like the page script,
 * it is served as its own source, so it references nothing outside itself.
 */
export function talkMode(resample: typeof resampleToPcm16): void {
  const button = document.getElementById('talk');
  const microphone = window.navigator.mediaDevices;
  if (!button || !microphone || typeof WebSocket === 'undefined') return;
  button.hidden = false;
  const transcript = document.getElementById('transcript');
  const status = document.getElementById('chat-status');
  const say = (text: string) => {
    if (status) status.textContent = text;
  };
  const bubble = (sender: 'user' | 'agent', text: string): TalkElement => {
    const item = document.createElement('li');
    item.className = `message ${sender}`;
    item.textContent = text;
    transcript?.append(item);
    return item;
  };
  let stop: (() => void) | undefined;

  button.addEventListener('click', async () => {
    if (stop) return stop();
    button.textContent = 'Stop talking';
    button.setAttribute('aria-pressed', 'true');
    say('Connecting…');
    const granted = await fetch(button.dataset.talk ?? '', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'x-csrf-token': button.dataset.csrf ?? '' },
    });
    if (!granted.ok) {
      say(`Talking is not available (${granted.status}).`);
      button.textContent = 'Talk';
      button.setAttribute('aria-pressed', 'false');
      return;
    }
    const { access_token: token } = (await granted.json()) as { access_token: string };
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    const Socket = WebSocket as new (url: string, protocols: string[]) => TalkSocket;
    // The sessions' own host in AWS, this page's host under npm start.
    const address = new URL(button.dataset.session ?? '', `${scheme}://${window.location.host}`);
    const socket = new Socket(address.toString(), ['auth', token]);
    const stream = await microphone.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, channelCount: 1 },
    });
    const context = new AudioContext();
    const source = context.createMediaStreamSource(stream);
    const capture = context.createScriptProcessor(2048, 1, 1);
    const rate = 16_000;

    /** What plays: the sources scheduled, and where the current reply's audio started. */
    let playing: TalkSource[] = [];
    let playUntil = 0;
    let reply: { itemId: string; startedAt: number; bubble?: TalkElement } | undefined;
    const stopPlayback = () => {
      for (const scheduled of playing) scheduled.stop();
      playing = [];
      playUntil = 0;
    };

    capture.onaudioprocess = (event) => {
      if (socket.readyState !== 1) return;
      const bytes = resample([event.inputBuffer.getChannelData(0)], context.sampleRate);
      let binary = '';
      for (const byte of bytes) binary += String.fromCharCode(byte);
      socket.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: btoa(binary) }));
    };
    source.connect(capture);
    capture.connect(context.destination);

    const play = (base64: string) => {
      const binary = atob(base64);
      const samples = binary.length >> 1;
      if (samples === 0) return;
      const buffer = context.createBuffer(1, samples, rate);
      const channel = buffer.getChannelData(0);
      for (let index = 0; index < samples; index += 1) {
        const value = binary.charCodeAt(index * 2) | (binary.charCodeAt(index * 2 + 1) << 8);
        channel[index] = (value >= 0x8000 ? value - 0x10000 : value) / 0x8000;
      }
      const node = context.createBufferSource();
      node.buffer = buffer;
      node.connect(context.destination);
      const at = Math.max(context.currentTime, playUntil);
      node.start(at);
      playUntil = at + samples / rate;
      playing.push(node);
      node.onended = () => {
        playing = playing.filter((candidate) => candidate !== node);
      };
    };

    socket.onopen = () => say('Listening… speak when you are ready.');
    socket.onmessage = (message) => {
      const event = JSON.parse(message.data) as Record<string, unknown> & { type: string };
      if (event.type === 'input_audio_buffer.speech_started') {
        // The user speaks over the reply: stop it, and say how much of it was heard.
        if (reply && playing.length > 0) {
          const heardMs = Math.max(0, Math.round((context.currentTime - reply.startedAt) * 1000));
          socket.send(
            JSON.stringify({
              type: 'conversation.item.truncate',
              item_id: reply.itemId,
              content_index: 0,
              audio_end_ms: heardMs,
            }),
          );
        }
        stopPlayback();
        say('Listening…');
      } else if (event.type === 'conversation.item.input_audio_transcription.completed' && event.transcript) {
        bubble('user', String(event.transcript));
      } else if (event.type === 'response.output_audio_transcript.delta') {
        if (!reply || reply.itemId !== event.item_id) {
          reply = { itemId: String(event.item_id), startedAt: Math.max(context.currentTime, playUntil) };
        }
        reply.bubble ??= bubble('agent', '');
        reply.bubble.textContent = `${reply.bubble.textContent ?? ''}${String(event.delta)}`;
      } else if (event.type === 'response.output_audio.delta') {
        play(String(event.delta));
      } else if (event.type === 'error') {
        say(String((event.error as { message?: string }).message ?? 'The voice session failed.'));
      }
    };

    stop = () => {
      stop = undefined;
      stopPlayback();
      socket.close();
      capture.disconnect();
      source.disconnect();
      for (const track of stream.getTracks()) track.stop();
      void context.close();
      button.textContent = 'Talk';
      button.setAttribute('aria-pressed', 'false');
    };
    socket.onclose = (event) => {
      if (event.code !== 1000 && event.code !== 1005) say(`The voice session ended: ${event.reason || event.code}.`);
      stop?.();
    };
  });
}

/** The talk mode as the browser receives it, after the page script. */
export const talkScript = browserScript(talkMode, resampleToPcm16);
