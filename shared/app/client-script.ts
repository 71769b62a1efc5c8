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
  requestSubmit(): void;
}
declare const document: {
  querySelectorAll(selector: 'form[data-stream]'): Iterable<PageForm>;
  getElementById(id: string): PageElement | null;
  createElement(tag: 'li'): PageElement;
};
declare const window: { location: { assign(url: string): void; reload(): void } };
declare const FormData: new (form: PageForm) => Iterable<[string, unknown]>;

/**
 * The app's progressive enhancement, run in the browser. Forms marked `data-stream` (start a
 * conversation, send a message) are posted with fetch and their NDJSON answer is shown as it
 * arrives: the agent's reply grows piece by piece. It is plain TypeScript compiled by the
 * platform's esbuild with the handler it ships in, and served as this function's source, so it
 * must not reference anything outside itself.
 */
export function enhancePage(): void {
  const forms = document.querySelectorAll('form[data-stream]');
  for (const form of forms) {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void streamForm(form);
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

  function bubble(transcript: PageElement, sender: string, text: string): PageElement {
    const item = document.createElement('li');
    item.className = `message ${sender}`;
    item.textContent = text;
    transcript.append(item);
    return item;
  }

  async function streamForm(form: PageForm): Promise<void> {
    const transcript = document.getElementById(form.dataset.stream ?? '') as PageElement;
    const status = document.getElementById('chat-status');
    const button = form.querySelector('button');
    const field = form.querySelector('textarea');
    const body = new URLSearchParams();
    for (const [name, value] of new FormData(form)) body.append(name, String(value));
    if (button) button.disabled = true;
    if (status) status.textContent = 'The agent is replying…';
    let agentBubble: PageElement | undefined;
    let createdUrl: string | undefined;
    let completed = false;
    let failure: string | undefined;
    const handle = (event: Record<string, unknown>) => {
      if (event.type === 'conversation-created') createdUrl = `${form.dataset.conversations}/${event.conversation_id}`;
      if (event.type === 'user-message-available') bubble(transcript, 'user', String(event.user_message));
      if (event.type === 'new-message') {
        agentBubble ??= bubble(transcript, 'agent', '');
        agentBubble.textContent += String(event.message);
        if (event.stop === true) agentBubble = undefined;
      }
      if (event.type === 'interaction-complete') completed = event.conversation_completed === true;
      if (event.type === 'error') failure = String(event.error_description);
    };
    try {
      const response = await fetch(form.action, { method: 'POST', body, credentials: 'same-origin' });
      if (!response.ok || !response.body) {
        const answer = (await response.json().catch(() => ({}))) as { detail?: unknown };
        failure = typeof answer.detail === 'string' ? answer.detail : `The request failed (${response.status}).`;
      } else {
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let pending = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
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
    } catch (error) {
      failure = `The connection failed: ${(error as Error).message}`;
    }
    if (status) status.textContent = failure ?? '';
    if (!failure && createdUrl) return window.location.assign(createdUrl);
    if (!failure && completed) return window.location.reload();
    if (button) button.disabled = false;
    if (field) {
      if (!failure) field.value = '';
      field.focus();
    }
  }
}

/** The script as the browser receives it. */
export const clientScript = `"use strict";(${enhancePage.toString()})();\n`;
