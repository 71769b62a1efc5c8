import { lastEventIdOf } from '../conversation/event-replay';
import { listConversations, listMessages } from '../conversation/queries';
import { defaultMessageTypes } from '../conversation/schemas';
import { config } from '../kernel/config';
import { NotFoundError } from '../kernel/errors';
import { listServices } from '../service/services';
import { requireVisibleUser } from '../user/users';
import { type Html, html } from './html';
import { type AppRequest, layout } from './layout';
import { brandingOf, csrfField, signInPage, when } from './page-parts';
import { talkSessionAddress } from './talk-address';

/**
 * The app's pages for everyone who signs in: the chat, onboarding and preferences. Each reads
 * through the domain functions with the signed-in caller, so a page shows exactly what the API
 * would answer that user, under the same permission checks. The console's pages are in
 * `console-*.ts`.
 */

export const homePage = async (request: AppRequest): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = request.caller;
  const [{ branding }, services, conversations] = await Promise.all([
    brandingOf(request.orgId),
    listServices(request.orgId, caller, { isActive: true, tags: [], sortBy: [], limit: 50, continuationToken: 0 }),
    listConversations(request.orgId, caller, {
      userIds: [caller.userId],
      tags: [],
      sortBy: [],
      limit: 20,
      continuationToken: 0,
    }),
  ]);
  const names = new Map(services.services.map((service) => [service.id, service.name]));
  const { base } = request;
  return layout(
    request,
    branding,
    'Chat',
    html`<section aria-labelledby="start-heading"><h2 id="start-heading">Start a conversation</h2>
${
  services.services.length === 0
    ? html`<p class="muted">No service is open to you yet.</p>`
    : html`<form method="post" action="${base}/conversations" data-stream="transcript" data-conversations="${base}/conversations">${csrfField(request)}
<label for="service_id">Service</label>
<select id="service_id" name="service_id">${services.services.map((service) => html`<option value="${service.id}">${service.name}</option>`)}</select>
<button type="submit">Start</button></form>
<ol id="transcript" class="transcript" aria-live="polite"></ol><p id="chat-status" class="muted" role="status"></p>`
}</section>
<section aria-labelledby="past-heading"><h2 id="past-heading">Your conversations</h2>
${
  conversations.conversations.length === 0
    ? html`<p class="muted">None yet.</p>`
    : html`<ul>${conversations.conversations.map(
        (conversation) =>
          html`<li><a href="${base}/conversations/${conversation.id}">${names.get(conversation.service_id) ?? 'Conversation'}, ${when(conversation.created_at)}</a> <span class="muted">${conversation.is_finished ? 'finished' : 'open'} · ${conversation.num_messages} messages</span></li>`,
      )}</ul>`
}</section>`,
  );
};

export const onboardingPage = async (request: AppRequest): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const { organization, branding } = await brandingOf(request.orgId);
  const pages = organization.onboarding_instructions;
  // The markdown renderer (~95 KiB) serves this page alone: a cold start does not load it.
  const { renderMarkdown } = await import('./markdown');
  return layout(
    request,
    branding,
    'Onboarding',
    pages.length === 0
      ? html`<p class="muted">There are no onboarding pages.</p>`
      : html`${pages.map((source, index) => html`<article class="card" aria-label="Onboarding page ${index + 1}">${renderMarkdown(source)}</article>`)}`,
  );
};

/** How often an open conversation's page asks for messages that came between turns, when the last stream ended (ms). */
export const chatFollowMs = 5_000;

export const conversationPage = async (request: AppRequest, conversationId: string): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = request.caller;
  const [{ branding }, listed, messages, lastEventId] = await Promise.all([
    brandingOf(request.orgId),
    listConversations(request.orgId, caller, {
      ids: [conversationId],
      tags: [],
      sortBy: [],
      limit: 1,
      continuationToken: 0,
    }),
    listMessages(request.orgId, caller, conversationId, {
      messageTypes: defaultMessageTypes,
      sortBy: [{ field: 'created_at', direction: 'asc' }],
      limit: 200,
      continuationToken: 0,
    }),
    lastEventIdOf(request.orgId, conversationId),
  ]);
  const conversation = listed.conversations[0];
  if (!conversation) throw new NotFoundError(`Conversation ${conversationId} does not exist.`);
  const { base } = request;
  const path = `${base}/conversations/${conversation.id}`;
  // An open conversation is followed between turns: an operator's message arrives on its own.
  const follow = conversation.is_finished
    ? ''
    : html` data-follow="${path}/events" data-after="${lastEventId ?? ''}" data-csrf="${request.csrfToken}" data-interval="${chatFollowMs}"`;
  return layout(
    request,
    branding,
    `Conversation of ${when(conversation.created_at)}`,
    html`<ol id="transcript" class="transcript" aria-live="polite"${follow}>${messages.messages.map(
      (message) =>
        html`<li class="message ${message.message_type === 'user-message' ? 'user' : 'agent'}">${message.message}</li>`,
    )}</ol><p id="chat-status" class="muted" role="status"></p>
${
  conversation.is_finished
    ? html`<p class="muted">This conversation is finished.</p>`
    : html`<form method="post" action="${path}/messages" data-stream="transcript" data-conversation="${path}">${csrfField(request)}
<label for="message">Your message</label>
<textarea id="message" name="message" required></textarea>
<label for="speak_replies"><input id="speak_replies" name="speak_replies" type="checkbox" value="on"> Speak replies</label>
<button type="submit">Send</button> <button type="button" id="record" data-voice="${path}/voice-messages" data-csrf="${request.csrfToken}" hidden>Record</button>
${talkButton(request, path, conversation.id)}</form>
<form method="post" action="${path}/finish">${csrfField(request)}<button type="submit">Finish the conversation</button></form>`
}${request.consoleAllowed ? html`<p><a href="${base}/console/conversations/${conversation.id}">This conversation in the console</a></p>` : ''}`,
  );
};

/** The talk mode's button, where the deployment serves live voice sessions (`talk-address.ts`). */
const talkButton = (request: AppRequest, path: string, conversationId: string): Html | string => {
  const session = talkSessionAddress(config.voiceSessionUrl, request.orgId, conversationId);
  if (session === undefined) return '';
  return html` <button type="button" id="talk" data-talk="${path}/talk-token" data-csrf="${request.csrfToken}" data-session="${session}" aria-pressed="false" hidden>Talk</button>`;
};

export const preferencesPage = async (request: AppRequest, notice?: string): Promise<Html> => {
  if (!request.caller) return signInPage(request);
  const caller = request.caller;
  const [{ branding }, user] = await Promise.all([
    brandingOf(request.orgId),
    requireVisibleUser(request.orgId, caller, caller.userId, 'User:GetUserInfo'),
  ]);
  const preferences = user.preferences;
  return layout(
    request,
    branding,
    'Preferences',
    html`${notice ? html`<p role="status">${notice}</p>` : ''}<form method="post" action="${request.base}/preferences">${csrfField(request)}
<label for="preferred_language">Preferred language (ISO 639-3, e.g. eng)</label>
<input id="preferred_language" name="preferred_language" value="${preferences?.preferred_language ?? ''}" pattern="[a-z]{3}">
<label for="timezone">Time zone (IANA, e.g. Europe/Paris)</label>
<input id="timezone" name="timezone" value="${preferences?.timezone ?? ''}">
<label for="enable_response_recommendation"><input id="enable_response_recommendation" name="enable_response_recommendation" type="checkbox" value="on"${preferences?.enable_response_recommendation ? ' checked' : ''}> Suggest responses I could send</label>
<button type="submit">Save</button></form>`,
  );
};

/** A short page for redirects (303), for clients that show the body. */
export const redirectPage = (location: string): Html =>
  html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Redirecting</title></head><body><p><a href="${location}">Continue</a></p></body></html>`;
