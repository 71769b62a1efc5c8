import { browserScript } from './browser-script';
import { resampleToPcm16 } from './pcm-resampler';

/*
 * The few browser APIs the script uses, declared here: the project compiles against Node's
 * types, and the DOM library's globals would clash with them.
 */
interface PageElement {
  className: string;
  textContent: string | null;
  append(child: PageElement): void;
  focus(): void;
}
interface TextField extends PageElement {
  value: string;
  addEventListener(
    type: 'keydown',
    listener: (event: { key: string; shiftKey: boolean; preventDefault(): void }) => void,
  ): void;
}
interface SubmitButton extends PageElement {
  disabled: boolean;
}
interface PageForm extends PageElement {
  action: string;
  dataset: Record<string, string | undefined>;
  addEventListener(type: 'submit', listener: (event: { preventDefault(): void }) => void): void;
  querySelector(selector: 'textarea'): TextField | null;
  querySelector(selector: 'button'): SubmitButton | null;
  querySelector(selector: 'input[name="csrf_token"]'): { value: string } | null;
  requestSubmit(): void;
}
interface FollowedList extends PageElement {
  dataset: Record<string, string | undefined>;
}
declare const document: {
  querySelectorAll(selector: 'form[data-stream]'): Iterable<PageForm>;
  querySelector(selector: 'ol[data-follow]'): FollowedList | null;
  getElementById(id: 'record'): RecordButton | null;
  getElementById(id: 'speak_replies'): Checkbox | null;
  getElementById(id: string): PageElement | null;
  createElement(tag: 'li'): PageElement;
};
interface RecordButton extends SubmitButton {
  hidden: boolean;
  dataset: Record<string, string | undefined>;
  addEventListener(type: 'click', listener: () => void): void;
  closest(selector: 'form'): PageForm;
}
interface Checkbox extends PageElement {
  checked: boolean;
}
interface MicrophoneStream {
  getTracks(): { stop(): void }[];
}
interface AudioGraphNode {
  connect(destination: unknown): void;
  disconnect(): void;
}
interface CaptureNode extends AudioGraphNode {
  onaudioprocess: ((event: { inputBuffer: { getChannelData(channel: number): Float32Array } }) => void) | null;
}
interface PageAudioContext {
  sampleRate: number;
  destination: unknown;
  createMediaStreamSource(stream: MicrophoneStream): AudioGraphNode;
  createScriptProcessor(bufferSize: number, inputs: number, outputs: number): CaptureNode;
  close(): Promise<void>;
}
declare const AudioContext: new () => PageAudioContext;
declare const Audio: new (
  source: string,
) => { play(): Promise<void>; onended: (() => void) | null; onerror: (() => void) | null };
declare const window: {
  location: { assign(url: string): void; reload(): void };
  navigator: { mediaDevices?: { getUserMedia(constraints: { audio: boolean }): Promise<MicrophoneStream> } };
};
declare const FormData: new (form: PageForm) => Iterable<[string, unknown]>;

/**
 * The recording as the app sends it: a WAV file around the resampler's 16 kHz mono PCM16
 * (`resampleToPcm16`). Given to the page script.
 */
export function encodeWav(pcm: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const rate = 16_000;
  const bytes = new Uint8Array(44 + pcm.length);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, text: string) => {
    for (let index = 0; index < text.length; index += 1) view.setUint8(at + index, text.charCodeAt(index));
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + pcm.length, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, pcm.length, true);
  bytes.set(pcm, 44);
  return bytes;
}

/**
 * The app's progressive enhancement, run in the browser. Forms marked `data-stream` (start a
 * conversation, send a message) are posted with fetch and their NDJSON answer is shown as it
 * arrives: the agent's reply grows piece by piece, and a broken stream is resumed where it broke. With "Speak replies" ticked the pieces are
 * MP3, played one after another while their transcripts are shown. The record button captures
 * the microphone (Web Audio) and sends the recording as a voice message. It is plain TypeScript
 * compiled by the platform's esbuild with the handler it ships in, and served as this
 * function's source, so it must not reference anything outside itself and its arguments.
 */
export function enhancePage(wavOf: typeof encodeWav, resample: typeof resampleToPcm16): void {
  const forms = document.querySelectorAll('form[data-stream]');
  for (const form of forms) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const body = new URLSearchParams();
      for (const [name, value] of new FormData(form)) body.append(name, String(value));
      void streamAnswer(form, form.action, { body });
    });
    const field = form.querySelector('textarea');
    // Enter sends, Shift+Enter starts a new line.
    field?.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
  }
  const record = document.getElementById('record');
  const microphone = window.navigator.mediaDevices;
  if (record && microphone) {
    record.hidden = false;
    let stopRecording: (() => Promise<Uint8Array<ArrayBuffer>>) | undefined;
    record.addEventListener('click', async () => {
      if (stopRecording) {
        const stop = stopRecording;
        stopRecording = undefined;
        record.textContent = 'Record';
        const wav = await stop();
        const form = record.closest('form');
        const speak = document.getElementById('speak_replies')?.checked ? '?speak_replies=on' : '';
        void streamAnswer(form, `${record.dataset.voice}${speak}`, {
          body: new Blob([wav], { type: 'audio/wav' }),
          headers: { 'content-type': 'audio/wav', 'x-csrf-token': record.dataset.csrf ?? '' },
        });
        return;
      }
      const stream = await microphone.getUserMedia({ audio: true });
      const context = new AudioContext();
      const source = context.createMediaStreamSource(stream);
      const capture = context.createScriptProcessor(4096, 1, 1);
      const chunks: Float32Array[] = [];
      capture.onaudioprocess = (event) => chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
      source.connect(capture);
      capture.connect(context.destination);
      record.textContent = 'Stop and send';
      stopRecording = async () => {
        source.disconnect();
        capture.disconnect();
        for (const track of stream.getTracks()) track.stop();
        await context.close();
        return wavOf(resample(chunks, context.sampleRate));
      };
    });
  }

  // Whether a turn of this page is streaming: the follower (below) leaves the transcript to it.
  let turnRunning = false;
  let stopFollowing: (() => void) | undefined;
  // The last event the transcript shows, where following resumes.
  let followCursor: string | undefined;
  const followed = document.querySelector('ol[data-follow]');
  if (followed) void follow(followed);

  /**
   * Follows the conversation between the page's own turns (`data-follow`, the app's events
   * endpoint, after `data-after`): an operator's message, or on the operator view the user's
   * turns, appear as they are stored. A stream ends when the conversation is idle (while an
   * operator holds it, it stays open for the next message); the page asks again after
   * `data-interval` ms.
   */
  async function follow(list: FollowedList): Promise<void> {
    const render = renderer(list, false);
    const interval = Number(list.dataset.interval ?? 5000);
    followCursor = list.dataset.after || undefined;
    for (;;) {
      if (!turnRunning && followCursor !== undefined) {
        const controller = new AbortController();
        stopFollowing = () => controller.abort();
        try {
          const response = await fetch(`${list.dataset.follow}?after=${encodeURIComponent(followCursor)}`, {
            credentials: 'same-origin',
            headers: { 'x-csrf-token': list.dataset.csrf ?? '' },
            signal: controller.signal,
          });
          if (response.ok && response.body) {
            await readEvents(response.body, (event) => {
              if (turnRunning) return;
              followCursor = String(event.event_id);
              render(event);
            });
          }
        } catch {
          // Stopped for a turn of the page, or a network error: the next round reads on.
        }
        stopFollowing = undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  }

  /** Shows a turn's events in the transcript: the user's message, and the reply growing piece by piece. */
  function renderer(transcript: PageElement, speak: boolean): (event: Record<string, unknown>) => void {
    let agentBubble: PageElement | undefined;
    return (event) => {
      if (event.type === 'user-message-available') bubble(transcript, 'user', String(event.user_message));
      if (event.type === 'new-message') {
        agentBubble ??= bubble(transcript, 'agent', '');
        const alignment = event.transcript_alignment as [number, string][] | null;
        // A spoken piece is audio; its transcript is the alignment's characters.
        if (alignment && speak) play(String(event.message));
        agentBubble.textContent += alignment
          ? alignment.map(([, character]) => character).join('')
          : String(event.message);
        if (event.stop === true) agentBubble = undefined;
      }
      if (event.type === 'interaction-complete' || event.type === 'error') agentBubble = undefined;
    };
  }

  function bubble(transcript: PageElement, sender: string, text: string): PageElement {
    const item = document.createElement('li');
    item.className = `message ${sender}`;
    item.textContent = text;
    transcript.append(item);
    return item;
  }

  // Spoken pieces play in order, each after the one before.
  let playing = Promise.resolve();
  function play(base64: string): void {
    const bytes = Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
    const url = URL.createObjectURL(new Blob([bytes], { type: 'audio/mpeg' }));
    playing = playing.then(
      () =>
        new Promise<void>((resolve) => {
          const audio = new Audio(url);
          audio.onended = audio.onerror = () => {
            URL.revokeObjectURL(url);
            resolve();
          };
          audio.play().catch(() => audio.onended?.());
        }),
    );
  }

  /**
   * Hands each whole NDJSON line of `body` to `handle`. A line cut off by a broken connection is
   * dropped: the resumed stream sends that event again.
   */
  async function readEvents(body: NonNullable<Response['body']>, handle: (event: Record<string, unknown>) => void) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let pending = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      pending += value;
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line !== '') handle(JSON.parse(line) as Record<string, unknown>);
        newline = pending.indexOf('\n');
      }
    }
  }

  async function refusal(response: Response): Promise<string> {
    const answer = (await response.json().catch(() => ({}))) as { detail?: unknown };
    return typeof answer.detail === 'string' ? answer.detail : `The request failed (${response.status}).`;
  }

  /**
   * Posts the turn and renders its events. A stream that breaks before the turn has ended (a
   * network error, or a body that stops early) is resumed from the conversation's events after
   * the last one handled, so no piece of the reply is lost or shown twice; the turn runs on at
   * the platform meanwhile. Up to `maxReconnects` tries in a row without a new event, waiting
   * twice as long before each.
   */
  async function streamAnswer(
    form: PageForm,
    url: string,
    request: { body: URLSearchParams | Blob; headers?: Record<string, string> },
  ): Promise<void> {
    const maxReconnects = 5;
    const firstReconnectDelayMs = 500;
    const transcript = document.getElementById(form.dataset.stream ?? '') as PageElement;
    const status = document.getElementById('chat-status');
    const button = form.querySelector('button');
    const field = form.querySelector('textarea');
    const csrfToken = form.querySelector('input[name="csrf_token"]')?.value ?? '';
    if (button) button.disabled = true;
    if (status) status.textContent = 'The agent is replying…';
    turnRunning = true;
    stopFollowing?.();
    const render = renderer(transcript, true);
    // The conversation's page: the message form names it, a started conversation announces it.
    let conversationUrl = form.dataset.conversation;
    let created = false;
    let lastEventId: string | undefined;
    let ended = false;
    let completed = false;
    let failure: string | undefined;
    let reconnects = 0;
    const handle = (event: Record<string, unknown>) => {
      lastEventId = String(event.event_id);
      reconnects = 0;
      if (event.type === 'conversation-created') {
        conversationUrl = `${form.dataset.conversations}/${event.conversation_id}`;
        created = true;
      }
      render(event);
      if (event.type === 'interaction-complete') completed = event.conversation_completed === true;
      if (event.type === 'error') failure = String(event.error_description);
      ended ||= event.type === 'interaction-complete' || event.type === 'error';
    };
    let send = () => fetch(url, { method: 'POST', credentials: 'same-origin', ...request });
    for (;;) {
      let broken = 'the reply stopped early';
      try {
        const response = await send();
        // A resume may meet a busy or briefly unreachable platform; anything else is an answer.
        const transient = reconnects > 0 && (response.status === 429 || response.status >= 500);
        if (!response.ok || !response.body) {
          if (!transient) {
            failure = await refusal(response);
            break;
          }
          broken = `the platform answered ${response.status}`;
        } else {
          if (reconnects > 0 && status) status.textContent = 'The agent is replying…';
          await readEvents(response.body, handle);
        }
      } catch (error) {
        broken = (error as Error).message;
      }
      if (ended) break;
      const resumeAfter = lastEventId;
      if (resumeAfter === undefined || conversationUrl === undefined || reconnects === maxReconnects) {
        failure = `The connection failed: ${broken}.`;
        break;
      }
      reconnects += 1;
      if (status) status.textContent = `Connection lost, reconnecting… (try ${reconnects} of ${maxReconnects})`;
      await new Promise((resolve) => setTimeout(resolve, firstReconnectDelayMs * 2 ** (reconnects - 1)));
      const eventsUrl = `${conversationUrl}/events?after=${encodeURIComponent(resumeAfter)}`;
      send = () => fetch(eventsUrl, { credentials: 'same-origin', headers: { 'x-csrf-token': csrfToken } });
    }
    // Following resumes after the turn (ids sort by time).
    if (lastEventId !== undefined && (followCursor === undefined || lastEventId > followCursor)) {
      followCursor = lastEventId;
    }
    turnRunning = false;
    if (status) status.textContent = failure ?? '';
    if (!failure && created && conversationUrl) return window.location.assign(conversationUrl);
    if (!failure && completed) {
      await playing;
      return window.location.reload();
    }
    if (button) button.disabled = false;
    if (field) {
      if (!failure) field.value = '';
      field.focus();
    }
  }
}

/** The script as the browser receives it. */
export const clientScript = browserScript(enhancePage, encodeWav, resampleToPcm16);
